"""How a run's texts reach a terminal (read side, last stage, shared by ``render`` and the
CLI's commands): colour (``Style``), control characters escaped (``TerminalText``), and a
text cut to its first lines as the commands print it (``first_lines``, ``matching_lines``,
``evidence``: blank lines shown, never counted; where RF's compared values differ kept in
sight; a browser driver's native stack folded).
"""

from __future__ import annotations

import os
import re
import sys

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any, TextIO

_COLOURS = {"PASS": "32", "FAIL": "31", "SKIP": "33", "NOT RUN": "90", "RUNNING": "36",
            "NOT FINISHED": "35", "WARN": "33", "ERROR": "31", "complete": "32",
            "running": "36", "interrupted": "35", "dim": "90", "bold": "1"}


class Style:
    """ANSI colours when writing to a terminal, nothing otherwise."""

    def __init__(self, out: TextIO | None = None) -> None:
        stream = out or sys.stdout
        self.enabled = stream.isatty() and not os.environ.get("NO_COLOR")

    def __call__(self, text: Any, key: str | None) -> str:
        code = _COLOURS.get(key or "")
        if not self.enabled or not code:
            return str(text)
        return f"\033[{code}m{text}\033[0m"


# What a run's text may hold that a terminal would act on instead of showing: C0 and C1
# controls (a bell, a carriage return that overwrites the line, ESC starting a sequence that
# moves the cursor, clears the screen, sets the title or writes the clipboard: OSC 52).
# Colours (SGR, ``ESC [ ... m``: a program's coloured output, and ours) and CR LF line ends
# pass, a colour left on reset where its text ends; every other control is shown escaped,
# as ``\x1b``.
_CONTROLS = r"\r\n|\x1b\[[0-9;]*m|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # compiled by TerminalText
_ESCAPES = {"\r\n": "\n", "\r": "\\r", "\x0b": "\\v", "\x0c": "\\f"}


def _escaped(match: re.Match[str]) -> str:
    text = match[0]
    if text.startswith("\x1b["):
        return text
    return _ESCAPES.get(text) or f"\\x{ord(text):02x}"


class TerminalText:
    """The command line's standard output for text answers: a run's texts reach a terminal
    (or a file later ``cat``) with their control characters escaped (``_CONTROLS``), so a
    logged escape sequence cannot retitle, clear or rewrite what the user reads. JSON
    answers escape them themselves and do not go through it."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.controls = re.compile(_CONTROLS)  # here: a --json command never compiles it

    def write(self, text: str) -> int:
        shown = self.controls.sub(_escaped, text)
        last = shown.rfind("\x1b[")  # every ESC left is a colour's (SGR): the rest are escaped
        if last >= 0 and not shown.startswith(("\x1b[0m", "\x1b[m"), last):
            shown += "\x1b[0m"  # a colour the text leaves on (its reset cut off) stops here
        return self.stream.write(shown)

    def control(self, sequence: str) -> None:
        """Our own terminal control (``watch`` rewriting its status line), as it is."""
        self.stream.write(sequence)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, buffer, encoding
        return getattr(self.stream, name)


def control(sequence: str) -> None:
    """Write our own terminal control sequence to standard output, unescaped."""
    getattr(sys.stdout, "control", sys.stdout.write)(sequence)


# A failure's message as the failure path prints it: a diff or a traceback whole, as far as a
# screen goes (the rest: `rf-log-mcp message`, which the line that ends it names)
EVIDENCE_LINES = 24
# What the failing keyword logged before failing, each message by its head: RequestsLibrary's
# response is its url, status, headers and body, a line each
INFO_LINES = 4


def evidence(text: str, rest: str, width: int = 160) -> list[str]:
    """A failure's message as the failure path prints it: to EVIDENCE_LINES lines, a browser
    driver's native stack folded; where RF's ``first != second`` differ, when a line too long
    for the terminal hides it (two JSON bodies that differ in their 31st item)."""
    return with_difference(first_lines(folded(text), EVIDENCE_LINES, width, rest=rest), text,
                           width)


def with_difference(lines: list[str], text: str | None, width: int = 160) -> list[str]:
    """``lines`` (``text`` cut for the terminal) with, after the first, where RF's ``first !=
    second`` differ when a line too long for the terminal hides it."""
    if not text or " != " not in text or all(len(line) <= width for line in text.splitlines()):
        return lines
    from .differences import first_difference

    points = first_difference(text)
    if points is not None:
        first, second = (" ".join(text[max(0, at - 20):at + 40].split()) for at in points)
        lines.insert(1, f"first difference: …{first}… != …{second}…")
    return lines


def folded(text: str | None) -> str:
    """``text`` with a browser driver's native stack folded into a line, wherever it is."""
    from .native_frames import fold

    return fold(text or "", after_header=False)


def first_lines(text: str | None, count: int = 3, width: int = 160, rest: str = "") -> list[str]:
    """The first ``count`` lines of ``text``, each cut at ``width``, and how many are left
    (``rest``: where to read them)."""
    lines = _seen_lines(text)
    # a blank line (RF's between "Setup failed: ..." and "Also teardown failed:", between
    # "Several failures occurred:" and each failure) is shown without taking one of the
    # ``count``, nor counted among those left
    end, seen = 0, 0
    while end < len(lines) and seen < count:
        seen += bool(lines[end].strip())
        end += 1
    left = sum(bool(line.strip()) for line in lines[end:])
    if left == 1:  # the last line takes the place "… (1 more line)" would
        end, left = len(lines), 0
    shown = [line if len(line) <= width else line[: width - 1] + "…" for line in lines[:end]]
    if left:
        shown.append(f"… ({counted(left, 'more line')}{rest})")
    return shown


def _seen_lines(text: str | None) -> list[str]:
    """``text``'s lines without the white space that ends them or it, which is not seen
    (RequestsLibrary ends each line of its request and response with " ", and the response
    with a line of " ", which took a line of a count)."""
    return [line.rstrip() for line in (text or "").rstrip().splitlines()] or [""]


def matching_lines(text: str | None, query: str | None, count: int = 3,
                   width: int = 160, context: int = 1) -> list[str]:
    """As ``first_lines``, but keeping the first line that holds ``query`` in sight (a hit
    on the ninth line of a diff, at the 300th character of a long line), after ``context``
    lines before it: a search's hit shows why it is one, as grep's does."""
    lines = _seen_lines(text)
    needle = (query or "").casefold()
    at = next((i for i, line in enumerate(lines) if needle in line.casefold()), None) \
        if needle and "\n" not in needle else None
    if at is None or (at < count and lines[at].casefold().find(needle) + len(needle) < width):
        return first_lines(text, count, width)
    start = at - context if at >= count else 0
    end = start + count + (len(lines) == start + count + 1)  # the last line takes "… (1 more"
    shown = [f"… ({counted(start, 'line')} before)"] if start else []
    for index in range(start, min(len(lines), end)):
        line = lines[index]
        column = line.casefold().find(needle) if index == at else 0
        if len(line) <= width or column + len(needle) < width:
            shown.append(line if len(line) <= width else line[: width - 1] + "…")
        else:  # the match is past the cut: a window around it
            begin = max(0, column - width // 2)
            tail = "…" if begin + width - 2 < len(line) else ""
            shown.append(f"…{line[begin:begin + width - 2]}{tail}")
    if len(lines) > end:
        left = len(lines) - end
        shown.append(f"… ({counted(left, 'more line')})")
    return shown


def counted(count: int, noun: str) -> str:
    """``1 test``, ``2 tests``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
