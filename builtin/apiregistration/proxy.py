"""The proxy of a request to an APIService's backend (kube-aggregator's proxyHandler with apimachinery's
UpgradeAwareHandler): the path and query unchanged, the client's headers but the hop-by-hop ones and any
X-Remote-* the client sent itself, the authenticated user as X-Remote-* headers, and the answer streamed back
as it comes (a watch's events as the backend writes them). A backend that cannot be reached is kube's 503
with the error as plain text; nothing here answers another 5xx."""

from __future__ import annotations

import logging

from apiserver.authentication.user import ANONYMOUS
from apiserver.endpoints.http import SCOPE_AUDIT_ID, SCOPE_USER, Receive, Scope, Send, respond_text
from builtin.apiregistration.pool import BackendError, Pool
from builtin.apiregistration.transport import user_headers

log = logging.getLogger(__name__)

HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"host",
    }
)
_SPENT_PREFIXES = (b"x-remote-", b"impersonate-", b"audit-id")


async def read_body(receive: Receive) -> bytes:
    """The whole request body (the front's limits have bounded it)."""
    parts = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        parts.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(parts)


def forwarded_headers(scope: Scope) -> list[tuple[bytes, bytes]]:
    headers = [
        (name, value)
        for name, value in scope["headers"]
        if name not in HOP_BY_HOP and not name.startswith(_SPENT_PREFIXES)
    ]
    headers.extend(user_headers(scope.get(SCOPE_USER, ANONYMOUS)))
    audit_id = scope.get(SCOPE_AUDIT_ID)
    if audit_id:  # kube's NewRequestForProxy: the backend records the request under the front's ID
        headers.append((b"audit-id", audit_id.encode("latin-1")))
    return headers


async def proxy(pool: Pool, scope: Scope, receive: Receive, send: Send) -> bool:
    """Send the request to the backend of ``pool`` and stream the answer back; False when the backend
    could not be reached (answered kube's 503 with the error)."""
    target = scope.get("raw_path") or scope["path"].encode()
    if scope.get("query_string"):
        target += b"?" + scope["query_string"]
    body = await read_body(receive)
    try:
        await pool.forward(
            scope["method"], target.decode("latin-1"), forwarded_headers(scope), body, receive, send
        )
    except BackendError as error:
        log.warning("error while proxying %s: %s", scope["path"], error)
        await respond_text(send, 503, f"{error}\n")
        return False
    return True
