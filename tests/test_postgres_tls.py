"""A team's PostgreSQL store as libpq reaches it (issue 21): TLS with sslmode, a service file
and a password file, a role that owns its database and is no superuser.

The server (tests/pg_server.py) has a self-signed certificate for localhost, and its
pg_hba.conf turns away the team role's connections without TLS, so every answer here came
through an encrypted connection.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURE_RESULTS, cli, pg_binaries
from pg_server import PgServer, has_tls

from rf_log_listener.postgres import connect

ROLE, PASSWORD, DATABASE = "team", "T3am-tls-s3cret", "teamstore"

SUITE = """*** Test Cases ***
Passes
    Log    uploaded over TLS
Fails
    Fail    expected failure over TLS
"""


@pytest.fixture(scope="module")
def tls_server() -> Iterator[PgServer]:
    bindir = pg_binaries()
    if not has_tls(bindir):
        pytest.skip(f"the PostgreSQL server in {bindir} was built without TLS")
    server = PgServer(bindir, tls=True,
                      hba=(f"hostnossl all {ROLE} all reject",)).start()
    # the team's role owns its database and is no superuser: it sets the store up itself
    server.admin("postgres", f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'",
                 f"CREATE DATABASE {DATABASE} OWNER {ROLE}")
    yield server
    server.stop()


def _url(server: PgServer, sslmode: str, rootcert: Path | None = None) -> str:
    url = f"postgresql://{ROLE}:{PASSWORD}@localhost:{server.port}/{DATABASE}?sslmode={sslmode}"
    return url + (f"&sslrootcert={rootcert}" if rootcert else "")


def _failure(*args: str, env: dict[str, str] | None = None) -> str:
    done = cli(*args, env=env)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "STORE_UNAVAILABLE" in output, output
    assert PASSWORD not in output
    return output


def test_sslmode_works_as_libpq_defines_it(tls_server: PgServer, tmp_path: Path) -> None:
    verified = _url(tls_server, "verify-full", tls_server.certificate)
    done = cli("--db", verified, "import", "--json", str(FIXTURE_RESULTS / "7.5" / "output.xml"))
    assert '"ok": true' in done.stdout, done.stdout + done.stderr
    summary = cli("--db", verified, "summary", "latest")
    assert "25 tests: 12 passed, 11 failed" in summary.stdout, summary.stderr
    assert PASSWORD not in summary.stdout + summary.stderr + done.stdout + done.stderr
    conn = connect(verified)  # the store's own connection is encrypted
    assert conn.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone() == (True,)
    conn.close()
    # sslmode=require encrypts without checking the certificate
    assert "complete" in cli("--db", _url(tls_server, "require"), "runs").stdout
    # without TLS the server turns the role away; libpq's reason is shown, the password not
    refused = _failure("--db", _url(tls_server, "disable"), "runs")
    assert "no encryption" in refused
    # verify-full against another authority: libpq refuses the server's certificate
    other = tmp_path / "other.crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-keyout", str(tmp_path / "other.key"),
                    "-out", str(other)], capture_output=True, check=True, timeout=60)
    assert "certificate verify failed" in _failure("--db", _url(tls_server, "verify-full", other),
                                                   "runs")


def test_a_service_file_and_a_password_file_name_the_store(tls_server: PgServer,
                                                            tmp_path: Path) -> None:
    """What a CI agent is given: a service name, with the host, the database, the role and
    TLS in a service file and the password in a password file; no secret on any command line."""
    services = tmp_path / "pg_service.conf"
    services.write_text(f"[rflog-team]\nhost=localhost\nport={tls_server.port}\n"
                        f"dbname={DATABASE}\nuser={ROLE}\nsslmode=verify-full\n"
                        f"sslrootcert={tls_server.certificate}\n")
    passwords = tmp_path / "pgpass"
    passwords.write_text(f"localhost:{tls_server.port}:{DATABASE}:{ROLE}:{PASSWORD}\n")
    passwords.chmod(0o600)  # libpq ignores a password file others can read
    env = {"PGSERVICEFILE": str(services), "PGPASSFILE": str(passwords)}
    store = "postgresql:///?service=rflog-team"
    suite = tmp_path / "team.robot"
    suite.write_text(SUITE)
    robot = subprocess.run(
        [sys.executable, "-m", "robot", "--output", str(tmp_path / "output.xml"), "--log", "NONE",
         "--report", "NONE", "--listener", f"rf_log_listener;db={store};label=agent", str(suite)],
        capture_output=True, text=True, env={**os.environ, **env}, timeout=300, check=False)
    assert robot.returncode == 1, robot.stdout + robot.stderr  # one test fails
    assert "rf_log_listener" not in robot.stderr, robot.stderr
    runs = cli("--db", store, "runs", env=env)
    assert "agent" in runs.stdout and "complete" in runs.stdout, runs.stdout + runs.stderr
    summary = cli("--db", store, "summary", "latest", env=env)
    assert "2 tests: 1 passed, 1 failed" in summary.stdout, summary.stdout + summary.stderr
    assert "expected failure over TLS" in summary.stdout
    assert "uploaded over TLS" in cli("--db", store, "search", "latest", "over TLS", env=env).stdout
    doctor = cli("--db", store, "doctor", env=env)
    assert "service=rflog-team" in doctor.stdout and PASSWORD not in doctor.stdout + doctor.stderr
    # the same service without the password file: libpq says what is missing
    assert "password" in _failure("--db", store, "runs", env={"PGSERVICEFILE": str(services),
                                                              "PGPASSFILE": str(tmp_path / "none")})
