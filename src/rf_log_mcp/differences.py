"""Where the two values of RF's "first != second" failure first differ (read side, response
shaping; used by ``shaping.Shaper.cut`` and the CLI's ``render_text.evidence``).

``Should Be Equal``, ``Should Be Equal As Strings`` and every check built on RF's
``assert_equal`` fail with ``first != second``, or ``msg: first != second`` with a custom
message: two long JSON bodies that differ in one field of their 31st item fail with a line of
8,000 characters. A text cut to its head and tail shows neither side where they differ, which
is the one part that is evidence; this finds that place so a cut keeps it.
"""

from __future__ import annotations

SEPARATOR = " != "
_MESSAGE_END = ": "  # RF's custom message before the values (``msg: first != second``)
_PREFIX_TRIES = 20  # at most this many ": " before the separator tried as that message's end


def first_difference(text: str) -> tuple[int, int] | None:
    """Where ``text`` (RF's ``first != second``, perhaps after ``msg: ``) has the first
    character in which its two values differ: its offset in the first value and in the
    second, as offsets in ``text``. None when the text holds the separator more or less
    than once (it cannot tell its values apart) or the values are equal up to one's end."""
    at = text.find(SEPARATOR)
    if at < 0 or text.find(SEPARATOR, at + 1) >= 0:
        return None
    second = at + len(SEPARATOR)
    best_start, best_common = 0, _common_prefix(text, 0, at, second)
    start = 0
    for _ in range(_PREFIX_TRIES):  # the message is the part the second value lacks
        found = text.find(_MESSAGE_END, start, at)
        if found < 0:
            break
        start = found + len(_MESSAGE_END)
        common = _common_prefix(text, start, at, second)
        if common > best_common:
            best_start, best_common = start, common
    if best_start + best_common >= at or second + best_common >= len(text):
        return None  # one value is the other's beginning: nothing to point at
    return best_start + best_common, second + best_common


def _common_prefix(text: str, first: int, first_end: int, second: int) -> int:
    """How many characters the value at ``first`` (up to ``first_end``) and the one at
    ``second`` begin with alike; compared in blocks, a long equal prefix in few steps."""
    length = min(first_end - first, len(text) - second)
    same, step = 0, 256
    while same < length:
        size = min(step, length - same)
        if text[first + same:first + same + size] == text[second + same:second + same + size]:
            same += size
        elif size == 1:
            break
        else:
            step = max(1, size // 8)
    return same


def kept_around(text: str, limit: int, points: tuple[int, int]) -> list[tuple[int, int]]:
    """The parts of ``text`` to keep within about ``limit`` characters: its head and tail,
    each of ``points`` with some text before it and more after, and the separator between
    the values with a few characters either side (which value a part is of)."""
    length, share = len(text), max(limit // 4, 1)
    before = share // 4
    at = text.find(SEPARATOR)
    ranges = [(0, share), *((max(0, p - before), min(length, p - before + share)) for p in points),
              (max(0, at - 12), at + len(SEPARATOR) + 12), (max(0, length - share), length)]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
