"""Keywords for the acceptance tests: run robot with the listener in a subprocess, and ask
``rf-log-mcp`` what an agent would see, over stdio, with the official MCP client.

The client lives in a background thread with its own event loop for the whole suite (one
server process, as an MCP host keeps it); keywords hand it calls and wait for the answers.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import subprocess
import sys
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from robot.api import logger
from robot.api.deco import keyword, library


@library(scope="SUITE")
class RfLogMcp:
    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._calls: asyncio.Queue[tuple[Any, Future[Any]]] | None = None
        self._thread: threading.Thread | None = None
        self._robots: dict[str, subprocess.Popen[str]] = {}

    # -- robot ---------------------------------------------------------------------------

    @keyword
    def run_robot_with_listener(self, data: str, db: str, *options: str) -> int:
        """Run robot on ``data`` with the listener writing to ``db``; return its rc."""
        done = subprocess.run(self._robot_command(data, db, options), capture_output=True,
                              text=True, timeout=600, check=False)
        logger.info(f"robot rc={done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return done.returncode

    @keyword
    def start_robot_with_listener(self, alias: str, data: str, db: str, *options: str) -> None:
        self._robots[alias] = subprocess.Popen(self._robot_command(data, db, options),
                                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                               text=True)

    @keyword
    def wait_for_robot(self, alias: str) -> int:
        process = self._robots.pop(alias)
        out, err = process.communicate(timeout=600)
        logger.info(f"robot rc={process.returncode}\n{out[-3000:]}\n{err[-3000:]}")
        return process.returncode

    @keyword
    def kill_robot(self, alias: str) -> None:
        """SIGKILL: no listener method, no atexit, nothing runs after this."""
        process = self._robots.pop(alias)
        os.kill(process.pid, signal.SIGKILL)
        process.communicate(timeout=60)

    @staticmethod
    def _robot_command(data: str, db: str, options: tuple[str, ...]) -> list[str]:
        outdir = Path(db).parent
        return [sys.executable, "-m", "robot", "--outputdir", str(outdir), "--log", "NONE",
                "--report", "NONE", "--console", "dotted", "--listener",
                f"rf_log_listener:db={db}", *options, data]

    # -- the MCP server ----------------------------------------------------------------------

    @keyword
    def start_mcp_server(self, db: str) -> None:
        """Start ``python -m rf_log_mcp`` on ``db`` and connect the official client to it."""
        ready: Future[None] = Future()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, args=(db, ready), daemon=True)
        self._thread.start()
        ready.result(timeout=60)

    def _serve(self, db: str, ready: Future[None]) -> None:
        assert self._loop is not None
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._session(db, ready))

    async def _session(self, db: str, ready: Future[None]) -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "rf_log_mcp"],
                                       env={**os.environ, "RF_LOG_MCP_DB": db})
        self._calls = asyncio.Queue()
        try:
            # robot captures sys.stderr during keywords; the server's stderr goes to the real one
            async with Client(stdio_client(params, errlog=sys.__stderr__)) as client:
                ready.set_result(None)
                while True:
                    request, answer = await self._calls.get()
                    if request is None:
                        return
                    try:
                        answer.set_result(await request(client))
                    except Exception as exc:  # handed to the keyword that asked
                        answer.set_exception(exc)
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    def _ask(self, request: Any) -> Any:
        assert self._loop is not None and self._calls is not None, "Start MCP Server first"
        answer: Future[Any] = Future()
        self._loop.call_soon_threadsafe(self._calls.put_nowait, (request, answer))
        return answer.result(timeout=120)

    @keyword
    def stop_mcp_server(self) -> None:
        if self._loop is not None and self._calls is not None:
            self._loop.call_soon_threadsafe(self._calls.put_nowait, (None, None))
        if self._thread is not None:
            self._thread.join(30)
        self._loop = self._calls = self._thread = None

    @keyword
    def call_tool(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """Call ``tool`` and return its structured result (``ok``, ``error``, the view ...).
        Numbers may be given as ``${1}`` or as text (``run_id=1``)."""
        arguments = {key: _number(value) for key, value in arguments.items()}

        async def request(client: Client) -> dict[str, Any]:
            result = await client.call_tool(tool, arguments)
            return result.structured_content  # type: ignore[return-value]

        data = self._ask(request)
        logger.info(f"{tool}({arguments}) ->\n{json.dumps(data, indent=1, ensure_ascii=False)[:20000]}")
        return data

    @keyword
    def open_attachment(self, run_id: Any, message_id: str, index: Any = 0) -> dict[str, Any]:
        """get_attachment's image: its media type and bytes (shown in this log)."""
        arguments = {"run_id": _number(run_id), "message_id": message_id, "index": _number(index)}

        async def request(client: Client) -> Any:
            return await client.call_tool("get_attachment", arguments)

        result = self._ask(request)
        images = [c for c in result.content if getattr(c, "type", "") == "image"]
        logger.info(f"get_attachment({arguments}) -> {json.dumps(result.structured_content)}")
        if not images:
            raise AssertionError(f"no image in the result: {result.structured_content}")
        logger.info(f'<img src="data:{images[0].mime_type};base64,{images[0].data}" width="600">',
                    html=True)
        return {"mime_type": images[0].mime_type, "data": base64.b64decode(images[0].data)}

    @keyword
    def read_resource(self, uri: str) -> dict[str, Any]:
        async def request(client: Client) -> str:
            result = await client.read_resource(uri)
            return result.contents[0].text  # type: ignore[union-attr,no-any-return]

        text = self._ask(request)
        logger.info(f"{uri} ->\n{text[:20000]}")
        return json.loads(text)  # type: ignore[no-any-return]

    @keyword
    def response_text(self, data: Any) -> str:
        """Every string in a response, joined: for checking that a value is nowhere in it."""
        return "\n".join(_strings(data))


def _number(value: Any) -> Any:
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return value


def _strings(data: Any) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [*map(str, data), *(s for v in data.values() for s in _strings(v))]
    if isinstance(data, list):
        return [s for item in data for s in _strings(item)]
    return []
