"""``python -m rf_log_listener.importers._parser_process``: the parsing half of a large import.

Kept apart from ``parallel.py`` so running it as ``__main__`` does not load that module twice.
"""

import sys

from .parallel import child_main

if __name__ == "__main__":
    child_main(sys.argv[1:])
