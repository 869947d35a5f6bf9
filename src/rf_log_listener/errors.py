"""Structured failures with stable codes, shared by both sides (the server returns them as is)."""

from __future__ import annotations


class ResultError(Exception):
    """A failure a caller can act on: a stable ``code``, a human ``message``, an optional ``hint``."""

    def __init__(self, code: str, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint

    def to_dict(self) -> dict[str, str]:
        data = {"code": self.code, "message": self.message}
        if self.hint:
            data["hint"] = self.hint
        return data


FILE_NOT_FOUND = "FILE_NOT_FOUND"
INVALID_XML = "INVALID_XML"
INVALID_JSON = "INVALID_JSON"
UNSUPPORTED_FORMAT = "UNSUPPORTED_FORMAT"
INCOMPLETE_RESULT = "INCOMPLETE_RESULT"
IMPORT_IN_PROGRESS = "IMPORT_IN_PROGRESS"
STORE_UNAVAILABLE = "STORE_UNAVAILABLE"
STORE_CORRUPT = "STORE_CORRUPT"
STORE_READ_ONLY = "STORE_READ_ONLY"  # opened for reading only: imports cannot be written
STORE_NOT_FOUND = "STORE_NOT_FOUND"  # a reading command's store does not exist (never created)
IMPORT_FAILED = "IMPORT_FAILED"
INVALID_ARGUMENT = "INVALID_ARGUMENT"  # every argument a tool or command cannot take
ATTACHMENT_NOT_FOUND = "ATTACHMENT_NOT_FOUND"  # get_attachment (read side)
IMPORT_CANCELLED = "IMPORT_CANCELLED"


class ImportCancelled(ResultError):
    """Raised by an import's progress callback to stop it (an MCP client cancelled it); the
    importer then removes what it wrote. Here, not in ``importers``, so the server can catch
    it without loading the parsers at its start."""

    def __init__(self, source: object) -> None:
        super().__init__(IMPORT_CANCELLED, f"Importing {source} was cancelled; nothing was kept.",
                         "Import it again when you need it.")
