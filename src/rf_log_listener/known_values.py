"""A run's known secret values (shared: the registry registers them while a run is written,
every answer masks them): which values may be one, and masking them wherever they occur."""

from __future__ import annotations

import re

from .secret_names import NO_VALUE_WORDS
from .secret_shapes import MASK

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from collections.abc import Iterable

# Values never registered as secrets: too short or too common to be one, and masking them
# everywhere would eat ordinary text (a password "1" would turn every "1" into "***").
MIN_SECRET_CHARS = 4
_TOO_COMMON = frozenset({
    "true", "false", "nil", "yes", "no", "on", "off", "empty",
    "password", "secret", "token", "changeme", "[]", "{}", "()",
    "public", "private",  # SNMP's default communities: masked where given, not everywhere
    # a verdict on a password, or one everybody may type: masked beside its name, not everywhere
    "default", "same", "correct", "wrong", "weak", "strong",
    # a status or a placeholder ("none", "invalid": WebDemo's wrong password, "not set")
    *NO_VALUE_WORDS, "not set", "not found",
})


def registrable(value: str) -> bool:
    """Whether ``value`` may be registered as a run's secret: at least MIN_SECRET_CHARS
    characters once stripped, not a word everybody writes, not a variable reference or a
    mask, not only digits and punctuation shorter than 6 (a port, a year, a count)."""
    text = value.strip()
    if (len(text) < MIN_SECRET_CHARS or text.strip("[]()<>").casefold() in _TOO_COMMON
            or MASK in text):
        return False
    if text.startswith(("${", "@{", "&{", "%{")):  # a variable's name, not its value
        return False
    return not (len(text) < 6 and not any(c.isalpha() for c in text))


# A registered value ending with this is the head of one robot cut (``${x} = head...`` at
# ``--maxassignlength``): masked with the rest of its token wherever it occurs.
HEAD_MARK = "\u2026"
# Where a token a head begins ends: a space, a quote, markup, a separator of pairs.
_TOKEN_REST = r"""[^\s'"<>,;&|]*"""
# From this many values a text may be read for the values' starts (their first
# MIN_SECRET_CHARS characters) rather than searched for each value: a data-driven run's
# passwords (DataDriver, 5,000 rows) made every text of every answer cost 227 µs (16 so).
INDEXED_FROM = 128


class KnownValues:
    """A run's registered secret values, masked wherever they occur (the longest first, so a
    value inside a longer one goes with it). A substring test per value: C speed, and with a
    few hundred values cheaper than one regex of alternatives; with many, only the values
    whose start the text holds are tested (``_starts``)."""

    def __init__(self, values: Iterable[str]) -> None:
        every = sorted({v for v in values if registrable(v)}, key=len, reverse=True)
        self.values = tuple(v for v in every if not v.endswith(HEAD_MARK))
        heads = [re.escape(v[:-1]) for v in every if v.endswith(HEAD_MARK)]
        self._heads = re.compile(f"(?:{'|'.join(heads)}){_TOKEN_REST}") if heads else None
        self.shortest = min((len(v) - v.endswith(HEAD_MARK) for v in every), default=0)
        self._starts: dict[str, list[int]] | None = None  # a start -> its values' ranks
        if len(self.values) >= INDEXED_FROM:
            self._starts = {}
            for rank, value in enumerate(self.values):
                self._starts.setdefault(value[:MIN_SECRET_CHARS], []).append(rank)

    def __bool__(self) -> bool:
        return bool(self.values) or self._heads is not None

    def mask(self, text: str) -> tuple[str, int]:
        if len(text) < self.shortest:
            return text, 0
        count = 0
        for value in self.values if not self._read_for_starts(len(text)) else self._started_in(text):
            if value in text:
                count += text.count(value)
                text = text.replace(value, MASK)
        if self._heads is not None:
            text, cut = self._heads.subn(MASK, text)
            count += cut
        return text, count

    def _read_for_starts(self, length: int) -> bool:
        """Whether a text of ``length`` is cheaper read for the values' starts than searched
        for each value: measured, a search costs ~30 ns a value and 0.17 a character and
        value, a reading ~2 µs and 86 ns a character (a short message: from ~190 values, a
        10 KB body from ~500)."""
        return self._starts is not None and len(self.values) * (180 + length) > 12000 + 516 * length

    def _started_in(self, text: str) -> list[str]:
        """The values whose start ``text`` holds, longest first (a replacement by MASK, which
        no value holds, cannot make another value occur)."""
        starts = self._starts
        assert starts is not None
        width = MIN_SECRET_CHARS
        held = {text[at:at + width] for at in range(len(text) - width + 1)} & starts.keys()
        return [self.values[rank] for rank in sorted(rank for start in held for rank in starts[start])]


