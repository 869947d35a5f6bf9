"""What a test that failed for a keyword or variable RF did not find failed for (read side,
for failure_path and summary through ``failing.shown_cause``): the library, resource or
variable file that did not import, as the run's errors say it. RF tells the two apart: the
test says "No keyword with name 'Open Browser' found.", and the import's error is among the
run's errors (log.html's top), where nothing links them."""

from __future__ import annotations

import os
import sqlite3

from rf_log_listener.secret_shapes import lazy_pattern
from rf_log_listener.store import run_base

from ..shaping import Shaper
from .common import NodeRow, node_by_key

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any

# RF's messages for a keyword or variable it could not find (robot/running/namespace.py,
# robot/variables): the keyword's prefix, if any.
_NOT_FOUND = lazy_pattern(r"No keyword with name '(?:([^']+)\.)?[^'.]*' found\."
                          r"|Variable '[$@&%]\{[^']*' not found\.")
# RF's import errors (``Import.report_error``): the file, then what failed to import (RF 6
# says "test library"; a variable file that raises is "Processing ... failed: Importing ...").
_IMPORT_ERROR = lazy_pattern(
    r"Error in file '(?P<file>.+?)'(?: on line \d+)?: (?:Processing variable file '[^']*'"
    r" failed: )?(?:Importing (?:test )?library '(?P<library>.+?)' failed"
    r"|Library '(?P<library_file>.+?)' does not exist"
    r"|Resource file '(?P<resource>.+?)' does not exist"
    r"|Importing variable file '(?P<variables>.+?)' failed"
    r"|Variable file '(?P<variables_file>.+?)' does not exist"
    r"|Replacing variables from setting '(?P<setting>\w+)' failed)")
ERRORS_READ = 50  # a run's import errors weighed for one failure
_STARTS = ("TEST", "SETUP", "TEARDOWN")  # a failure path's starts: tests, suite fixtures
# What can define what was not found: a keyword, a library or resource; a variable, a
# resource or variable file.
_DEFINES = {"keyword": ("library", "resource"), "variable": ("resource", "variables")}


def import_cause(conn: sqlite3.Connection, run_id: int, test: NodeRow,
                 shaper: Shaper) -> dict[str, Any] | None:
    """The run error that explains ``test`` (or a suite's setup or teardown) failed for a
    keyword or variable not found, as a
    FailureCause (reason ``import_failed``): for a keyword with a prefix, the import of the
    library or resource it names (or aliases, ``AS``), the test's own when several suites
    failed it; else the first import error of the test's suite file or of a resource file
    that file imports (read from the files while they are as they were at the run; else
    the suite file only). A typo next to another suite's import error, or in a prefix, is
    explained by none."""
    found = _NOT_FOUND().search(test.message or "") if test.type in _STARTS else None
    if found is None:
        return None
    wanted = _DEFINES["variable" if found.group(0).startswith("Variable") else "keyword"]
    rows = conn.execute(
        "SELECT seq, text FROM errors WHERE run_id = ? AND level = 'ERROR'"
        " AND text LIKE 'Error in file %' AND (text LIKE '%Importing %'"
        " OR text LIKE '%'' does not exist%' OR text LIKE '%Replacing variables%')"
        f" ORDER BY seq LIMIT {ERRORS_READ}", (run_id,)).fetchall()
    errors = [(seq, text, match) for seq, text in rows
              if (match := _IMPORT_ERROR().match(text)) and _kind(match) in wanted]
    if not errors:
        return None
    prefix = (found.group(1) or "").lower()
    named = [e for e in errors if prefix and prefix in _prefixes(e[2])]
    if len({e[2]["file"] for e in named}) == 1:  # one import of that name failed
        return _cause(named[0], shaper)
    files, aliases = _imports_of(conn, run_id, test)
    if prefix in aliases:
        named = [e for e in errors if imported_name(aliases[prefix]) in _prefixes(e[2])]
    mine = [e for e in errors if os.path.normpath(e[2]["file"]) in files]
    if prefix:  # a library or resource named: its import or none (a prefix that is a typo)
        chosen = next((e for e in named if e in mine), named[0] if named else None)
    else:
        chosen = mine[0] if mine else None
    return _cause(chosen, shaper) if chosen is not None else None


def _cause(error: tuple[int, str, Any], shaper: Shaper) -> dict[str, Any]:
    return {"reason": "import_failed", "node_id": f"errors-m{error[0]}", "type": "ERROR",
            "name": "", "message": shaper.message(error[1], None, 500)}


def _imports_of(conn: sqlite3.Connection, run_id: int,
                test: NodeRow) -> tuple[set[str], dict[str, str]]:
    """The files whose imports ``test`` uses and the libraries they import ``AS`` another
    name (``sources.imported_files``); when the files are not as they were at the run, its
    suite file alone."""
    from ..sources import imported_files  # RF's parser: only for such a failure

    suite = node_by_key(conn, run_base(run_id) + test.parent_pre)
    source = suite.field_values.get("source")
    return imported_files(conn, run_id, suite) or (
        {os.path.normpath(source)} if source else set(), {})  # as errors' files are compared


def _kind(error: Any) -> str:
    setting = (error["setting"] or "").lower()
    if error["library"] or error["library_file"] or setting == "library":
        return "library"
    if error["resource"] or setting == "resource":
        return "resource"
    return "variables"


def _prefixes(error: Any) -> tuple[str, str]:
    """What a keyword's prefix calls the library or resource an import error names: its
    short name, or its whole name (``my.pkg.Lib.Keyword``), lower case."""
    name = error["library"] or error["library_file"] or error["resource"] or ""
    return imported_name(name), name.lower()


def imported_name(name: str) -> str:
    """A library's or resource's name as a keyword's prefix gives it, lower case: a file's
    stem (``libs/MyLib.py``, ``common.resource``), a module's last part (``my.pkg.MyLib``)."""
    path = name.replace("\\", "/")
    base = path.rsplit("/", 1)[-1]
    stem, dot, extension = base.rpartition(".")
    is_file = "/" in path or extension.lower() in ("py", "resource", "robot", "txt", "tsv", "rst")
    return (stem if dot and is_file else base.rsplit(".", 1)[-1]).lower()
