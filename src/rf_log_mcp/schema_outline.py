"""Schemas as tools/list sends them (read side, MCP). Hosts that pass the tool listing to the
model pay for every token of it in every conversation, so output schemas are outlines (each
field's name and type, two levels deep; the meanings are in the field guide, field_guide.py,
resource rf://docs/fields) and input schemas lose what says nothing to a caller (titles,
``default: null``, the null option of an optional argument)."""

from __future__ import annotations

import functools
from typing import Any

# Of the envelope every answer carries, the outline names what a caller acts on; the
# instructions explain the rest.
_ENVELOPE_LISTED = ("ok", "run_id", "next_cursor", "error")


@functools.cache
def envelope_fields() -> tuple[str, ...]:
    """The fields of the envelope every answer carries, in its model's order (read when
    first needed: the server starts without the models)."""
    from .models import Envelope

    return tuple(Envelope.model_fields)


@functools.cache
def _envelope_unlisted() -> tuple[str, ...]:
    return tuple(name for name in envelope_fields() if name not in _ENVELOPE_LISTED)

OUTLINE_DEPTH = 2  # levels of an output schema spelled out; deeper objects are "object"


def outline(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0,
            nullable: bool = False) -> dict[str, Any]:
    """``schema`` (pydantic's) as an outline every response still conforms to: the
    envelope's fields a caller acts on and each payload's fields with their types, two
    levels deep, references resolved, no titles, defaults, required lists or descriptions
    (the envelope's are in the instructions, every other one in the field guide)."""
    schema = _resolved(schema, defs)
    # Results are sent without null fields but the envelope's (server._respond), so only
    # those are typed null (``nullable``): any other optional field is simply absent.
    options = [_resolved(o, defs) for o in schema.get("anyOf", ()) if o != {"type": "null"}]
    null = ["null"] if nullable and len(options) < len(schema.get("anyOf", ())) else []
    if len(options) == 1:
        schema = options[0]
    elif options:
        kinds = sorted({o.get("type", "object") for o in options})
        return {"type": kinds + null if len(kinds) + len(null) > 1 else kinds[0]}
    kind = schema.get("type") or ("object" if "properties" in schema else None)
    shape: dict[str, Any] = {}  # no type known (Any): no constraint
    if kind:
        shape["type"] = [kind, *null] if null else kind
    if kind == "array" and depth < OUTLINE_DEPTH:
        shape["items"] = outline(schema.get("items", {}), defs, depth + 1)
    elif "properties" in schema and depth < OUTLINE_DEPTH:
        shape["properties"] = {name: outline(value, defs, depth + 1,
                                             nullable=not depth and name in _ENVELOPE_LISTED)
                               for name, value in schema["properties"].items()
                               if depth or name not in _envelope_unlisted()}
        if not depth and "error" in shape["properties"]:  # code, message, hint: instructions
            shape["properties"]["error"] = {"type": ["object", "null"]}
    return shape


def _resolved(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    reference = schema.get("$ref")
    return defs[reference.rsplit("/", 1)[-1]] if isinstance(reference, str) else schema


def compact_input(schema: dict[str, Any]) -> dict[str, Any]:
    """An input schema without titles and null defaults; an optional argument's
    ``anyOf [X, null]`` becomes X (leaving it out is how a caller says "none"). The server
    still takes an explicit null."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" or (key == "default" and value is None):
            continue
        if key == "properties":
            out[key] = {name: compact_input(prop) for name, prop in value.items()}
        elif key == "anyOf":
            options = [o for o in value if o != {"type": "null"}]
            if len(options) == 1:
                out.update(compact_input(options[0]))
            else:
                out[key] = [compact_input(o) for o in value]
        elif isinstance(value, dict):
            out[key] = compact_input(value)
        else:
            out[key] = value
    return out
