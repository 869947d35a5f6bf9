"""The ``rf-log-mcp`` command line: the same answers as the MCP tools, for humans and scripts.

Exit codes: 0 ok; 1 the command ran but failed (structured error, printed); 2 usage error.
The parser and the entry point are here; the commands are in ``reading`` (the views of a run)
and ``upkeep`` (import, the store's care, the server, the demo); ``common`` holds what they share.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sqlite3
import sys
from collections.abc import Callable

from rf_log_listener.errors import INVALID_ARGUMENT, ResultError
from rf_log_listener.store import ENV_DB, close_at_exit, default_store_path

from .. import __version__
from ..limits import MAX_PAGE

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any, NoReturn

CHANGE_HELP = ("only this kind of change (repeatable): new_failure, still_failing_changed, "
               "still_failing, newly_skipped, fixed, no_longer_skipped, added, removed, slower,"
               " faster")

# What each command runs, as "module:function" of this package, imported only when that
# command runs: the parser, --help and --version cost no view, model or importer.
Handler = str


def entry() -> NoReturn:
    """The ``rf-log-mcp`` program (``python -m rf_log_mcp`` too): ``main``, then the exit.

    A command that only reads and prints ends without Python's finalization once its output
    is flushed and its store closed (or left to the next connection: ``close_at_exit``):
    tearing down every module and object one by one was 10 ms of a 75 ms ``summary`` (issue
    #19). The others (import, serve, demo, the store's upkeep) exit as usual: their child
    processes, temporary folders and threads are cleaned up by it."""
    code = main()
    common = sys.modules.get(f"{__name__}.common")
    opened = common.OPENED if common is not None else []
    if _QUICK_EXIT[0]:
        with contextlib.suppress(OSError):  # a reader gone (`| head`) has what it wanted
            sys.stdout.flush()
            sys.stderr.flush()
        for conn in opened:
            with contextlib.suppress(Exception):
                close_at_exit(conn)  # its usage record's frames may stay in the WAL
        os._exit(code)
    for conn in opened:  # not left to the collector (Python 3.13 warns of each)
        with contextlib.suppress(Exception):
            conn.close()
    sys.exit(code)


# Set by main when the command it ran only reads the store (its handler is in reading.py or
# across.py) and it answered: entry may end the process at once.
_QUICK_EXIT = [False]


def main(argv: list[str] | None = None) -> int:
    _QUICK_EXIT[0] = False
    arguments = sys.argv[1:] if argv is None else argv
    if not arguments and not sys.stdin.isatty():
        arguments = ["serve"]  # an MCP host starts `rf-log-mcp` with stdin as the protocol pipe
    if arguments == ["--version"]:  # what argparse's version action prints, without the parser
        print(f"rf-log-mcp {__version__}")
        _QUICK_EXIT[0] = True
        return 0
    parser = _parser(_command_named(arguments))
    _Parser.json_errors = "--json" in arguments
    try:
        args = parser.parse_args(arguments)
        _newest_run_first(args)
    except _UsageError as err:
        return _print_error(argparse.Namespace(json=_Parser.json_errors), err, exit_code=2)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        from rf_log_listener.masking import redactor

        redactor()  # an operator's masking setting that cannot be used stops here, loudly
        module, _, function = args.handler.partition(":")
        handler = getattr(importlib.import_module(f"{__name__}.{module}"), function)
        stdout = sys.stdout
        if module in ("reading", "across", "upkeep") and function != "cmd_serve" \
                and not getattr(args, "json", False):  # text answers; never the protocol's pipe
            from ..render_text import TerminalText

            sys.stdout = TerminalText(stdout)  # type: ignore[assignment]
        try:
            code = int(handler(args))
        finally:
            sys.stdout = stdout  # a caller's stream as it was (TerminalText writes through)
            _flush_usage()
        _QUICK_EXIT[0] = module in ("reading", "across")
        return code
    except ResultError as err:
        return _print_error(args, err, exit_code=2 if err.code == INVALID_ARGUMENT else 1)
    except sqlite3.DatabaseError as exc:  # pages damaged after the store opened
        from ..service import store_error

        return _print_error(args, store_error(exc))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `rf-log-mcp summary 1 | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _flush_usage() -> None:
    """Write the usage record of the views this command answered (none for a command that
    loaded no view: nothing to import)."""
    recorded = sys.modules.get(f"{__package__.rpartition('.')[0]}.usage")
    connection = sys.modules.get(f"{__name__}.common")
    if recorded is not None and connection is not None and connection.OPENED:
        recorded.flush(connection.OPENED[-1])


def _print_error(args: argparse.Namespace, err: ResultError, exit_code: int = 1) -> int:
    """A failed command: its error as JSON with --json, else as text on stderr; exit 1 (2 for
    arguments the command cannot take)."""
    if getattr(args, "json", False):
        from ..service import failed
        from .common import print_json

        print_json(failed("parse_result", err))
    else:
        print(f"error [{err.code}]: {err.message}", file=sys.stderr)
        if err.hint:
            print(f"hint: {err.hint}", file=sys.stderr)
    return exit_code


class _UsageError(ResultError):
    pass


def _arguments_hint(prog: str) -> str:
    return f"`{prog} --help` lists the arguments."


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` gives it ($COLUMNS, else the
    terminal's, else 80), without importing shutil."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, told the width: left to find it, it imports shutil (and
    with it zlib, bz2 and lzma, 3-4 ms) the first time argparse formats an argument, which it
    does for every argument added, so every command paid for it (issue #19)."""

    def __init__(self, prog: str, **options: Any) -> None:
        if options.get("width") is None:
            options["width"] = _columns() - 2  # what argparse takes off the terminal's width
        super().__init__(prog, **options)


class _Parser(argparse.ArgumentParser):
    """Arguments a command cannot take are INVALID_ARGUMENT, as in the MCP tools: printed like
    every other error (as JSON with --json), exit 2."""

    json_errors = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)  # the commands' parsers too
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise _UsageError(INVALID_ARGUMENT, message, _arguments_hint(self.prog))


