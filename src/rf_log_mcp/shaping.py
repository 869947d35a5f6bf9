"""The one place that shapes responses: token estimates, budgets, truncation flags, cursors,
secret masking.

Every view returns plain data and lets this module decide what fits. A response stays within
its budget: long texts are shortened first (``message_truncated``), then trailing items
are dropped (``budget_truncated``) and the page ends there with a cursor to continue; but a
page holds its first item (and a tree page its node) even when that alone is over a small
budget (a deep recursion's ids are hundreds of characters each), so a page always moves
forward and ``estimated_tokens`` says what it costs. A
text shortened to its view's usual length is given back whole when the page leaves room in
the budget (``Shaper.grow``): the budget, not a fixed length, decides what is cut. Every
text is masked (``redaction``) before it is shortened, and the count goes in the response.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from rf_log_listener.digest import digest
from rf_log_listener.errors import ResultError
from rf_log_listener.masking import Redactor
from rf_log_listener.masking import redactor as default_redactor
from rf_log_listener.step_masking import TRACE_LINE_STARTS

from . import usage
from .limits import DEFAULT_BUDGET
from .native_frames import fold

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any

INVALID_CURSOR = "INVALID_CURSOR"
MESSAGE_CHARS = 1200  # a long message keeps its head and tail within this many characters
MASK_MARGIN = 16_384  # masked beyond a cut: longer than a PEM private key block
CUT_MARK = len("… [1000000 characters cut] …")  # a cut shorter than this saves nothing

_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


# What the estimate counts, as bytes of the text's UTF-8 (a character past ASCII is bytes
# >= 0x80, none of them in these classes): words are runs of ASCII letters, digit groups runs
# of digits, punctuation ASCII controls and symbols (not a letter, digit or white space, as
# re's \s has it: \x1c-\x1f count as space). bytes.translate and split find them in C; four
# patterns' findall took about 1 ms for a 7 KB answer (this, 0.3 ms), which every answer pays
# once, a page of items once per item and the usage record once more per node (issue #19).
_PUNCT_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x1C), *range(0x21, 0x30),
                      *range(0x3A, 0x41), *range(0x5B, 0x61), *range(0x7B, 0x80)])
_NON_ASCII_BYTES = bytes(range(0x80, 0x100))


def _runs_of(kept: bytes) -> bytes:
    """A translate table: ``kept`` bytes stay, every other byte becomes a space."""
    return bytes(byte if byte in kept else 0x20 for byte in range(0x100))


_WORD_RUNS = _runs_of(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_DIGIT_RUNS = _runs_of(b"0123456789")


def estimate_tokens(data: Any) -> int:
    """Tokens of ``data`` as compact JSON, for cl100k-like tokenizers.

    A linear model over what tokenizers split on: words (long ones cost more), digit groups
    of three, non-ASCII characters (about one each) and punctuation. Fitted against cl100k on
    263 responses of this server (max error 9 %, mean 2 %); tests hold it within 15 %.
    """
    text = data if isinstance(data, str) else _compact(data)
    raw = text.encode("utf-8", "surrogatepass")
    words = raw.translate(_WORD_RUNS).split()
    long_excess = sum(len(w) - 6 for w in words if len(w) > 6)
    digit_groups = sum((len(d) + 2) // 3 for d in raw.translate(_DIGIT_RUNS).split())
    punctuation = len(raw) - len(raw.translate(None, _PUNCT_BYTES))
    non_ascii = 0 if len(raw) == len(text) else len(text) - len(raw.translate(None, _NON_ASCII_BYTES))
    return int(0.57 * len(words) + 0.74 * long_excess + 0.89 * digit_groups
               + 1.23 * non_ascii + 0.50 * punctuation) + 1


class Cut(str):
    """A text shortened to its view's usual length that carries its whole (masked) text, so
    ``Shaper.grow`` can give it back when the answer has room."""

    whole: str

    def __new__(cls, shown: str, whole: str) -> Cut:
        text = super().__new__(cls, shown)
        text.whole = whole
        return text


def visible_status(message: str) -> str:
    """A status message as answers show it: an ``*HTML*`` one as its text (``status_text``,
    loaded only then: most commands never see one), any other as it is."""
    if not message.startswith("*HTML*"):
        return message
    from rf_log_listener.status_text import visible

    return visible(message)


class Shaper:
    """Collects the truncation facts of one response while the view builds it."""

    def __init__(self, budget: int = DEFAULT_BUDGET, redactor: Redactor | None = None) -> None:
        self.budget = budget
        self.message_truncated = False
        self.budget_truncated = False
        self.masked = 0  # secret values replaced by *** so far
        self.redactor = redactor if redactor is not None else default_redactor()
        self.soft_cuts = 0  # texts shortened that grow() may give back whole

    def counted(self, masked: tuple[Any, int]) -> Any:
        """The value of a ``(masked value, count)`` pair from the redactor, count kept."""
        self.masked += masked[1]
        return masked[0]

    def mask(self, value: str) -> str:
        return self.counted(self.redactor.text(value))  # type: ignore[no-any-return]

    def message(self, value: str, node: Any = None, limit: int = MESSAGE_CHARS) -> str:
        """A log message of ``node`` (a row with name, args and assign; None for run errors),
        masked, RF's TRACE argument and return lines included, then shortened; a browser
        driver's native stack folded (``native_frames``)."""
        value = fold(value)
        if len(value) > limit + 2 * MASK_MARGIN:
            return self.text(value, limit)
        return self.cut(self.counted(self.mask_message(value, node)), limit)

    @staticmethod
    def needs_node(value: str) -> bool:
        """Whether masking the log message ``value`` reads its node: RF's TRACE lines are
        masked by the keyword's arguments and assigned names; any other message is masked
        alike without it (a caller may leave the node unread)."""
        return value.startswith(TRACE_LINE_STARTS)

    def mask_message(self, value: str, node: Any = None) -> tuple[str, int]:
        """``value`` masked as :meth:`message` does it, and the count, not yet counted."""
        if node is None or not self.needs_node(value):
            return self.redactor.text(value)  # what trace_message does with it
        return self.redactor.trace_message(
            value, node.name, json.loads(node.args) if node.args else None,
            json.loads(node.assign) if node.assign else None, getattr(node, "owner", None))

    def args(self, keyword_name: str | None, args: list[str], limit: int,
             owner: str | None = None) -> list[str]:
        return [self.cut(a, limit)
                for a in self.counted(self.redactor.args(keyword_name, args, owner))]

    def text(self, value: str | None, limit: int = MESSAGE_CHARS) -> str:
        """``value`` masked, then shortened to about ``limit`` characters, keeping its head and
        its tail (failure details are often at the end), with a marker saying how much was cut.

        A huge text (a 100 MB message) is masked only where it will be shown, with a margin
        of ``MASK_MARGIN`` characters on the cut side so a secret whose key lies in the cut
        part is still masked: the cost stays that of a small text."""
        if not value:
            return ""
        if len(value) <= limit + 2 * MASK_MARGIN:
            return self.cut(self.mask(value), limit)  # short enough to mask whole
        head, tail = _head_tail(limit)
        return self._joined(self.mask(value[:head + MASK_MARGIN])[:head], len(value) - head - tail,
                            self.mask(value[-(tail + MASK_MARGIN):])[-tail:])

    def status(self, value: str | None, limit: int = MESSAGE_CHARS) -> str:
        """A status message (a test's, a keyword's failure) as :meth:`text` shows it; an
        ``*HTML*`` one (``Set Test Message``, ``rebot --merge``) as its visible text, a browser
        driver's native stack folded."""
        return self.text(fold(visible_status(value)) if value else value, limit)

    def cut(self, value: str, limit: int) -> str:
        """``value`` (masked already) shortened to about ``limit``, head and tail kept; a
        ``Cut`` that ``grow`` may give back whole."""
        if len(value) <= limit + CUT_MARK:  # cutting less than its own mark saves nothing
            return value
        self.soft_cuts += 1
        return Cut(_shortened(value, limit), value)

    def _joined(self, head: str, cut: int, tail: str) -> str:
        self.message_truncated = True  # a huge text: masked only around what is shown
        return _marked(head, cut, tail)

    @property
    def texts_cut(self) -> bool:
        """Whether the answer holds a shortened text (message_truncated)."""
        return self.message_truncated or self.soft_cuts > 0

    def grow(self, data: Any) -> None:
        """Give shortened texts of ``data`` (a view's finished page) back whole, in place,
        as far as the budget's room allows: the cheapest first, so the most texts come
        whole; identical texts together (a keyword's failure repeated by its test)."""
        places: dict[str, list[tuple[Any, Any]]] = {}
        _find_cuts(data, places)
        if not places:
            self.soft_cuts = 0
            return
        room = self.budget - estimate_tokens(data) - _ENVELOPE_TOKENS
        self.soft_cuts = 0  # what the page holds, not what was made (dropped items too)
        grown: list[tuple[str, list[tuple[Any, Any]]]] = []
        for whole, where in sorted(places.items(), key=lambda item: len(item[0]) * len(item[1])):
            shown = str(where[0][0][where[0][1]])
            extra = (estimate_tokens(_compact(whole)) - estimate_tokens(_compact(shown))) * len(where)
            if extra > room:
                self.soft_cuts += len(where)
                continue
            room -= extra
            grown.append((shown, where))
            for container, key in where:
                container[key] = whole
        while grown and estimate_tokens(data) + _ENVELOPE_TOKENS > self.budget:
            shown, where = grown.pop()  # the estimate of parts misjudged the whole: undo
            for container, key in where:
                container[key] = Cut(shown, container[key])
            self.soft_cuts += len(where)

    def fit(self, envelope: dict[str, Any], items: Iterable[Any], key: str,
            beside: tuple[str, list[list[Any]]] | None = None) -> int:
        """Put as many ``items`` under ``envelope[key]`` as the budget allows; return how many.
        ``items`` may be a generator: the ones after the budget is reached are never made.
        ``beside``: (another key, what each item brings along under it), e.g. the nodes a
        search hit needs that no earlier hit brought; an item and its companions go together.

        At least one item is kept when any exists, shortened harder if needed, so a page
        always moves forward.
        """
        envelope[key] = []
        if beside is not None:
            envelope[beside[0]] = []
        used = estimate_tokens(envelope) + _ENVELOPE_TOKENS
        kept = 0
        for number, item in enumerate(items):
            along = beside[1][number] if beside is not None else []
            cost = estimate_tokens(item) + 1 + sum(estimate_tokens(a) + 1 for a in along)
            if used + cost > self.budget and kept:
                self.budget_truncated = True
                break
            envelope[key].append(item)
            if beside is not None:
                envelope[beside[0]].extend(along)
            used += cost
            kept += 1
        return kept


