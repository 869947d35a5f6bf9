"""MCP over Streamable HTTP (read side, MCP): ``rf-log-mcp serve --http``, for hosts that
connect by URL and for a team that runs one server beside a shared store.

Loopback by default, where the SDK's transport security checks Host and Origin (DNS
rebinding). Any other address needs a bearer token, read from $RF_LOG_MCP_HTTP_TOKEN or a
file (``--token-file``), never from the command line (``ps`` shows it to every user), and
checked on every request in constant time. There, Host and Origin are checked against
$RF_LOG_MCP_HTTP_ALLOWED_HOSTS when it is set.
"""

from __future__ import annotations

import hmac
import json
import os
from pathlib import Path
from typing import Any

from rf_log_listener.errors import ResultError

ENV_TOKEN = "RF_LOG_MCP_HTTP_TOKEN"
ENV_ALLOWED_HOSTS = "RF_LOG_MCP_HTTP_ALLOWED_HOSTS"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
HTTP_TOKEN_REQUIRED = "HTTP_TOKEN_REQUIRED"
PATH = "/mcp"


def read_token(token_file: str | None) -> str | None:
    """The bearer token: the file's first line, else $RF_LOG_MCP_HTTP_TOKEN, else None."""
    if token_file:
        try:
            lines = Path(token_file).expanduser().read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ResultError(HTTP_TOKEN_REQUIRED, f"Cannot read the token file {token_file}: "
                              f"{exc.strerror or exc}.") from None
        token = lines[0].strip() if lines else ""
        if not token:
            raise ResultError(HTTP_TOKEN_REQUIRED, f"The token file {token_file} is empty.")
        return token
    return (os.environ.get(ENV_TOKEN) or "").strip() or None


class BearerToken:
    """ASGI middleware: every HTTP request carries ``Authorization: Bearer <token>``, or is
    answered 401 (the lifespan and everything else pass through)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self.token = app, token.encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not self._allowed(scope):
            body = json.dumps({"error": "unauthorized", "message": "A bearer token is required: "
                               "Authorization: Bearer <token> (the server's "
                               f"{ENV_TOKEN} or --token-file)."}).encode()
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="rf-log-mcp"')]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def _allowed(self, scope: dict[str, Any]) -> bool:
        header = dict(scope.get("headers") or []).get(b"authorization", b"")
        scheme, _, given = header.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self.token)


def app(host: str, token: str | None) -> Any:
    """The ASGI app: the SDK's Streamable HTTP app at /mcp, behind the token when there is one."""
    from mcp.server.transport_security import TransportSecuritySettings

    from .server import mcp

    if host not in LOOPBACK and not token:
        raise ResultError(HTTP_TOKEN_REQUIRED, f"Serving on {host} (not loopback) needs a bearer "
                          "token.", f"Set {ENV_TOKEN} in the server's environment or pass "
                          "--token-file FILE; clients send Authorization: Bearer <token>.")
    security = None  # loopback: the SDK checks Host and Origin against loopback names
    if host not in LOOPBACK:
        allowed = [h.strip() for h in os.environ.get(ENV_ALLOWED_HOSTS, "").split(",") if h.strip()]
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=bool(allowed),
            allowed_hosts=[h if ":" in h else f"{h}:*" for h in allowed],
            allowed_origins=[f"{scheme}://{h if ':' in h else h + ':*'}" for h in allowed
                             for scheme in ("http", "https")])
    served = mcp.streamable_http_app(streamable_http_path=PATH, host=host,
                                     transport_security=security)
    return BearerToken(served, token) if token else served


def serve_http(host: str, port: int, token_file: str | None) -> int:
    import uvicorn

    served = app(host, read_token(token_file))
    uvicorn.run(served, host=host, port=port, log_level="warning")
    return 0
