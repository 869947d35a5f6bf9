"""Attachments as users get them: SeleniumLibrary against a local page in headless Chromium
(its screenshot on failure, and EMBED), the Browser library's two screenshot shapes
(reproduced from its source in tests/data/attachments/Shots.py: it cannot be installed
here), and RF's own ``Log ... html=True`` links. Views show the structure, never the
markup; get_attachment returns an image as MCP image content (downscaled past the limits)
and a text file as masked text, and refuses URLs, paths out of the output folder and
missing files with their codes. A live run and the import of its output answer alike.

Chromium and its driver come from Debian (``.ci/run`` installs them and sets
``RF_LOG_MCP_REQUIRE_BROWSER=1``, so in CI a missing browser fails instead of skipping).
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from mcp.types import ImageContent
from PIL import Image
from robot_runs import robot
from test_mcp_server import call, server

from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store
from rf_log_mcp import service

SUITE = Path(__file__).parent / "data" / "attachments" / "shop.robot"


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        if os.environ.get("RF_LOG_MCP_REQUIRE_BROWSER"):
            pytest.fail("chromium and chromedriver are required (apt install chromium chromium-driver)")
        pytest.skip("no chromium/chromedriver: apt install chromium chromium-driver")
    work = tmp_path_factory.mktemp("attachments")
    live = work / "live.sqlite3"
    done = robot("--outputdir", "out", "--listener", f"rf_log_listener:db={live}", str(SUITE),
                 cwd=work)
    assert done.returncode == 5, done.stdout + done.stderr  # every test fails on purpose
    imported = work / "import.sqlite3"
    import_result(open_store(imported), work / "out" / "output.xml", stable_window=0)
    return {"out": work / "out", "live": live, "import": imported, "work": work}


def _dump(response: Any) -> dict[str, Any]:
    assert response.ok, response.error
    return response


def _paths(conn: sqlite3.Connection) -> dict[str, list[dict[str, Any]]]:
    """Each failed test's failure path."""
    found, cursor = {}, None
    while True:
        page = _dump(service.get_view(conn, "failure_path", run_id=1, cursor=cursor))
        found[page["failure_path"]["start_id"]] = page["failure_path"]["path"]
        cursor = page.get("next_cursor")
        if cursor is None:
            return found


def test_failure_paths_list_the_screenshots(shop: dict[str, Path]) -> None:
    with open_store(shop["import"]) as conn:
        paths = _paths(conn)
    click = paths["s1-t1"][-1]
    assert (click["name"], [(m["level"], m["text"]) for m in click["messages"]]) == (
        "Click Element", [("INFO", "Clicking element 'id:confirm'."),  # what it did, then
                          ("FAIL", "Element with locator 'id:confirm' not found.")])
    screenshot = shop["out"] / "selenium-screenshot-1.png"
    assert click["attachments"] == [{
        "message_id": "s1-t1-k2-m2", "index": 0, "kind": "image",
        "reference": "selenium-screenshot-1.png", "embedded": False, "media_type": "image/png",
        "size_bytes": screenshot.stat().st_size, "exists": True}]
    browser = paths["s1-t3"][0]  # logged beside the failing Fail: listed on the test
    assert [(a["message_id"], a["kind"], a["embedded"]) for a in browser["attachments"]] == [
        ("s1-t3-k1-m1", "image", False), ("s1-t3-k2-m1", "image", True)]
    embedded = browser["attachments"][1]
    assert embedded["reference"] == "data:image/png;base64,…"
    assert embedded["size_bytes"] == len(_image_bytes_of(shop, "s1-t3-k2-m1"))
    assert browser["attachments"][0]["reference"] == (
        "browser/screenshot/robotframework-browser-screenshot-1.png")
    assert "<img" not in json.dumps(paths) and "base64,iVBOR" not in json.dumps(paths)


