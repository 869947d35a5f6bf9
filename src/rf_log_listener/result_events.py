"""RF's result objects -> the live listener's flat events (capture side, inside robot).

:class:`OpenNodes` is the stack of open suites, tests, keywords and control structures, and the
only code that turns RF's result objects into the OPEN, CLOSE and MESSAGE events of
:class:`~rf_log_listener.event_pipe.EventBatcher`. The listener drives it in one of two ways:

* RF 7.2+ (``follows_the_model()``): robot appends every step of the running test to its
  result model as the step starts, and every message it writes to the output to the result
  of the step that logged it, and empties a test's model only after end_test. The listener
  takes suite and test events from RF and reads the steps from the model (:meth:`follow`): all
  that is left of a test at end_test, and what has finished so far, every half second, from
  the listener's thread while robot runs on. RF then calls the listener a few times per test
  instead of twice per step and once per message, which is most of what a listener costs in
  a keyword-heavy run.
* RF 7.0/7.1 keep no messages in the model: steps come from RF's start_*/end_* calls
  (:meth:`open` and :meth:`close`) and messages from log_message.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

from . import events as ev
from .event_pipe import CLOSE, IDENTITY, MESSAGE, OPEN

# Attributes copied from RF's result objects into Node.fields when an item closes.
_FIELDS: dict[str, tuple[str, ...]] = {
    ev.FOR: ("flavor", "values", "start", "mode", "fill"),
    ev.WHILE: ("condition", "limit", "on_limit", "on_limit_message"),
    ev.IF: ("condition",), ev.ELSE_IF: ("condition",),
    ev.EXCEPT: ("patterns", "pattern_type"),
    ev.VAR: ("scope", "separator"),
    ev.RETURN: ("values",), ev.ERROR: ("values",),
}
_KEYWORD_TYPES = ev.KEYWORD_TYPES
_NAMED = (ev.GROUP, ev.VAR)  # the only control structures with a name (RF 7 deprecates it elsewhere)
_WITH_FIXTURES = _KEYWORD_TYPES | {ev.TEST, ev.SUITE}
# An item robot has begun to report has one of these until it ends (RF's StatusReporter);
# one it has only created has the model's default, FAIL.
_STARTED = ("NOT SET", "NOT RUN")


# (library or resource, keyword name) of the keywords this process has run: the listener
# records where those are defined (listener._send_definitions), not every keyword of every
# library (RF finds a keyword's line with inspect: BuiltIn's would cost robot 70 ms a run).
KEYWORDS_RUN: set[tuple[str, str]] = set()


def open_event(item: Any) -> tuple[str, tuple[Any, ...]]:
    """An item's type and its OPEN event (layout: see EventBatcher)."""
    ntype = item.type
    if ntype in _KEYWORD_TYPES:
        if item.owner:
            KEYWORDS_RUN.add((item.owner, item.source_name or item.name or ""))
        args, assign = item.args, item.assign
        return ntype, (OPEN, ntype, "keyword", item.name or "", item.owner or None,
                       _texts(args) if args else None, tuple(assign) if assign else None, None)
    name = item.name if ntype in _NAMED else ""
    return ntype, (OPEN, ntype, ntype, name or "", None, None, None, None)


def suite_texts(suite: Any) -> dict[str, Any]:
    """A suite's documentation and metadata: sent when it starts (a running run's summary
    shows them, a run killed mid-suite keeps them) and again when it ends, final (``Set
    Suite Metadata`` and ``Set Suite Documentation`` change them while it runs)."""
    fields: dict[str, Any] = {}
    if suite.doc:
        fields["doc"] = suite.doc
    if suite.metadata:
        fields["metadata"] = dict(suite.metadata)
    return fields


def test_texts(test: Any) -> dict[str, Any]:
    """A test's documentation, tags, timeout and (RF 7.5+) metadata: sent when it starts and
    again when it ends, as a suite's are (``Set Tags``, ``Remove Tags``, ``Set Test
    Documentation`` change them while it runs)."""
    fields = _doc_tags_timeout(test)
    if getattr(test, "metadata", None):  # RF 7.5+
        fields["metadata"] = dict(test.metadata)
    return fields


# A suite's or test's texts sent at its start that a keyword emptied while it ran: the CLOSE
# event names them with None, and the store drops them (event_pipe.apply_batch).
_EMPTIED = {"doc": None, "tags": None, "timeout": None, "metadata": None}


