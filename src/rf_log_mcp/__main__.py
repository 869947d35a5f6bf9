"""``python -m rf_log_mcp`` runs the ``rf-log-mcp`` command line."""

import sys

from .cli import main

sys.exit(main())
