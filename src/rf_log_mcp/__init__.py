"""Read side of rf-log-mcp: queries, views, response models, the MCP server and the CLI."""

from rf_log_listener import __version__

__all__ = ["__version__"]