def _texts(args: Any) -> tuple[str, ...]:
    """Arguments as RF writes them to its output files: each one's ``str()``. Library code
    calling ``BuiltIn().run_keyword("Log", b"...")`` passes bytes, dates, numbers, objects."""
    args = tuple(args)
    for arg in args:
        if type(arg) is not str:
            return tuple(arg if type(arg) is str else ev.as_text(arg) for arg in args)
    return args


def close_event(item: Any, ntype: str, parent_type: str | None) -> tuple[Any, ...]:
    """An item's CLOSE event: its final status, times and the fields known only at its end.
    Times travel as datetime's own 10-byte state (``__reduce__``, several times cheaper than
    isoformat here in robot); the writer side turns them into text."""
    assign: Any = None
    if ntype in _KEYWORD_TYPES:
        fields = _doc_tags_timeout(item)
        if item.source_name:
            fields["source_name"] = item.source_name
    elif ntype == ev.TEST:
        fields = {**_EMPTIED, **test_texts(item)}
    elif ntype == ev.SUITE:
        fields = {**_EMPTIED, **suite_texts(item)}
    else:
        fields = {}
        if ntype == ev.FOR:
            assign = list(item.assign) or None
        elif ntype == ev.EXCEPT:
            assign = item.assign or None
        elif ntype == ev.ITERATION and parent_type == ev.FOR:  # WHILE ones have none
            assign = dict(item.assign) or None
        elif ntype == ev.VAR and item.value:
            fields["value"] = list(item.value)
        for key in _FIELDS.get(ntype, ()):
            value = getattr(item, key, None)
            if value:  # None, "", empty tuples: nothing to keep
                fields[key] = [ev.as_text(v) for v in value] if key in ("values", "patterns") \
                    else (value if isinstance(value, int) else ev.as_text(value))
    start, elapsed = item.start_time, item.elapsed_time
    return (CLOSE, item.status, item.message or "",
            start.__reduce__()[1][0] if start is not None else None,
            elapsed.total_seconds() if elapsed is not None else None, assign, fields or None)


def _doc_tags_timeout(result: Any) -> dict[str, Any]:
    """The non-empty doc, tags and timeout of a test or keyword result."""
    fields: dict[str, Any] = {}
    if result.doc:
        fields["doc"] = result.doc
    if result.tags:
        fields["tags"] = list(result.tags)
    if result.timeout:
        fields["timeout"] = str(result.timeout)
    return fields


def message_event(item: Any) -> tuple[Any, ...]:
    """A message's MESSAGE event (the hottest line of a TRACE run's capture)."""
    try:
        level, text, html, stamp = _message_fields(item)
    except AttributeError:  # not made by RF's logger: no internals to read
        level, text, html, stamp = item.level, item.message, item.html, item.timestamp
    if type(text) is not str:  # a delayed message: reading it makes RF resolve it
        text = item.message
    return MESSAGE, level, text, html, stamp.__reduce__()[1][0] if stamp is not None else None


# Where a frame is in its result's items (setup, body, teardown). A child frame above a
# frame is always the item of its stage: the setup, body item number ``sent``, the teardown.
# _EARLY: the body is followed, and a setup may still come (OpenNodes._send_keywords_before_setup)
_SETUP, _BODY, _TEARDOWN, _AFTER, _EARLY = 0, 1, 2, 3, 4


