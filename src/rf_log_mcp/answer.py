"""An answer as it is sent: plain JSON data, read by attribute like its model (read side).

The views build dicts and service.py finishes them into an ``Answer``; the MCP server checks
each against its pydantic model (the models package, the contract and the output schemas) before
sending it, and the command line prints it without loading pydantic at all: models cost a
light command most of its start (issue #19). A test keeps the two equal: every answer is
what its model would dump (tests/test_answers.py).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any

# Answer fields that a dict's own attributes hide (tests/test_answers.py keeps this whole).
DICT_NAMED_FIELDS = frozenset({"values"})


class Answer(dict):  # type: ignore[type-arg]
    """A JSON object whose fields also read as attributes; a field the answer leaves out
    reads as None, as an unset optional field of its model does. Nested objects are
    Answers too, so ``answer.summary.totals.failed`` reads like the model. A field named
    like a dict method (``values``: DICT_NAMED_FIELDS) is read by key."""

    # get_attachment's image, sent beside the JSON; unset it reads None (``__getattr__``),
    # so the many nested Answers of a page cost no __init__ call
    __slots__ = ("_image",)
    _image: bytes | None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy/pickle protocols ask for these
            raise AttributeError(name)
        return self.get(name)


def as_answer(data: Any) -> Any:
    """``data`` as JSON the way a model dumps it with ``exclude_none``: fields that are None
    left out, tuples as lists, every object an Answer."""
    if isinstance(data, dict):
        return Answer({key: as_answer(value) for key, value in data.items() if value is not None})
    if isinstance(data, (list, tuple)):
        return [as_answer(item) for item in data]
    return data
