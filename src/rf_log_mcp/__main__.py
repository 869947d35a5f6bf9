"""``python -m rf_log_mcp`` runs the ``rf-log-mcp`` command line."""

import sys

from .cli import main

if __name__ == "__main__":  # guarded: spawned import processes re-import this module
    sys.exit(main())
