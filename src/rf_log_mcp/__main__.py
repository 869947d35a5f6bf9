"""``python -m rf_log_mcp`` runs the ``rf-log-mcp`` command line."""

from .cli import entry

if __name__ == "__main__":  # guarded: spawned import processes re-import this module
    entry()
