"""A command imports only what it needs (issue #19): measured with ``python -X importtime``
on real commands against a real store. Fails when a heavy module creeps back into a light
command: the MCP SDK, the importers' parsers, Pillow or RF itself where nothing is parsed,
and for --version, usage errors and --help anything of the read side at all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_RESULTS, cli

XML = FIXTURE_RESULTS / "7.5" / "output.xml"
# Answers are plain JSON (answer.py): the response models and pydantic are for the server.
NEVER_IN_READING = ("mcp", "rf_log_listener.importers", "ijson", "PIL", "uvicorn", "starlette",
                    "anyio", "rf_log_listener.listener", "pydantic", "pydantic_core",
                    "rf_log_mcp.models", "logging", "uuid", "rf_log_listener.postgres")
# Nor dataclasses and inspect (5 ms of a 55 ms command) where RF does not parse suite files:
# the read side's records are named tuples and plain classes; nor hashlib (OpenSSL's start,
# 4-5 ms): cursors and the usage record's digests are BLAKE2 from CPython's own module; nor
# typing (4-5 ms: annotations only, under TYPE_CHECKING = False; collections' named tuples)
# and pathlib (5-7 ms with urllib.parse and ipaddress: store paths are os.path strings).
NOR_WITHOUT_RF = ("robot", "dataclasses", "inspect", "hashlib", "typing", "pathlib",
                  "urllib.parse")
# Nor what a reading command never uses: argparse's help formatter imports shutil (with zlib,
# bz2 and lzma) unless told the width; threads are the server's (3-5 ms together).
NEVER_IN_A_COMMAND = ("shutil", "threading", "bz2", "lzma")
# hashlib (4-5 ms) is for cursors and digests, which the parser never needs.
NEVER_IN_PARSING = ("rf_log_mcp.service", "sqlite3.dump", "hashlib", *NEVER_IN_READING,
                    *NOR_WITHOUT_RF)


def imported(*args: str, db: Path) -> set[str]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "rf_log_mcp", *args],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "RF_LOG_MCP_DB": str(db)})
    return {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("imports") / "store.sqlite3"
    assert cli("import", str(XML), db=db).returncode == 0
    return db


@pytest.mark.parametrize("command", [("--version",), ("--help",), ("summary", "--bogus"),
                                     ("diff", "--help")])
def test_the_parser_alone_imports_no_view_and_no_model(store: Path, command: tuple[str, ...]) -> None:
    modules = imported(*command, db=store)
    assert "rf_log_mcp.cli" in modules
    assert not modules & set(NEVER_IN_PARSING), sorted(modules & set(NEVER_IN_PARSING))
    assert not modules & set(NEVER_IN_A_COMMAND), sorted(modules & set(NEVER_IN_A_COMMAND))


@pytest.mark.parametrize("command", [("runs",), ("summary", "1"), ("tree", "1"),
                                     ("search", "1", "setup"), ("window", "1", "s1-s1-t1"),
                                     ("failures", "1", "--limit", "1"), ("diff", "1", "1"),
                                     ("history", "Fixture.Missing"), ("flaky",)])
def test_reading_commands_import_no_mcp_and_no_importer(store: Path, command: tuple[str, ...]) -> None:
    modules = imported(*command, db=store)
    assert "rf_log_mcp.service" in modules  # it ran
    assert not modules & set(NEVER_IN_READING), sorted(modules & set(NEVER_IN_READING))
    if command[0] != "failures":  # only source locations parse suite files with RF (which loads both)
        unwanted = set(NOR_WITHOUT_RF) | set(NEVER_IN_A_COMMAND)
        assert not modules & unwanted, sorted(modules & unwanted)


# Each reading command loads the views it runs (service.py imports them per operation) and,
# unless it shows an HTML message, not the attachments' HTML parser.
VIEWS_OF = {
    ("runs",): set(),
    # failed_imports: the fixture's "No keyword with name ... found." test, listed alone, is
    # weighed for an import that failed (a run without such a failure does not load it)
    ("summary", "1"): {"summary", "failing", "across", "failed_imports"},
    ("tree", "1"): {"tree"},
    ("search", "1", "setup"): {"search", "search_candidates", "tree"},
    ("window", "1", "s1-s1-t1"): {"step_window"},
    ("diff", "1", "1"): {"compare", "across"},
    ("history", "Fixture.Missing"): {"history", "across"},
}


@pytest.mark.parametrize("command", list(VIEWS_OF), ids=" ".join)
def test_a_command_loads_its_own_views_only(store: Path, command: tuple[str, ...]) -> None:
    modules = imported(*command, db=store)
    views = {name.rpartition(".")[2] for name in modules
             if name.startswith("rf_log_mcp.views.") and name != "rf_log_mcp.views.common"}
    assert views == VIEWS_OF[command]
    assert "rf_log_mcp.attachments" not in modules
    assert "html.parser" not in modules


def test_a_command_parsed_alone_takes_what_the_whole_parser_takes() -> None:
    """Only the command run has its arguments built (cli._parser(only)): COMMANDS names every
    command of the whole parser, and each command's parser built alone has the same
    arguments (options, choices, defaults, help) as in the whole one."""
    from rf_log_mcp.cli import COMMANDS, _parser

    def commands(parser: Any) -> dict[str, Any]:
        [sub] = [a for a in parser._actions if type(a).__name__ == "_SubParsersAction"]
        return dict(sub.choices)

    def shape(parser: Any) -> list[tuple[Any, ...]]:
        return [(a.dest, tuple(a.option_strings), a.nargs, a.default, a.choices, a.help,
                 a.required) for a in parser._actions]

    whole = commands(_parser())
    assert set(whole) == COMMANDS
    for name in COMMANDS:
        alone = commands(_parser(name))
        assert list(alone) == [name]
        assert shape(alone[name]) == shape(whole[name]), name
    assert set(commands(_parser("no-such-command"))) == COMMANDS  # a typo: the whole parser