def _number(kind: type[int] | type[float], low: float, high: float | None = None) -> Callable[[str], Any]:
    """An argparse type: a number from ``low`` (to ``high``), else a usage error naming the range."""
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value < low or (high is not None and value > high):
            allowed = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"{text} is out of range: {allowed}")
        return value
    return parse


def _command_named(arguments: list[str]) -> str | None:
    """The command these arguments run, when that is plain (``[--db X] COMMAND ...``); None
    for anything else (--help, --version, a typo), which gets the whole parser."""
    at = 0
    while at < len(arguments):
        word = arguments[at]
        if word == "--db":
            at += 2
        elif word.startswith("--db="):
            at += 1
        else:
            return None if word.startswith("-") else word
    return None


class _Unbuilt:
    """The parser of a command this invocation does not run: its arguments are not built.
    argparse makes a help formatter for every argument it adds (about 0.1 ms each, 130 of
    them), which a command that answers in tens of milliseconds should not pay for."""

    def add_argument(self, *_args: Any, **_kwargs: Any) -> None:
        return None

    def add_mutually_exclusive_group(self, **_kwargs: Any) -> _Unbuilt:
        return self

    def set_defaults(self, **_kwargs: Any) -> None:
        return None


# Every command's name: a command not listed here still works (the whole parser is built).
COMMANDS = frozenset({
    "import", "runs", "summary", "diff", "history", "flaky", "failures", "tree", "message",
    "window", "search", "attachment", "watch", "doctor", "prune", "push", "usage", "skill",
    "serve", "demo",
})


