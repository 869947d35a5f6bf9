"""Failure signatures (rf_log_listener/signatures.py) on real failure texts: RF's BuiltIn,
Collections, String and OperatingSystem keywords failing in two runs with different values
(tests/data/history/failures.robot), and the message shapes of SeleniumLibrary, Browser,
RequestsLibrary and timeouts."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rf_log_listener import signatures
from rf_log_listener.signatures import MAX_CHARS, normalize, repeat_key, signature
from rf_log_listener.store import open_store

SUITE = Path(__file__).parent / "data" / "history" / "failures.robot"

EXPECTED = {
    "Contains": "'…' does not contain '…' [in BuiltIn.Should Contain]",
    "Dictionary Key": "Dictionary does not contain key '…'. [in Collections.Dictionary Should "
                      "Contain Key]",
    "Equal Numbers": "<n> != <n> [in BuiltIn.Should Be Equal As Numbers]",
    "Equal Strings With Quotes": "order-<n> != '…' [in BuiltIn.Should Be Equal]",
    "Keyword Timeout": "Test timeout <duration> exceeded. [in BuiltIn.Sleep]",
    "Length": "Length of '…' should be <n> but is <n>. [in BuiltIn.Length Should Be]",
    "List Value": "[…] does not contain value '…'. [in Collections.List Should Contain Value]",
    "String Pattern": "'…' does not match '…' [in BuiltIn.Should Match Regexp]",
    "Temp File": "File '…' does not exist. [in OperatingSystem.File Should Exist]",
    "Uuid And Time": "request <uuid> failed at <time> after <duration> [in BuiltIn.Fail]",
}


def test_real_failures_with_other_values_have_one_signature(tmp_path: Path) -> None:
    db = tmp_path / "store.sqlite3"
    messages = {}
    for value in ("1", "2"):
        subprocess.run([sys.executable, "-m", "robot", "--log", "NONE", "--report", "NONE",
                        "--output", f"o{value}.xml", "--console", "none", "--listener",
                        f"rf_log_listener:db={db}", "--variable", f"V:{value}", str(SUITE)],
                       cwd=tmp_path, capture_output=True, check=False, timeout=300)
    conn = open_store(db)
    for run_id in (1, 2):
        messages[run_id] = dict(conn.execute(
            "SELECT name, message FROM nodes WHERE run_id = ? AND type = 'TEST'", (run_id,)))
        found = dict(conn.execute(
            "SELECT substr(t.longname, 10), s.text FROM run_tests r JOIN test_names t USING"
            " (name_id) JOIN signatures s USING (signature_id) WHERE r.run_id = ?", (run_id,)))
        assert found == EXPECTED, run_id
    # the texts really differ: the signature is what makes them one
    assert all(messages[1][name] != messages[2][name] for name in EXPECTED)


@pytest.mark.parametrize(("first", "second", "expected"), [
    ("Connection refused: 10.0.3.7:5432 after 3012 ms",
     "Connection refused: 10.0.3.9:5432 after 2987 ms",
     "Connection refused: <ip>:<n> after <duration>"),
    # SeleniumLibrary
    ("Element with locator 'id:submit-7' not found.",
     "Element with locator 'id:submit-12' not found.", "Element with locator '…' not found."),
    ("Element 'css:#row-3 > td' not visible after 5 seconds.",
     "Element 'css:#row-9 > td' not visible after 10 seconds.",
     "Element '…' not visible after <duration>."),
    # Browser (Playwright)
    ("TimeoutError: locator.click: Timeout 10000ms exceeded.",
     "TimeoutError: locator.click: Timeout 5000ms exceeded.",
     "TimeoutError: locator.click: Timeout <duration> exceeded."),
    # RequestsLibrary
    ("HTTPError: 503 Server Error: Service Unavailable for url: http://api:8080/orders/17",
     "HTTPError: 503 Server Error: Service Unavailable for url: http://api:8080/orders/42",
     "HTTPError: <n> Server Error: Service Unavailable for url: http://api:<n>/orders/<n>"),
    ("Url: http://api/x Expected status: 200 != 500", "Url: http://api/x Expected status: 201 != 404",
     "Url: http://api/x Expected status: <n> != <n>"),
    # timeouts
    ("Test timeout 1 minute 30 seconds exceeded.", "Test timeout 2 minutes exceeded.",
     None),  # different lengths of text: not one signature (documented)
    ("Keyword timeout 500 milliseconds exceeded.", "Keyword timeout 2 seconds exceeded.",
     "Keyword timeout <duration> exceeded."),
    ("job 3f9a0c2e-51b7-4c1e-9d7e-0a1b2c3d4e5f at 2026-11-30T02:15:07.123Z crashed (pid 4411)",
     "job 0b6f7a40-1c2d-4e5f-8a9b-cdef01234567 at 2026-12-01T02:14:58Z crashed (pid 912)",
     "job <uuid> at <time> crashed (pid <n>)"),
    ("core dumped at 0x7ffd5e8c1a20 in worker", "core dumped at 0x55d1c2a0 in worker",
     "core dumped at <hex> in worker"),
    ("cannot open /tmp/pytest-17/out.log", "cannot open /tmp/pytest-23/out.log",
     "cannot open <tmp>"),
])
def test_library_failure_texts(first: str, second: str, expected: str | None) -> None:
    if expected is None:
        assert normalize(first) != normalize(second)
    else:
        assert normalize(first) == normalize(second) == expected


def test_what_a_signature_keeps() -> None:
    assert normalize("Order17 failed") == "Order17 failed"  # numbers inside words stay
    assert normalize("accepted and deadbeef") == "accepted and deadbeef"  # words stay
    assert signature("boom 3", "BuiltIn.Fail") == "boom <n> [in BuiltIn.Fail]"
    assert signature("boom", None) == "boom"
    long = normalize("x" * 100_000)
    assert len(long) == MAX_CHARS and long.endswith("…")
    assert normalize("two\n\n  lines\tand tabs") == "two lines and tabs"


# Pieces of the texts the rules are written for, and the characters a rule is skipped without.
_PIECES = ["2026-12-01", "T08:11:23.123", " 08:11:23", "20261201 08:11:23", "+01:00", "Z",
           "0b6f7a40-1c2d-4e5f-8a9b-cdef01234567", "0x7ffd", "deadbeef12", "10.0.3.7", ":5432",
           "/tmp/x", "C:\\Users\\a\\Temp\\f", "[1, 2]", "{'a': 1}", "'q'", '"d"', "3012 ms",
           "5s", "-17", "1,5", "Order17", " ", "\n", "\t", "-", ":", ".", "0", "x", "step "]


def _every_rule(text: str, rules: tuple[signatures._Rule, ...]) -> str:
    for pattern, replacement, _ in rules:
        text = pattern.sub(replacement, text)
    return re.sub(r"\s+", " ", text)  # rule 8 as the README writes it


@settings(max_examples=600, deadline=None, database=None, derandomize=True)
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=4)), max_size=10))
def test_rules_are_skipped_only_where_they_cannot_match(pieces: list[str]) -> None:
    """A rule is not run on a text without the characters it needs (search folds thousands
    of messages a page), and white space is joined without a regex: the texts come out as they
    do when every rule runs as a regex."""
    text = "".join(pieces)
    assert repeat_key(text) == _every_rule(text, signatures._repeat_rules()).strip()
    everything = _every_rule(text[:4 * MAX_CHARS], signatures._replacements()).strip()
    assert normalize(text) == (everything if len(everything) <= MAX_CHARS
                               else everything[:MAX_CHARS - 1] + "…")