def clean_cut(text: str, at: int, mask: Callable[[str], str]) -> bool:
    """Whether ``text`` may be cut at ``at`` and each piece masked alone: masking the two
    pieces gives what masking them together does, within MASK_MARGIN either side, so no
    secret, nor the name that makes a value secret, straddles the cut."""
    left, right = text[max(0, at - MASK_MARGIN):at], text[at:at + MASK_MARGIN]
    return mask(left) + mask(right) == mask(left + right)


def _marked(head: str, cut: int, tail: str) -> str:
    return f"{head}… [{cut} characters cut] …{tail}"


def _shortened(value: str, limit: int) -> str:
    """``value`` to about ``limit`` characters: its head and tail, and where RF's ``first !=
    second`` differ when neither shows it (two long JSON bodies that differ in one field)."""
    head, tail = _head_tail(limit)
    if " != " in value:
        from itertools import pairwise

        from .differences import first_difference, kept_around

        points = first_difference(value)
        if points is not None and not (points[0] < head and points[1] >= len(value) - tail):
            ranges = kept_around(value, limit, points)
            pieces = [value[ranges[0][0]:ranges[0][1]]]
            for (_, end), (start, stop) in pairwise(ranges):
                pieces.append(f"… [{start - end} characters cut] …{value[start:stop]}")
            return "".join(pieces)
    return _marked(value[:head], len(value) - head - tail, value[-tail:])