class OpenNodes:
    """The open nodes, outermost first, and what of their items was sent.

    Each frame is ``[result, type, stage, sent, running_open]``: ``stage`` is where the
    frame is in its result's items (``_SETUP``, ``_BODY``, ``_TEARDOWN``, ``_AFTER`` the
    teardown; ``_EARLY``: the body, while a setup may still come after a listener's
    keywords), ``sent`` counts the body items (steps and messages) sent already.
    ``running_open`` is the OPEN event :meth:`follow` sent while the item ran: other
    listeners may still change its name or arguments (a listener masking secrets in
    end_keyword), and the output file has them as they stand at the end, so at its close they
    are compared and sent again if they changed. ``roots`` are the levels of the open suites
    and tests, opened from RF's events; the frames above the innermost root come from
    :meth:`follow`.
    """

    def __init__(self, extend: Callable[[tuple[Any, ...]], None]) -> None:
        self.frames: list[list[Any]] = []
        self.roots: list[int] = []
        self.root_names: list[str] = []  # the names the open roots were sent with
        self.extend = extend

    def open(self, result: Any, ntype: str, event: tuple[Any, ...], running: bool = False) -> None:
        self.frames.append([result, ntype, _SETUP if ntype in _WITH_FIXTURES else _BODY, 0,
                            event if running else None])
        self.extend(event)

    def close(self) -> None:
        result, ntype, _, _, running_open = self.frames.pop()
        if running_open is not None:
            now = open_event(result)[1]
            if now != running_open:
                self.extend((IDENTITY, *now[3:7]))
        self.extend(close_event(result, ntype, self.frames[-1][1] if self.frames else None))

    def open_root(self, result: Any, ntype: str, event: tuple[Any, ...]) -> None:
        self.roots.append(len(self.frames))
        self.root_names.append(event[3])
        self.open(result, ntype, event)

    def close_root(self) -> None:
        """Close the innermost suite or test. Another listener may have renamed it since it
        opened: it is stored with its final name, the one output.json has (output.xml has
        the name from before any listener ran)."""
        self.roots.pop()
        name = self.frames[-1][0].name
        if name != self.root_names.pop():
            self.extend((IDENTITY, name, None, None, None))
        self.close()

    def innermost_type(self) -> str | None:
        return self.frames[-1][1] if self.frames else None

    def follow(self, ended: bool) -> None:
        """Send what robot added to the innermost open suite or test since the last look.

        Robot's thread changes the model while this runs (the ticker calls it from another
        thread at any bytecode of robot's), so what is sent rests only on facts that stay
        true once seen, read in an order that makes them safe:

        * a body (steps and messages) only grows: robot appends a step as it starts and a
          message as it is logged, to the innermost item still reporting (RF's logger pops
          an item only after every listener's end method ran), so a step followed by anything
          in its parent's body has ended, end processing included;
        * a setup is configured (``has_setup``) before the body's first step is appended,
          and a teardown (``has_teardown``) after its last step ended; so ``has_teardown``
          is read before the body's length and ``has_setup`` after it: a teardown seen
          means every step is within that length and has ended, and a step within that
          length means a setup, if there is one, is seen; but for the keywords a listener
          runs before RF makes the setup (``start_test``/``start_keyword``) and after the
          teardown (``end_test``/``end_keyword``), told apart by their start times
          (:meth:`_send_keywords_before_setup`, :func:`_before_teardown`);
        * an item is final once a later one follows it (in the body, or the teardown after
          the body, or the body's first step after the setup) or its parent has ended; only
          then are its status, times and fields final, and it is sent whole;
        * the item still running is sent open (and stays a frame) once RF's StatusReporter
          has begun reporting it (status NOT SET/NOT RUN and start time set); before that
          RF is still filling it in. Messages are final when they appear; a message logged
          after the teardown (a return value's assignment) is sent once the teardown is
          closed, so it cannot land inside it.

        Setup, body and teardown are followed each with its own position: one position in
        their concatenation moves under the reader when the body grows after the teardown
        or a setup appears after a message.

        ``ended``: the suite or test has no more items to come (robot is at its start of
        a child, or at its end); the root itself stays open for the caller to close.
        """
        if self.roots:
            self._advance(self.roots[-1], ended)

    def _advance(self, level: int, ended: bool) -> None:
        frame = self.frames[level]
        result, ntype, stage = frame[0], frame[1], frame[2]
        # In this order (see follow()): the teardown before the body's length, the setup after.
        fixtures = ntype in _WITH_FIXTURES
        has_teardown = fixtures and result.has_teardown
        body = _body_items(result) if ntype != ev.SUITE else ()
        if ntype == ev.WHILE:
            body = _while_in_file_order(body)
        count = len(body)  # what robot appends from here on waits for the next look
        child_open = level + 1 < len(self.frames)
        if stage == _EARLY:
            if result.has_setup:  # read after the body's length, as in the setup stage
                if child_open:  # a listener's keyword: it ended before RF made the setup
                    self._advance(level + 1, True)
                    self.close()
                    child_open = False
                    frame[3] += 1
                frame[2] = stage = _SETUP
            else:
                stage = _BODY
        if stage == _SETUP:
            if fixtures and result.has_setup:
                if not child_open:
                    self._send_keywords_before_setup(frame, body, count)
                finished = ended or has_teardown or _has_step(body, frame[3], count)
                if child_open:
                    self._advance(level + 1, finished)
                    if not finished:
                        return
                    self.close()
                    child_open = False
                elif finished:
                    self._send_whole(result.setup, ntype)
                else:
                    self._open_running(result.setup)
                    return
            elif not (ended or _has_step(body, frame[3], count)):
                self._send_messages(frame, body, count)  # all the body holds, so far
                return
            elif ntype == ev.SUITE:
                self._send_listener_steps(result, "_setup")
            elif fixtures and not (ended or has_teardown):
                frame[2] = _EARLY  # a listener's keywords may come before a setup
            if frame[2] == _SETUP:
                frame[2] = _BODY
            stage = _BODY
        if stage == _BODY:
            sent = frame[3]
            last_final = ended or has_teardown
            # what came after the teardown began waits for it to end
            end = _before_teardown(body, sent, count, result.teardown) if has_teardown else count
            if child_open:  # body item number `sent` went out open
                # ended if anything follows it, or if it began before a teardown seen now
                # (one that began after it: a keyword a listener ran in end_test or
                # end_keyword, opened when the teardown had not been seen yet)
                finished = ended or count > sent + 1 or (has_teardown and end > sent)
                self._advance(level + 1, finished)
                if not finished:
                    return
                self.close()
                child_open = False
                sent += 1
            send_whole = self._send_whole
            while sent < end:
                item = body[sent]
                if sent + 1 < end or last_final or isinstance(item, _Message):
                    send_whole(item, ntype)
                    sent += 1
                    continue
                frame[3] = sent
                self._open_running(item)
                return
            frame[3] = sent
            if not has_teardown:
                if ended and ntype == ev.SUITE:
                    self._send_listener_steps(result, "_teardown")
                return
            frame[2] = stage = _TEARDOWN
        if stage == _TEARDOWN:
            if child_open:
                self._advance(level + 1, ended)
                if not ended:
                    return
                self.close()
            elif ended:
                self._send_whole(result.teardown, ntype)
            else:
                self._open_running(result.teardown)
                return
            frame[2] = _AFTER
        self._send_messages(frame, body, count)  # logged after the teardown

    def _send_keywords_before_setup(self, frame: list[Any], body: Any, count: int) -> None:
        """Send the body's items that ran before its setup began: keywords a listener ran in
        ``start_test`` or ``start_keyword``, which robot runs before it makes the test's or
        keyword's setup (its files have them before the setup; RF's model, and the writer,
        put the setup first). They ended before the setup began, and a step after them tells
        the setup stage the setup ended: the frame's position is left at the first item
        that came after the setup began (a step robot appended once it had ended)."""
        sent = frame[3]
        if sent == count:
            return
        began = frame[0].setup.start_time  # None: not begun, so nothing came after it yet
        while sent < count:
            item = body[sent]
            if began is not None and not isinstance(item, _Message) and (
                    item.start_time is None or item.start_time >= began):
                break
            self._send_whole(item, frame[1])
            sent += 1
        frame[3] = sent

    def _send_listener_steps(self, suite: Any, fixture: str) -> None:
        """Keywords a listener ran in ``start_suite`` or ``end_suite`` of a suite without a
        setup or teardown: RF's model keeps them in a setup or teardown without a name
        (``has_setup`` is false), robot writes them as keywords of the suite, and they are
        sent so (the writer puts them where RF's reader of output.xml does). Read from the
        model's own slot: ``suite.setup`` would make a setup where robot's thread may be
        making one."""
        made = getattr(suite, fixture, None)
        if made is not None:
            for item in _body_items(made):
                self._send_whole(item, ev.SUITE)

    def _open_running(self, item: Any) -> None:
        """Open ``item``, the innermost frame's item still running, and follow it, once RF has
        begun to report it; until then RF is still filling it in, and it waits."""
        if item.status in _STARTED and item.start_time is not None:
            self.open(item, *open_event(item), running=True)
            self._advance(len(self.frames) - 1, False)

    def _send_messages(self, frame: list[Any], body: Any, count: int) -> None:
        """Send the body's items from ``frame``'s position up to ``count``: messages (and,
        should one be there, a finished step) that are final as they are."""
        send_whole, ntype = self._send_whole, frame[1]
        for sent in range(frame[3], count):
            send_whole(body[sent], ntype)
        frame[3] = max(frame[3], count)

    def _send_whole(self, item: Any, parent_type: str) -> None:
        if isinstance(item, _Message):
            self.extend(message_event(item))
            return
        if getattr(item, "_elapsed_time", 0) is None:
            # Never run, so never reported, not in the output file either: the iteration
            # a WHILE creates before it finds its condition false or its limit reached.
            return
        ntype, event = open_event(item)
        self.extend(event)
        for child in _items(item, ntype):
            self._send_whole(child, ntype)
        self.extend(close_event(item, ntype, parent_type))


