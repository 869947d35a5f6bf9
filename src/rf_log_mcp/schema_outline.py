"""Output schemas as outlines (read side, MCP): what tools/list sends for each tool's output
schema. Hosts that pass output schemas to the model pay for every token of them in every
conversation, so the listing keeps each field's name and type, two levels deep, and leaves
the meanings to the field guide (field_guide.py, resource rf://docs/fields)."""

from __future__ import annotations

from typing import Any

from .models import Envelope

_ENVELOPE_FIELDS = tuple(Envelope.model_fields)

OUTLINE_DEPTH = 2  # levels of an output schema spelled out; deeper objects are "object"


def outline(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """``schema`` (pydantic's) as an outline every response still conforms to: the
    envelope and each payload's fields with their types, two levels deep, references
    resolved, no titles, defaults or required lists; descriptions on the payload's own
    fields only (the envelope's are in the instructions, the rest in the field guide)."""
    schema = _resolved(schema, defs)
    options = [_resolved(o, defs) for o in schema.get("anyOf", ()) if o != {"type": "null"}]
    nullable = len(options) < len(schema.get("anyOf", ()))
    if len(options) == 1:
        schema = {**options[0], **{k: v for k, v in schema.items() if k == "description"}}
    elif options:
        kinds = sorted({o.get("type", "object") for o in options})
        return {"type": kinds + (["null"] if nullable else []) if len(kinds) > 1 or nullable
                else kinds[0]}
    kind = schema.get("type") or ("object" if "properties" in schema else None)
    shape: dict[str, Any] = {}  # no type known (Any): no constraint
    if kind:
        shape["type"] = [kind, "null"] if nullable else kind
    if depth == 1 and schema.get("description"):
        shape["description"] = schema["description"]
    if kind == "array" and depth < OUTLINE_DEPTH:
        shape["items"] = outline(schema.get("items", {}), defs, depth + 1)
    elif "properties" in schema and depth < OUTLINE_DEPTH:
        shape["properties"] = {name: outline(value, defs, depth + 1)
                               for name, value in schema["properties"].items()}
        if depth == 0:  # the envelope: its fields are explained once, in the instructions
            for name in _ENVELOPE_FIELDS:
                shape["properties"].get(name, {}).pop("description", None)
    return shape


def _resolved(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    reference = schema.get("$ref")
    return defs[reference.rsplit("/", 1)[-1]] if isinstance(reference, str) else schema
