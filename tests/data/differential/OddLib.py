"""Library code that passes what a .robot file cannot: objects, bytes, empty strings, control
characters (tests/test_differential.py)."""

import datetime

from robot.libraries.BuiltIn import BuiltIn


def odd_arguments():
    run = BuiltIn().run_keyword
    run("Log", b"raw \x00bytes")
    run("Log", datetime.date(2026, 11, 30))
    run("Log Many", 1, True, None, 2.5, "", "x")
    run("Log", {"key": b"value"})
    run("Log", "control \x01\x1b characters\r\nand CRLF")
    run("Log Many", "", "between empties", "")


def odd_values():
    return [b"by\x00tes", datetime.date(2026, 1, 2), 3, None, ""]