def _builds(name: str, only: str | None) -> bool:
    return only is None or only == name or only not in COMMANDS


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``only`` (a command's name), only that command's arguments are built."""
    parser = _Parser(
        prog="rf-log-mcp",
        description="Robot Framework results in a SQLite (or PostgreSQL) store, for LLM agents"
                    " and humans. With no command and stdin not a terminal, serves MCP over stdio.",
        epilog=f"Store: --db, else ${ENV_DB}, else {default_store_path()}; a file, or a"
               " postgresql:// URL. Exit codes: 0 ok;"
               " 1 the command failed (the error and a hint are printed); 2 usage; 130 Ctrl-C.",
    )
    parser.add_argument("--version", action="version", version=f"rf-log-mcp {__version__}")
    db_help = f"store file or postgresql:// URL (default: ${ENV_DB} or {default_store_path()})"
    parser.add_argument("--db", help=db_help)
    sub = parser.add_subparsers(metavar="COMMAND")

    def command(name: str, handler: Handler, help_text: str, json_flag: bool = True,
                description: str | None = None) -> argparse.ArgumentParser:
        if not _builds(name, only):
            return _Unbuilt()  # type: ignore[return-value]
        cmd = sub.add_parser(name, help=help_text, description=description or help_text)
        # before or after the command; given after it, it is not reset when absent
        cmd.add_argument("--db", help=db_help, default=argparse.SUPPRESS)
        if json_flag:
            cmd.add_argument("--json", action="store_true", help="print the response as JSON")
        cmd.set_defaults(handler=handler)
        return cmd

    def run_argument(cmd: argparse.ArgumentParser, optional: bool = False,
                     before: str | None = None, required: bool = False) -> None:
        """``before``: the positional after the run, which may come first to mean the newest
        run (``tree s1-t2``, ``failures s1-t2``: what a person types after reading a summary)."""
        if before is None:
            cmd.add_argument("run", type=_run_id, nargs="?" if optional else None,
                             help="run id (from `runs`), or `latest`"
                                  + (" (the default)" if optional else ""))
            return
        cmd.add_argument("run", type=_run_or_other, nargs="?",
                         help=f"run id (from `runs`), or `latest` (the default: "
                              f"{before.removesuffix('_id').upper()} may come first)")
        cmd.set_defaults(run_comes_before=(before, required, getattr(cmd, "prog", "")))

    def paging(cmd: argparse.ArgumentParser, default: int = 25) -> None:
        cmd.add_argument("--cursor", help="next_cursor (or prev_cursor) printed by the previous page")
        cmd.add_argument("--page-size", type=_number(int, 1, MAX_PAGE),
                         help=f"items per page (default {default}, at most 200)")

    cmd = command("import", "upkeep:cmd_import", "Import an output.xml (RF 4.0+) or output.json (RF 7.2+)"
                  " (several: one after another).")
    cmd.add_argument("paths", nargs="+", metavar="PATH", help="result file(s)")
    cmd.add_argument("--allow-incomplete", action="store_true",
                     help="import the readable part of a cut file as an 'interrupted' run")
    cmd.add_argument("--label", help="a label to find the run by later")
    cmd.add_argument("--progress-json", action="store_true", help=argparse.SUPPRESS)

    cmd = command("runs", "reading:cmd_runs", "List the runs in the store, newest first (a pabot "
                  "execution as one run group, g<id>).")
    cmd.add_argument("--status", choices=("complete", "running", "interrupted"))
    cmd.add_argument("--limit", type=_number(int, 1, MAX_PAGE), default=20,
                     help="at most this many runs (20, at most 200)")
    cmd.add_argument("--label", help="only runs with this label")
    cmd.add_argument("--suite", help="only runs of this root suite")
    cmd.add_argument("--branch", help="only runs of this CI branch")
    cmd.add_argument("--since", help="started at or after (ISO date or time)")
    cmd.add_argument("--until", help="started before (ISO date or time)")

    cmd = command("summary", "reading:cmd_summary", "Status, totals, failed tests grouped by failure "
                  "signature, and run errors of a run (the newest by default).")
    run_argument(cmd, optional=True)
    cmd.add_argument("--group", help="list one failure group's tests (its id, from the summary)")
    paging(cmd, 200)

    cmd = command("diff", "across:cmd_diff", "What changed between two runs of a suite, test by test: "
                  "new failures, fixed, still failing, skipped, added, removed, slower.")
    cmd.add_argument("runs", nargs="*", metavar="[[BASE] HEAD]",
                     help="run ids or pabot groups (g17), or latest; without BASE: the previous "
                          "complete run of the same suite; without HEAD: the newest run")
    cmd.add_argument("--change", action="append", metavar="KIND", help=CHANGE_HELP)
    paging(cmd)

    cmd = command("history", "across:cmd_history", "One test across the finished runs: status, failure "
                  "signature, streak, last pass, flip rate.")
    cmd.add_argument("test", help="the test's full name (Suite.Test), or its name when unique")
    cmd.add_argument("--limit", type=_number(int, 1, MAX_PAGE),
                     help="runs shown, and the flip rate's window (20)")
    cmd.add_argument("--cursor", help="next_cursor printed by the previous page")

    cmd = command("flaky", "across:cmd_flaky", "A suite's tests ranked by flip rate over its newest runs.")
    cmd.add_argument("--suite", help="root suite name (default: the newest run's)")
    cmd.add_argument("--window", type=_number(int, 2, 1000), help="newest runs looked at (30)")
    paging(cmd)

    cmd = command("failures", "reading:cmd_failures", "The failure path of each failed test (or one)"
                  " of a run (the newest by default).")
    run_argument(cmd, optional=True, before="test_id")
    cmd.add_argument("test_id", nargs="?", metavar="TEST", help="as --test")
    cmd.add_argument("--test", help="a test: its id (s1-s2-t3) or name as robot --test takes it"
                                    " (default: every failed test)")
    cmd.add_argument("--limit", type=_number(int, 1), default=10, help="at most this many tests (10)")

    cmd = command("tree", "reading:cmd_tree", "The children of a node (default: the run), by projection; "
                  "long runs of passing iterations come folded.")
    run_argument(cmd, before="selector")
    cmd.add_argument("selector", nargs="?",
                     help="node id (s1-s2-t3-k1), a test's name, or an expand selector")
    cmd.add_argument("--projection", choices=("all", "failures", "warnings"), default="all")
    cmd.add_argument("--depth", type=_number(int, 1, 6),
                     help="the subtree to this many levels at once (tree_snapshot), not one level")
    paging(cmd)

    cmd = command("message", "reading:cmd_message", "One message whole, however long (read in parts;"
                  " masked): a log message's id, errors-mN, or a node id for its status message.")
    run_argument(cmd, before="message_id", required=True)
    cmd.add_argument("message_id", nargs="?", help="s1-t1-k2-m1, errors-m1, or a node id")
    cmd.add_argument("--cursor", help="only the part this cursor (next_cursor) points to")

    cmd = command("window", "reading:cmd_window", "The steps around a node, in execution order, "
                  "within its test (or suite setup/teardown).")
    run_argument(cmd, before="selector", required=True)
    cmd.add_argument("selector", nargs="?",
                     help="node id (a test or any step inside one) or a test's name")
    paging(cmd)

    cmd = command("search", "reading:cmd_search", "Messages by text and/or level, run-wide or scoped; "
                  "secrets come back masked.")
    run_argument(cmd, before="query")
    cmd.add_argument("query", nargs="?", help="plain text, case-insensitive (%% _ \\ literal)")
    cmd.add_argument("--selector", help="only this node's messages (a node id or test name; see --scope)")
    cmd.add_argument("--scope", choices=("node", "subtree", "test"),
                     help="with --selector: its own messages, its subtree (default), its test")
    levels = cmd.add_mutually_exclusive_group()
    level_names = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FAIL", "SKIP")
    levels.add_argument("--level", choices=level_names, type=str.upper, help="exactly this level")
    levels.add_argument("--min-level", choices=level_names, type=str.upper,
                        help="this level or worse (TRACE < DEBUG < INFO < WARN = SKIP < ERROR < FAIL)")
    cmd.add_argument("--detail", choices=("compact", "full"), default="compact",
                     help="full: hits with time, position, iteration, branch and their nodes")
    cmd.add_argument("--group-by", choices=("iteration", "node"),
                     help="hits grouped by loop iteration or node, with counts and the first hit")
    paging(cmd)

    cmd = command("attachment", "reading:cmd_attachment", "Open a screenshot or file an HTML message "
                  "refers to: its metadata, the file to open, or a text file's content.")
    run_argument(cmd)
    cmd.add_argument("message_id", help="message_id from an attachments list (s1-t1-k2-m2)")
    cmd.add_argument("index", nargs="?", type=_number(int, 0), default=0,
                     help="its index in the message (0)")
    cmd.add_argument("--save", metavar="FILE", help="write its bytes as stored (an embedded "
                     "screenshot decoded, a copy of a file; not masked) to FILE")

    cmd = command("watch", "reading:cmd_watch", "Follow a live run: what runs now, pass/fail counts, "
                  "failures as they happen; ends with the run.", json_flag=False)
    run_argument(cmd, optional=True)
    cmd.add_argument("--interval", type=_number(float, 0.05), default=1.0,
                     help="seconds between looks (1)")

    cmd = command("doctor", "upkeep:cmd_doctor", "Check the installation and the store; one-line verdict.")
    cmd.add_argument("--repair", action="store_true",
                     help="if the store is damaged: move it aside (*.corrupt-<time>), start a new "
                          "one and import again the result files the old one came from")

    cmd = command("prune", "upkeep:cmd_prune", "Delete finished runs to free space (never running ones); "
                  "live writers wait a moment at most. --usage deletes the usage record.")
    cmd.add_argument("--run", type=_number(int, 1), action="append", default=[], metavar="RUN_ID",
                     help="delete this run (repeatable)")
    cmd.add_argument("--keep", type=_number(int, 0), metavar="N", help="keep the newest N runs")
    cmd.add_argument("--older-than", type=_number(float, 0), metavar="DAYS",
                     help="delete runs stored more than DAYS days ago (with --keep: only those "
                          "not among the newest N)")
    cmd.add_argument("--usage", action="store_true",
                     help="delete the usage record (what `rf-log-mcp usage` reports)")
    cmd.add_argument("--dry-run", action="store_true", help="list what would be deleted")
    cmd.add_argument("--vacuum", action="store_true",
                     help="then compact the whole file (VACUUM: blocks writers while it runs; "
                          "needed once for stores made before incremental space release)")

    cmd = command("push", "upkeep:cmd_push", "Copy finished runs into another store (the team's"
                  " PostgreSQL): once each (by content), resuming a push that was cut off.")
    cmd.add_argument("runs", nargs="*", type=_number(int, 1), metavar="RUN_ID",
                     help="the runs to push (see --all)")
    cmd.add_argument("--all", action="store_true", help="every finished run of the store")
    cmd.add_argument("--to", required=True, metavar="STORE",
                     help="the target: a postgresql:// URL (or a store file)")

    cmd = command("usage", "agents:cmd_usage", "How the tools were used (the usage record: "
                  "shapes of answers and imports, never content): tokens, truncation, pages, "
                  "depth, folding, search scope, returned volume, fields, imports.")
    cmd.add_argument("--since", help="only calls since then: 7d, 12h, 30m or an ISO date")
    cmd.add_argument("--source", choices=("mcp", "cli", "api"),
                     help="only calls through the MCP server, the command line, or Python")

    cmd = command("skill", "agents:cmd_skill", "The Agent Skill that teaches an agent the triage "
                  "flow (SKILL.md): printed, or installed into a skills folder.", json_flag=False)
    cmd.add_argument("--install", metavar="FOLDER",
                     help="write FOLDER/rf-log-triage/SKILL.md, e.g. ~/.claude/skills (Claude "
                          "Code), ~/.codex/skills (Codex), or a project's .claude/skills or "
                          ".agents/skills")

    cmd = command("serve", "upkeep:cmd_serve", "Serve MCP over stdio (the default when stdin "
                  "is not a TTY), or over HTTP.", json_flag=False, description=(
                      "Serve MCP over stdio, or with --http over Streamable HTTP at"
                      " http://HOST:PORT/mcp; the store is --db, else $RF_LOG_MCP_DB, else the"
                      " default. Another address than loopback needs a bearer token"
                      " ($RF_LOG_MCP_HTTP_TOKEN or --token-file)."))
    cmd.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    cmd.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    cmd.add_argument("--port", type=int, default=8765, help="port (8765)")
    cmd.add_argument("--token-file", help="file whose first line is the bearer token clients "
                                          "must send (never the token itself on the command line)")

    cmd = command("demo", "upkeep:cmd_demo",
                  "Run robot on a suite, import its output, print the summary and failure paths.",
                  json_flag=False)
    cmd.add_argument("suite", nargs="?",
                     help="suite file or folder (default: the demo suite shipped with rf-log-mcp)")
    cmd.add_argument("--outputdir", help="where robot writes output.xml (default: a new temp dir)")
    return parser


class _NotARunId(str):
    """A first positional that is no run id: the next positional, of the newest run."""


def _run_or_other(text: str) -> int | str:
    try:
        return _run_id(text)
    except argparse.ArgumentTypeError:
        return _NotARunId(text)


def _newest_run_first(args: argparse.Namespace) -> None:
    """``tree s1-t2``: the run left out, its first positional is the one after the run."""
    after, required, prog = getattr(args, "run_comes_before", (None, False, ""))
    if after is None:
        return
    hint = _arguments_hint(prog)
    if isinstance(args.run, _NotARunId):
        if getattr(args, after) is not None:  # two positionals: the first must be a run
            raise _UsageError(INVALID_ARGUMENT, f"argument run: {_not_a_run(args.run)}", hint)
        setattr(args, after, str(args.run))
        args.run = "latest"
    elif args.run is None:
        args.run = "latest"
    if required and getattr(args, after) is None:
        raise _UsageError(INVALID_ARGUMENT, f"the following arguments are required: {after}", hint)


def _run_id(text: str) -> int | str:
    if text.lower() in ("latest", "last"):
        return "latest"
    if text[:1].lower() == "g" and text[1:].isdigit():  # a pabot group, as `runs` lists it
        return text.lower()
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_not_a_run(text)) from None


def _not_a_run(text: str) -> str:
    return f"{text!r} is not a run id (a number, a pabot group g17, or latest)"


