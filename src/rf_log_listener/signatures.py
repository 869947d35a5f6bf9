"""Failure signatures: one text for failures that are the same failure in different runs.

Shared by both sides (like ``masking.py``): the store keeps each failed test's signature
(``history.py``, at a run's end) and the read side groups and compares by it.

A signature is the failure message with its volatile parts replaced, then the keyword that
failed (the deepest failed keyword on the test's first failing path, with its library):

    Connection refused: 10.0.3.7:5432 after 3012 ms   ->   Connection refused: <ip>:<n> after <duration>

The rules, applied in this order (README, "Failure signatures"), to the failure the test's
message reports now (``status_text.current``: a merged test's newest message, an HTML
message's text):

1. secrets masked (the run's known values, then names and shapes), as in every answer;
2. ISO timestamps and times of day -> ``<time>``, dates -> ``<date>``;
3. UUIDs -> ``<uuid>``; ``0x`` numbers and hex runs of 8+ characters with a digit -> ``<hex>``;
4. IPv4 addresses -> ``<ip>``; temporary paths (``/tmp/...``, ``/var/folders/...``,
   ``...\\Temp\\...``) -> ``<tmp>``;
5. lists and dicts as RF prints them (``[...]``, ``{...}``) -> ``[…]``, ``{…}``; then quoted
   values (``'...'``, ``"..."``, up to 200 characters, on one line) -> ``'…'``;
6. durations (a number with ms, s, sec, seconds, min, minutes, h, hours) -> ``<duration>``;
7. other numbers (not inside a word: ``Order17`` stays) -> ``<n>``;
8. white space runs -> one space; the result cut at 300 characters.

Changing a rule changes ``RULES``: runs indexed with older rules are indexed again when read.
"""

from __future__ import annotations

import functools
import re

RULES = 2  # the version of the rules below (2: merged and HTML messages read as text)
MAX_CHARS = 300

# The rules' patterns, compiled when first used: a run that ends with no failure (robot's
# process writes its tests' history) never needs them. Each with the characters a text must
# hold for it to match at all: a rule is skipped, not run, on a text without one of them
# (search folds thousands of messages a page; most hold no date, time, UUID or address).
_RULES: tuple[tuple[str, int, str, str], ...] = (
        (r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?",
         0, "<time>", "-:"),
        (r"\b\d{8} \d{2}:\d{2}:\d{2}(?:\.\d+)?", 0, "<time>", ":"),  # RF's 20261201 08:11:23.123
        (r"\b\d{4}-\d{2}-\d{2}\b", 0, "<date>", "-"),
        (r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b", 0, "<time>", ":"),
        (r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I, "<uuid>", "-"),
        (r"\b0x[0-9a-f]+\b", re.I, "<hex>", "0"),
        (r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b", re.I, "<hex>", ""),
        (r"\b(?:\d{1,3}\.){3}\d{1,3}\b", 0, "<ip>", "."),
        (r"(?:/tmp/|/var/folders/|/private/var/|[A-Za-z]:\\[^\s'\"]*\\Temp\\)[^\s'\"]*", re.I,
         "<tmp>", ""),
        (r"\[[^\[\]\n]{1,200}\]", 0, "[…]", "["),
        (r"\{[^{}\n]{1,200}\}", 0, "{…}", "{"),
        (r"'[^'\n]{1,200}'", 0, "'…'", "'"),
        (r'"[^"\n]{1,200}"', 0, "'…'", '"'),
        (r"\b\d+(?:\.\d+)?\s?(?:ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hours?)\b",
         re.I, "<duration>", ""),
        (r"(?<![\w.])[-+]?\d+(?:[.,]\d+)*(?![\w])", 0, "<n>", ""),
)
# Rule 8, white space runs to one space (and none at the ends), is ``" ".join(text.split())``:
# the same characters as ``\s`` (both are str.isspace), a third of a regex's time.


# What tells repeated log messages apart only by the moment they were logged (search folds
# them): times, ids, addresses, durations and numbers (rules 2-4, 6-8), not quoted values.
_NOT_REPEATS = ("[…]", "{…}", "'…'", "<tmp>")


_Rule = tuple[re.Pattern[str], str, str]  # pattern, replacement, characters it needs


@functools.cache
def _replacements() -> tuple[_Rule, ...]:
    return tuple((re.compile(pattern, flags), replacement, needs)
                 for pattern, flags, replacement, needs in _RULES)


@functools.cache
def _repeat_rules() -> tuple[_Rule, ...]:
    return tuple(rule for rule in _replacements() if rule[1] not in _NOT_REPEATS)


def _replaced(text: str, rules: tuple[_Rule, ...]) -> str:
    """``text`` after each rule in turn; a rule whose characters the text (as the rules
    before left it) does not hold cannot match, and is not run."""
    for pattern, replacement, needs in rules:
        for char in needs:  # a loop, not all(): a generator costs more than the skip saves
            if char not in text:
                break
        else:
            text = pattern.sub(replacement, text)
    return text


def repeat_key(message: str) -> str:
    """``message`` with what differs between repeats of one log line replaced (masked text
    in, as every answer shows it)."""
    return " ".join(_replaced(message, _repeat_rules()).split())


def normalize(message: str) -> str:
    """The message with its volatile parts replaced (rules 2-8; the caller masks secrets)."""
    # the result is cut at MAX_CHARS (rule 8): the rules read only the message's head
    text = " ".join(_replaced(message[:4 * MAX_CHARS], _replacements()).split())
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 1] + "…"


def signature(message: str, keyword: str | None) -> str:
    """A failure's signature: its normalized message, and the keyword that failed."""
    text = normalize(message)
    return f"{text} [in {keyword}]" if keyword else text