def _before_teardown(body: Any, start: int, count: int, teardown: Any) -> int:
    """Where ``body[start:count]``'s items that came before ``teardown`` began end. After
    it, robot appends the keywords a listener runs in ``end_test`` or ``end_keyword``, and
    the line of a keyword's return value: one may still be running when the teardown is
    seen, which is final only once the teardown has ended."""
    began = teardown.start_time
    if began is None:  # not begun: nothing came after it yet
        return count
    while count > start:
        item = body[count - 1]
        stamp = item.timestamp if isinstance(item, _Message) else item.start_time
        if stamp is not None and stamp < began:
            break
        count -= 1
    return count


def _has_step(body: Any, start: int, count: int) -> bool:
    """Whether ``body[start:count]`` holds a step (anything but a message)."""
    return any(not isinstance(body[index], _Message) for index in range(start, count))


def _items(result: Any, ntype: str) -> Any:
    """A finished result's items in the order robot runs and the output file lists them:
    setup, body (steps and messages), teardown. A suite's tests and child suites are not
    among them: they come from RF's events. Only for items that have ended: while one runs,
    its setup, body and teardown change at different times (see ``OpenNodes.follow``).
    Without setup and teardown (most steps) this is the body's own list, not a copy."""
    if ntype not in _WITH_FIXTURES:
        return _body_items(result) if ntype != ev.WHILE else _while_in_file_order(_body_items(result))
    body = _body_items(result) if ntype != ev.SUITE else ()
    has_setup, has_teardown = result.has_setup, result.has_teardown  # `.setup` would create one
    if not (has_setup or has_teardown):
        return body
    return [*([result.setup] if has_setup else ()), *body,
            *([result.teardown] if has_teardown else ())]


