"""Pydantic models at the boundary: what tools and ``--json`` commands return.

The MCP output schemas and the README tables are generated from these, never written twice.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class ErrorInfo(BaseModel):
    code: str = Field(description="Stable error code, e.g. INCOMPLETE_RESULT or FILE_NOT_FOUND.")
    message: str = Field(description="What went wrong, naming the file or value involved.")
    hint: str | None = Field(default=None, description="What to do about it.")


class ParseResultResponse(BaseModel):
    """Result of importing one output.xml / output.json (or finding it already imported)."""

    ok: bool
    run_id: int | None = Field(default=None, description="Use this id in every later call.")
    source_format: Literal["xml", "json"] | None = None
    status: Literal["complete", "interrupted"] | None = Field(
        default=None, description="'interrupted': a cut file imported with allow_incomplete.",
    )
    deduplicated: bool | None = Field(
        default=None, description="True when the same bytes were imported before: same run_id.",
    )
    source_path: str | None = None
    generator: str | None = None
    rf_version: str | None = None
    name: str | None = Field(default=None, description="Root suite name.")
    result_status: str | None = Field(default=None, description="Root suite status.")
    total: int | None = None
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None
    node_count: int | None = None
    message_count: int | None = None
    error_count: int | None = None
    seconds: float | None = Field(default=None, description="Wall time of this call.")
    error: ErrorInfo | None = None
