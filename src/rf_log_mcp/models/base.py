"""What every answer model shares: the base class (validators built at first use) and the
envelope every tool's response carries, with its error."""

from __future__ import annotations

from pydantic import BaseModel as _PydanticModel
from pydantic import ConfigDict, Field


class BaseModel(_PydanticModel):
    """Every answer model: its validator is built when first used, not at import, so a
    command pays only for the models it answers with (a CLI command starts in a fraction of
    the time)."""

    model_config = ConfigDict(defer_build=True)


class ErrorInfo(BaseModel):
    code: str = Field(description="Stable error code, e.g. INCOMPLETE_RESULT or FILE_NOT_FOUND.")
    message: str = Field(description="What went wrong, naming the file or value involved.")
    hint: str | None = Field(default=None, description="What to do about it.")


class Envelope(BaseModel):
    """Fields every tool response carries."""

    ok: bool = Field(True, description="False: the call failed; error says why.")
    run_id: int | None = Field(None, description="The run answered about.")
    estimated_tokens: int = Field(0, description="Estimated tokens of this response.")
    truncated: bool = Field(False, description="Any of the three truncations below happened.")
    message_truncated: bool = Field(False, description="Some long text was shortened (head+tail kept).")
    budget_truncated: bool = Field(
        False, description="Items were left out to stay within the budget; continue with next_cursor.",
    )
    page_truncated: bool = Field(False, description="More items follow; pass next_cursor.")
    next_cursor: str | None = Field(None, description="Opaque; valid only with the same arguments.")
    masked_values: int = Field(
        0, description="Secret values (passwords, tokens, keys, cookies, ...) replaced by *** in "
                       "this response. The store keeps them; no response shows them.")
    error: ErrorInfo | None = Field(None, description="Why the call failed (ok false).")