def test_a_browser_drivers_native_stack_is_folded_in_answers(shop: dict[str, Path]) -> None:
    """chromedriver ends its error with "Stacktrace:" and ~18 frames ("#3 0x561d2c25d998
    <unknown>"): ~150 tokens in each answer that names the failure, which no reader can
    use. Answers fold them into one line; the message view gives them whole."""
    frame = re.compile(r"^#\d+ 0x[0-9a-f]+ ", re.M)
    with open_store(shop["import"]) as conn:
        step = _paths(conn)["s1-t5"][-1]
        assert step["name"] == "Execute Javascript"
        text = step["messages"][-1]["text"]
        assert text.startswith("JavascriptException: Message: javascript error: checkout widget"
                               " failed to load\n  (Session info: chrome"), text
        assert re.search(r"\nStacktrace:\n… \d+ native frames\n?$", text), text
        summary = _dump(service.get_view(conn, "summary", run_id=1))
        failed = next(t for t in summary["summary"]["failed_tests"] if t["node_id"] == "s1-t5")
        assert "native frames" in failed["message"] and not frame.search(json.dumps(summary))
        tree = _dump(service.get_view(conn, "tree", run_id=1, selector="s1-t5"))
        assert not frame.search(json.dumps(tree))
        whole = _dump(service.get_view(conn, "message", run_id=1,
                                       selector=step["messages"][-1]["id"]))["message"]["text"]
        assert len(frame.findall(whole)) == int(re.search(r"(\d+) native", text)[1]) >= 10


def _image_bytes_of(shop: dict[str, Path], message_id: str) -> bytes:
    with open_store(shop["import"]) as conn:
        text = service.message_text(conn, 1, message_id)
    return base64.b64decode(text.split("base64,")[1].split('"')[0])


def test_live_and_import_show_the_same_attachments(shop: dict[str, Path]) -> None:
    with open_store(shop["live"]) as live, open_store(shop["import"]) as imported:
        def without_times(paths: dict[str, Any]) -> str:
            text = json.dumps(paths)
            return json.dumps({k: [{f: v for f, v in step.items() if f != "elapsed_ms"}
                                   for step in path] for k, path in json.loads(text).items()})
        assert without_times(_paths(live)) == without_times(_paths(imported))


def test_screenshots_are_found_by_what_they_show_and_hits_show_their_structure(
        shop: dict[str, Path]) -> None:
    """An HTML message is searched as answers show it: its text, its images' ``alt`` text
    and its references (a data URI by its header), not its tags and attributes."""
    with open_store(shop["import"]) as conn:
        found = _dump(service.search_messages(conn, "data:image/png", run_id=1))
        assert [h["id"] for h in found["hits"]] == ["s1-t2-k1-m1", "s1-t3-k2-m1"]
        for hit in found["hits"]:
            assert hit["html"] is True and hit["text"] == "" and "robot-selenium" not in json.dumps(hit)
            assert [a["embedded"] for a in hit["attachments"]] == [True]
        by_alt = _dump(service.search_messages(conn, "screenshot", run_id=1, min_level="INFO"))
        assert {"s1-t2-k1-m1", "s1-t3-k2-m1"} <= {h["id"] for h in by_alt["hits"]}
        by_file = _dump(service.search_messages(conn, "selenium-screenshot-1.png", run_id=1))
        assert [h["id"] for h in by_file["hits"]] == ["s1-t1-k2-m2"]
        assert [a["reference"] for a in by_file["hits"][0]["attachments"]] == [
            "selenium-screenshot-1.png"]
        for markup in ("robot-seleniumlibrary-screenshot", "colspan", "<img", "width="):
            assert _dump(service.search_messages(conn, markup, run_id=1))["hits"] == [], markup