def _while_in_file_order(body: list[Any]) -> list[Any]:
    """A WHILE's items in the order robot's files and log.html have them. RF makes a WHILE's
    first iteration before it calls the listeners' start methods, so keywords a listener
    runs there (``BuiltIn().run_keyword`` in ``start_keyword``/``start_while``) follow that
    iteration in RF's model and precede it in the files. They are put first; until the
    iteration has begun, it is left out: it follows them, and a keyword still running is
    the last item, as the rest of :meth:`OpenNodes.follow` reads a body.

    The body's length is read before the iteration's state: robot's thread may end the
    iteration between the two reads (its status set, its elapsed time not yet) and append
    the next, which would then stand in the first's place."""
    count = len(body)
    if count < 2 or getattr(body[0], "type", None) != ev.ITERATION:
        return body
    first = body[0]
    ended = getattr(first, "_elapsed_time", None) is not None
    began = ended or first.status in _STARTED
    until = first.end_time if ended else None
    moved = 1  # a keyword after the iteration ran before it: before it began, or ended
    while moved < count and getattr(body[moved], "type", None) in _KEYWORD_TYPES \
            and (until is None or body[moved].start_time < until):
        moved += 1
    if moved == 1:
        return body
    return [*body[1:moved], *([first] if began else ()), *body[moved:count]]


def _body_items(result: Any) -> Any:
    # Every result type with a body has this list on RF 7.2-7.5 (tested); should one not,
    # its node is still captured, with no items of its own, instead of stopping capture.
    items = getattr(getattr(result, "body", None), "_items", ())
    return items if type(items) is list else ()


_Message: Any = type(None)  # robot.result.Message, once RF is known to keep messages in bodies
_message_fields: Callable[[Any], tuple[Any, ...]] = operator.attrgetter("level", "message", "html",
                                                                        "timestamp")


def follows_the_model() -> bool:
    """Whether the listener can read steps and messages from RF's result model (RF 7.2+,
    with bodies where this code expects them); also prepares the fast message reader."""
    global _Message, _message_fields
    if rf_version() < (7, 2):
        return False
    from robot.result import Keyword, Message

    if not isinstance(getattr(Keyword().body, "_items", None), list):
        return False
    _Message = Message
    # RF's logger makes messages whose text and time are Python properties; one C-level
    # getter reads what they hold.
    stamp = getattr(getattr(Message, "timestamp", None), "attr_name", "timestamp")
    _message_fields = operator.attrgetter("level", "_message", "html", stamp)
    return True


def rf_version() -> tuple[int, int]:
    """RF's major and minor version; (7, 0) when it cannot be told (RF 7.0's behaviour)."""
    try:
        from robot.version import VERSION
    except ImportError:
        return 7, 0
    release = re.match(r"(\d+)\.(\d+)", VERSION)
    return (int(release[1]), int(release[2])) if release else (7, 0)
