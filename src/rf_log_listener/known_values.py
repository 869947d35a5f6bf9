"""A run's known secret values (shared: the registry registers them while a run is written,
every answer masks them): which values may be one, and masking them wherever they occur."""

from __future__ import annotations

from .secret_shapes import MASK

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from collections.abc import Iterable

# Values never registered as secrets: too short or too common to be one, and masking them
# everywhere would eat ordinary text (a password "1" would turn every "1" into "***").
MIN_SECRET_CHARS = 4
_TOO_COMMON = frozenset({
    "true", "false", "none", "null", "nil", "yes", "no", "on", "off", "empty", "undefined",
    "password", "secret", "token", "changeme", "[]", "{}", "()",
})


def registrable(value: str) -> bool:
    """Whether ``value`` may be registered as a run's secret: at least MIN_SECRET_CHARS
    characters once stripped, not a word everybody writes, not a variable reference or a
    mask, not only digits and punctuation shorter than 6 (a port, a year, a count)."""
    text = value.strip()
    if len(text) < MIN_SECRET_CHARS or text.casefold() in _TOO_COMMON or MASK in text:
        return False
    if text.startswith(("${", "@{", "&{", "%{")):  # a variable's name, not its value
        return False
    return not (len(text) < 6 and not any(c.isalpha() for c in text))


class KnownValues:
    """A run's registered secret values, masked wherever they occur (the longest first, so a
    value inside a longer one goes with it). A substring test per value: C speed, and with a
    few hundred values cheaper than one regex of alternatives."""

    def __init__(self, values: Iterable[str]) -> None:
        self.values = tuple(sorted({v for v in values if registrable(v)}, key=len, reverse=True))
        self.shortest = min((len(v) for v in self.values), default=0)

    def __bool__(self) -> bool:
        return bool(self.values)

    def mask(self, text: str) -> tuple[str, int]:
        if len(text) < self.shortest:
            return text, 0
        count = 0
        for value in self.values:
            if value in text:
                count += text.count(value)
                text = text.replace(value, MASK)
        return text, count


