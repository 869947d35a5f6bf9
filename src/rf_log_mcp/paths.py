"""Which files the MCP server may read (read side, before any file is opened).

A model chooses the paths it passes to ``parse_result`` (and ``path=`` of the other tools),
so the server reads only below allowed folders:

* ``RF_LOG_MCP_ALLOWED_ROOTS`` (folders separated by ``os.pathsep``), when the operator sets it;
* otherwise the server's working directory and the folders of result files the store
  already knows (outputs robot wrote during live runs, files imported before); a folder that
  is the filesystem root or the home folder itself (where MCP hosts often start servers, and
  robot writes when run from ``~``) is never a root: in it, only the result files the store
  knows are readable.

Paths are resolved first (``..``, symlinks), so a link inside an allowed folder cannot lead
out of it. The command line is not restricted: the person typing chooses the path; but a
message's link (an attachment) is no path anybody chose: ``attachment_allowed``.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import NamedTuple

from rf_log_listener.errors import FILE_NOT_FOUND, ResultError
from rf_log_listener.store import stored_text

ENV_ALLOWED = "RF_LOG_MCP_ALLOWED_ROOTS"
PATH_NOT_ALLOWED = "PATH_NOT_ALLOWED"


class PathPolicy(NamedTuple):
    """Allowed root folders; ``known_runs`` adds the folders of the store's result files."""

    roots: tuple[Path, ...]
    known_runs: bool

    @classmethod
    def from_environment(cls, cwd: Path | None = None) -> PathPolicy:
        configured = os.environ.get(ENV_ALLOWED, "").strip()
        if configured:
            return cls(tuple(Path(p).expanduser().resolve() for p in configured.split(os.pathsep)
                             if p.strip()), known_runs=False)
        here = (cwd or Path.cwd()).resolve()
        return cls(() if _too_wide(here) else (here,), known_runs=True)

    def check(self, conn: sqlite3.Connection, path: str) -> None:
        """Raise PATH_NOT_ALLOWED unless ``path`` (resolved) is below an allowed folder."""
        try:
            target = Path(path).expanduser().resolve()
        except (OSError, RuntimeError):  # a symlink loop: not readable anyway
            target = Path(os.path.abspath(path))
        except ValueError:  # NUL in the path
            raise ResultError(FILE_NOT_FOUND, f"{path!r} is not a valid path.") from None
        if any(target.is_relative_to(root) for root in self._roots(conn)) or (
                self.known_runs and conn.execute("SELECT 1 FROM runs WHERE source_path = ?",
                                                 (stored_text(str(target)),)).fetchone()):
            return
        raise ResultError(
            PATH_NOT_ALLOWED,
            f"{target} is outside the folders this server may read.",
            f"The operator can allow its folder with {ENV_ALLOWED} (folders separated by "
            f"{os.pathsep!r}) in the MCP server's configuration; by default the server reads "
            "below its working directory and the folders of runs already in the store.",
        )

    def _roots(self, conn: sqlite3.Connection) -> list[Path]:
        roots = list(self.roots)
        if self.known_runs:
            known = [Path(p).parent for (p,) in conn.execute(
                "SELECT DISTINCT source_path FROM runs WHERE source_path IS NOT NULL")]
            known += [Path(p) for (p,) in conn.execute(
                "SELECT DISTINCT output_dir FROM runs WHERE output_dir IS NOT NULL")]
            # one file imported from ~ (or robot --outputdir /) must not open the whole folder
            roots += [folder for folder in known if not _too_wide(folder)]
        return roots


def attachment_allowed(conn: sqlite3.Connection, policy: PathPolicy | None, target: str,
                       output_dir: str | None) -> None:
    """A file an attachment's link leads to outside the run's output folder: the server
    reads it where its operator allows (``policy``); the command line never (a message's
    link is no reason to read a file), and says where the file is, to open by hand (the
    server's hint, about its configuration, said nothing a person at a terminal can do)."""
    if policy is not None:
        policy.check(conn, target)
        return
    raise ResultError(PATH_NOT_ALLOWED, f"The link leads out of the run's output folder"
                      f" ({output_dir}) to {target}.",
                      f"The command line opens only files in that folder: open {target} yourself.")


def _too_wide(folder: Path) -> bool:
    """The filesystem root or the home folder itself: never a root of the server's own."""
    home = Path.home()
    return folder == Path(folder.anchor) or folder in (home, home.resolve())
