#!/usr/bin/env python3
"""Write each MCP tool's output schema, as the SDK derives it from the tool's response model,
to ``src/rf_log_mcp/output_schemas.json``, which the server reads at start-up instead of
deriving them (see ``rf_log_mcp/tool_schemas.py``). The file names the versions of the MCP
SDK and pydantic that derived them; with others installed the server derives them itself.

    python scripts/output_schemas.py          # rewrite the file after a response model changed
    python scripts/output_schemas.py --check  # exit 1 if the file is not what the models give

``tests/test_mcp_server.py`` fails while the file is stale.
"""

from __future__ import annotations

import argparse
import json
import sys

from rf_log_mcp.server import RESPONSE_MODELS
from rf_log_mcp.tool_schemas import OUTPUT_SCHEMAS, derived_output_schemas, schema_libraries


def rendered() -> str:
    written = {"derived_with": schema_libraries(), "tools": derived_output_schemas(RESPONSE_MODELS)}
    return json.dumps(written, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    fresh = rendered()
    if args.check:
        current = OUTPUT_SCHEMAS.read_text(encoding="utf-8") if OUTPUT_SCHEMAS.exists() else ""
        if current != fresh:
            print(f"{OUTPUT_SCHEMAS} differs from the response models; run "
                  "python scripts/output_schemas.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT_SCHEMAS.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