@pytest.mark.anyio
async def test_get_attachment_returns_images_and_text_over_mcp(shop: dict[str, Path]) -> None:
    store = shop["work"] / "mcp"
    store.mkdir(exist_ok=True)
    with sqlite3.connect(shop["import"]) as source, sqlite3.connect(store / "store.sqlite3") as copy:
        source.backup(copy)
    async with server(store, cwd=store) as client:
        result = await client.call_tool("get_attachment", {"run_id": 1, "message_id": "s1-t1-k2-m2"})
        data = result.structured_content
        assert data is not None and data["ok"] and not result.is_error, data["error"]
        image = result.content[1]
        assert isinstance(image, ImageContent) and image.mime_type == "image/png"
        sent = base64.b64decode(image.data)
        assert sent == (shop["out"] / "selenium-screenshot-1.png").read_bytes()  # within limits
        stored = Image.open(shop["out"] / "selenium-screenshot-1.png").size
        assert (data["width"], data["height"], data["downscaled"]) == (*stored, False)
        assert stored[0] == 1280  # the window Chromium was given

        big = await client.call_tool("get_attachment", {"run_id": 1, "message_id": "s1-t3-k1-m1"})
        assert big.structured_content and big.structured_content["downscaled"] is True
        shown = Image.open(io.BytesIO(base64.b64decode(big.content[1].data)))  # type: ignore[union-attr]
        assert (big.structured_content["original_width"], big.structured_content["original_height"]) == (
            2400, 1400)
        assert max(shown.size) <= 1568 and shown.size[0] * shown.size[1] <= 1_150_000
        assert shown.size == (big.structured_content["width"], big.structured_content["height"])

        embedded = await client.call_tool("get_attachment", {"run_id": 1, "message_id": "s1-t3-k2-m1"})
        assert base64.b64decode(embedded.content[1].data) == _image_bytes_of(  # type: ignore[union-attr]
            shop, "s1-t3-k2-m1")

        log = await call(client, "get_attachment", run_id=1, message_id="s1-t4-k2-m1", index=0)
        assert log["media_type"] == "text/plain" and "connection refused by db:5432" in log["text"]
        assert "hunter2" not in json.dumps(log) and log["masked_values"] >= 1
        refused = {index: await call(client, "get_attachment", run_id=1, message_id="s1-t4-k2-m1",
                                     index=index) for index in (1, 2, 9)}
        assert {index: answer["error"]["code"] for index, answer in refused.items()} == {
            1: "UNSUPPORTED_ATTACHMENT", 2: "PATH_NOT_ALLOWED", 9: "ATTACHMENT_NOT_FOUND"}
        assert "RF_LOG_MCP_ALLOWED_ROOTS" in refused[2]["error"]["hint"]  # for its operator
        video = await call(client, "get_attachment", run_id=1, message_id="s1-t4-k3-m1")
        assert video["error"]["code"] == "ATTACHMENT_NOT_FOUND"  # missing.mp4 is not there
        plain = await call(client, "get_attachment", run_id=1, message_id="s1-t4-k4-m1")
        assert plain["error"]["code"] == "ATTACHMENT_NOT_FOUND"  # not an HTML message
    (shop["out"] / "selenium-screenshot-1.png").rename(shop["work"] / "moved.png")
    try:
        with open_store(shop["import"]) as conn:
            gone = service.get_attachment(conn, "s1-t1-k2-m2", run_id=1)
            assert gone.error is not None and gone.error.code == "ATTACHMENT_NOT_FOUND"
            assert _paths(conn)["s1-t1"][-1]["attachments"][0]["exists"] is False
    finally:
        (shop["work"] / "moved.png").rename(shop["out"] / "selenium-screenshot-1.png")


def test_the_command_line_names_the_file_to_open(shop: dict[str, Path]) -> None:
    db = str(shop["import"])
    image = cli("attachment", "1", "s1-t1-k2-m2", "--db", db)
    assert image.returncode == 0, image.stderr
    screenshot = shop["out"] / "selenium-screenshot-1.png"
    assert f"image image/png, {screenshot.stat().st_size} bytes: {screenshot}" in image.stdout
    width, height = Image.open(screenshot).size
    assert f"{width}x{height} pixels" in image.stdout
    text = cli("attachment", "1", "s1-t4-k2-m1", "0", "--db", db)
    assert "connection refused by db:5432" in text.stdout and "hunter2" not in text.stdout
    as_json = json.loads(cli("attachment", "1", "s1-t3-k1-m1", "--json", "--db", db).stdout)
    assert as_json["downscaled"] is True and as_json["original_width"] == 2400
    refused = cli("attachment", "1", "s1-t4-k2-m1", "2", "--db", db)
    assert refused.returncode == 1 and "PATH_NOT_ALLOWED" in refused.stderr
    # a person at a terminal is told where the file is, not about a server's configuration
    outside = (shop["out"] / "../../etc/passwd").resolve()
    assert f"hint: The command line opens only files in that folder: open {outside} yourself." \
        in refused.stderr and "RF_LOG_MCP_ALLOWED_ROOTS" not in refused.stderr, refused.stderr