def _find_cuts(value: Any, places: dict[str, list[tuple[Any, Any]]]) -> None:
    """Where ``value`` holds ``Cut`` texts: (container, key) by whole text."""
    entries = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, list) else ()
    for key, item in entries:
        if isinstance(item, Cut):
            places.setdefault(item.whole, []).append((value, key))
        elif isinstance(item, (dict, list)):
            _find_cuts(item, places)


def _head_tail(limit: int) -> tuple[int, int]:
    """How many characters a cut text keeps of its head and of its tail."""
    head = limit * 2 // 3
    return head, limit - head


# What the response adds around a view: the envelope's flags, counts and a cursor.
_ENVELOPE_TOKENS = estimate_tokens({
    "ok": True, "run_id": 123456, "estimated_tokens": 12345, "truncated": True,
    "message_truncated": True, "budget_truncated": True, "page_truncated": True,
    "next_cursor": "x" * 96, "view": "failure_path", "projection": "warnings",
}) + 10


def make_cursor(binding: dict[str, Any], position: Any) -> str:
    """An opaque cursor bound to what produced it (run, view, selector, filters, order),
    carrying the number of the page it leads to (the usage record counts pages followed)."""
    import base64  # here, as in read_cursor: most answers hold no cursor (issue #19)

    call = usage.current()
    payload = {"b": _binding_digest(binding), "p": position, "n": (call.page if call else 1) + 1}
    return base64.urlsafe_b64encode(_compact(payload).encode()).decode().rstrip("=")


