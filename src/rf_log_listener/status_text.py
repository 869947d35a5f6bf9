"""Status messages as text: RF's ``*HTML*`` status messages read as a reader of log.html
reads them, and a merged test's message read as the failure it reports now.

Shared by both sides (like ``signatures.py``): the store keeps every message exactly as RF
wrote it; ``history.py`` signs a failure by the text below, and the read side shows it.

RF marks a status message as HTML by starting it with ``*HTML*`` (``Set Test Message``,
``Fail``, a library's exception). ``rebot --merge`` (the usual re-run of failed tests, then
one report) writes each merged test's message so (``robot.result.merger``, the same from
RF 6.0 to 7.x), the test's own message escaped inside::

    *HTML* <span class="merge">Test has been re-executed and results merged.</span><hr>
    <span class="new-status">New status:</span> <span class="fail">FAIL</span><br>
    <span class="new-message">New message:</span> Connection refused<br><hr>
    <span class="old-status">Old status:</span> ...

so without this a merged failure showed as markup and signed unlike the same failure in the
runs before the merge.
"""

from __future__ import annotations

import functools
import re

HTML_PREFIX = "*HTML*"


@functools.cache
def _patterns() -> tuple[re.Pattern[str], ...]:
    """Compiled at the first HTML status message, not by every command that imports this
    (issue #19: six compilations and the html module are ~4 ms of a 70 ms command)."""
    return (
        # A tag holds no "<": a text of many unclosed "<b" is scanned once, not from each
        # of them to its end (comments: ``_without_comments``, for the same reason).
        re.compile(r"(?:<(?:br|hr)\b[^<>]*>\s*)+\Z", re.I),  # trailing breaks
        re.compile(r"<(?:br|hr|/p|/div|/li|/tr|/h[1-6])\b[^<>]*>", re.I),  # line breaks
        re.compile(r"<[!/?]?[A-Za-z][^<>]*>"),  # other tags
        # rebot --merge's messages (``robot.result.merger``); "Test" or, with --rpa, "Task"
        re.compile(r'\*HTML\* <span class="merge">(?:Test|Task) has been re-executed and results'
                   r' merged\.</span><hr><span class="new-status">New status:</span>'
                   r' <span class="\w+">\w+</span><br>'
                   r'(?:<span class="new-message">New message:</span> (?P<new>.*?)<br>)?<hr>', re.S),
        re.compile(r"\*HTML\* (?:Suite|Test|Task) added from merged output\.(?:<hr>(?P<new>.*))?\Z",
                   re.S),
        re.compile(r"\*HTML\* (?:Test|Task) has been re-executed and results merged\."
                   r" Latter result had <span class=\"skip\">SKIP</span> status and was"
                   r" ignored\. Message:\n.*?(?:<hr>Original message:\n(?P<new>.*))?\Z", re.S),
    )


def is_html(message: str | None) -> bool:
    return bool(message) and message.startswith(HTML_PREFIX)  # type: ignore[union-attr]


def visible(message: str) -> str:
    """``message`` as log.html shows it: an ``*HTML*`` one without its markup (line breaks
    for ``<br>``, ``<hr>`` and ends of blocks, entities as their characters), any other as
    it is. A plain message RF escaped into HTML (``html_escape``, links and all) reads back
    exactly as it was."""
    if not message.startswith(HTML_PREFIX):
        return message
    return markup_text(message[len(HTML_PREFIX):].lstrip())


def markup_text(markup: str) -> str:
    """The text of an HTML fragment, its line breaks kept (see ``visible``)."""
    from html import unescape  # html.entities is a large table: loaded when needed

    trailing, breaks, tags = _patterns()[:3]
    markup = _without_comments(markup)
    return unescape(tags.sub("", breaks.sub("\n", trailing.sub("", markup))))


def _without_comments(markup: str) -> str:
    """``markup`` without its ``<!-- -->`` comments, in one pass (an unclosed one stays)."""
    kept, at = [], 0
    while (start := markup.find("<!--", at)) >= 0:
        end = markup.find("-->", start + 4)
        if end < 0:
            break
        kept.append(markup[at:start])
        at = end + 3
    kept.append(markup[at:])
    return "".join(kept)


def current(message: str) -> str:
    """The failure ``message`` reports now, as text: a merged test's newest message (the one
    kept, when the newer result was a skip rebot ignored), the visible text of any other
    HTML message, a plain one as it is."""
    if not message.startswith(HTML_PREFIX):
        return message
    for shape in _patterns()[3:]:
        found = shape.match(message)
        if found is not None:
            return markup_text(found["new"] or "")
    return visible(message)
