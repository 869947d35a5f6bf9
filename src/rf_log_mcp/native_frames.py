"""Read side, shaping a text: a browser driver's native stack folded into one line.

chromedriver (and msedgedriver) end a failure's message with "Stacktrace:" and a dozen to
thirty frames of a compiled program ("#3 0x5633d1a2e8b3 <unknown>" on Linux,
"GetHandleVerifier [0x00CB8893+48451]" on Windows, "2   chromedriver   0x0000000100e4b8d8
chromedriver + 4520152" on macOS): addresses without symbols, which neither a person nor an
agent can do anything with, at ~8 tokens a line. Answers (``shaping.Shaper``) fold the
frames that follow a "Stacktrace:" line; the command line folds such frames wherever they
are (it prints, it does not answer). The message view gives a message whole.
"""

from __future__ import annotations

import functools
import re

HEADER = "Stacktrace:"


def fold(text: str, after_header: bool = True) -> str:
    """``text`` with each run of native frames as "… N native frames". ``after_header``: only
    the run that starts on the line after "Stacktrace:" (Selenium's layout; a hex dump a
    keyword logs is left as it is)."""
    if "0x" not in text or (after_header and HEADER not in text):
        return text
    frame = _native_frame()
    lines: list[str] = []
    frames = folded = 0  # in the run being read, in all
    inside = not after_header
    for line in [*text.splitlines(), ""]:
        if inside and frame.match(line.strip()):
            frames += 1
            continue
        if frames:
            lines.append(f"… {frames} native frame{'s' if frames > 1 else ''}")
            folded += frames
            frames = 0
        inside = not after_header or line.strip() == HEADER
        lines.append(line)
    if not folded:
        return text
    return "\n".join(lines[:-1]) + ("\n" if text.endswith("\n") else "")


@functools.cache
def _native_frame() -> re.Pattern[str]:
    """A frame as chromedriver prints it: ``#0 0x560e338539be <unknown>`` (Linux),
    ``GetHandleVerifier [0x00CB8893+48451]`` and ``(No symbol) [0x00C4B8A1]`` (Windows),
    ``2   chromedriver   0x0000000100e4b8d8 chromedriver + 4520152`` (macOS)."""
    return re.compile(r"(?:#\d+ )?0x[0-9a-fA-F]{6,}\b.*|\(No symbol\) \[0x[0-9a-fA-F]+\].*"
                      r"|[\w:]+ \[0x[0-9a-fA-F]+\+\d+\].*|\d+\s+\S+\s+0x[0-9a-fA-F]{6,} .*")
