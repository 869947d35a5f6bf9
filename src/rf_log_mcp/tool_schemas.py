"""Each MCP tool's response model and output schema (read side, the MCP server's start).

A tool names its response model in its return type (``Annotated[CallToolResult, "Model"]``):
its ok answers are validated against the model, and its errors are answered in it. The
models (pydantic classes of every answer, ``models/``) are loaded at the first tool call, not
at the server's start; the output schemas the SDK would derive from them are written ahead
into OUTPUT_SCHEMAS (``scripts/output_schemas.py``; a test keeps the file current): deriving
them at start-up builds a validator and a JSON schema of every response model, the largest
part of the server's start after importing the SDK.
"""

import json
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult

OUTPUT_SCHEMAS = Path(__file__).with_name("output_schemas.json")


def response_model_names(tools: Iterable[Tool]) -> dict[str, str]:
    """Each tool's output model, by name: named, not imported, so the server starts without
    the models."""
    return {tool.name: typing.get_args(typing.get_type_hints(tool.fn, include_extras=True)[
        "return"])[1] for tool in tools}


def response_models(names: dict[str, str]) -> dict[str, type[Any]]:
    """Each tool's output model class."""
    from . import models

    return {tool: getattr(models, name) for tool, name in names.items()}


def attach_output_models(tools: Iterable[Tool], names: dict[str, str]) -> None:
    """Give every tool its response model, which the SDK validates each ok answer against
    (it reads the field at each call)."""
    models = response_models(names)
    for tool in tools:
        tool.fn_metadata.output_model = models[tool.name]


def derived_output_schemas(names: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each tool's output schema as the SDK derives it from the tool's return type
    (``Annotated[CallToolResult, Model]``; what OUTPUT_SCHEMAS holds)."""
    from mcp.server.mcpserver.utilities.func_metadata import func_metadata

    schemas = {}
    for tool, model in response_models(names).items():
        def returns() -> None: ...
        returns.__annotations__ = {"return": Annotated[CallToolResult, model]}
        schemas[tool] = func_metadata(returns, structured_output=True).output_schema or {}
    return schemas


def schema_libraries() -> dict[str, str]:
    """The versions the derivation depends on: a file written with others is not used."""
    from importlib.metadata import version

    import pydantic

    return {"mcp": version("mcp"), "pydantic": pydantic.VERSION}


def written_output_schemas(names: dict[str, str]) -> dict[str, dict[str, Any]] | None:
    """OUTPUT_SCHEMAS' schemas, if the file is there and was written by the libraries
    installed here for these tools; else None."""
    try:
        written = json.loads(OUTPUT_SCHEMAS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(written, dict) or written.get("derived_with") != schema_libraries():
        return None
    tools = written.get("tools")
    return tools if isinstance(tools, dict) and set(tools) == set(names) else None


def attach_output_schemas(tools: Iterable[Tool], names: dict[str, str]) -> None:
    """Give every tool its output schema (the SDK reads it at each listing and call), as
    the SDK derives it from the tool's response model (results are validated against the
    model, attached at the first call). Without a usable file (never written, or by other
    versions of the SDK or pydantic) they are derived here."""
    schemas = written_output_schemas(names) or derived_output_schemas(names)
    for tool in tools:
        tool.fn_metadata.output_schema = schemas[tool.name]