def read_cursor(cursor: str | None, binding: dict[str, Any]) -> Any:
    """The position stored in ``cursor``; INVALID_CURSOR if it is garbage or was made for
    another run, view, selector, projection or order."""
    if not cursor:
        return None
    import base64

    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        payload = json.loads(base64.urlsafe_b64decode(padded.encode()))
        digest, position, page = payload["b"], payload["p"], int(payload.get("n", 2))
    except (ValueError, KeyError, TypeError):
        raise ResultError(INVALID_CURSOR, "The cursor is not one this server made.",
                          "Pass next_cursor exactly as returned, or omit it to start over.") from None
    if digest != _binding_digest(binding):
        raise ResultError(
            INVALID_CURSOR,
            "The cursor belongs to another query (run, view, selector, projection or order).",
            "Use a cursor only with the same arguments that produced it.",
        )
    call = usage.current()
    if call is not None:
        call.page = page
    return position


def _binding_digest(binding: dict[str, Any]) -> str:
    return digest(json.dumps(binding, sort_keys=True).encode()).hex()


_UNMASKED_KEYS = frozenset({"next_cursor", "prev_cursor", "expand_selector", "group_id"})


def mask_strings(data: Any, redactor_: Redactor) -> tuple[Any, int]:
    """Every string in ``data`` (dicts and lists, as dumped from a response) masked; the
    safety net after the views, which mask before they shorten (``service._finish``)."""
    if isinstance(data, str):
        return redactor_.text(data)
    if isinstance(data, list):
        count, out = 0, []
        for item in data:
            masked, n = mask_strings(item, redactor_)
            out.append(masked)
            count += n
        return out, count
    if isinstance(data, dict):
        count, result = 0, {}
        for key, value in data.items():
            if key in _UNMASKED_KEYS:
                result[key] = value
                continue
            result[key], n = mask_strings(value, redactor_)
            count += n
        return result, count
    return data, 0
