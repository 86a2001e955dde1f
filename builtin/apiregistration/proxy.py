"""The proxy of a request to an APIService's backend (kube-aggregator's proxyHandler with apimachinery's
UpgradeAwareHandler): the path and query unchanged, the client's headers but the hop-by-hop ones and any
X-Remote-* the client sent itself, the authenticated user as X-Remote-* headers, and the answer streamed back
as it comes (a watch's events as the backend writes them). A backend that cannot be reached is kube's 503
with the error as plain text; nothing here answers another 5xx."""

from __future__ import annotations

import logging

import httpx

from apiserver.authentication.user import ANONYMOUS
from apiserver.endpoints.http import SCOPE_USER, Receive, Scope, Send, respond_text
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
_SPENT_PREFIXES = (b"x-remote-", b"impersonate-")


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
    return headers


async def proxy(
    client: httpx.AsyncClient,
    base_url: str,
    sni_hostname: str,
    scope: Scope,
    receive: Receive,
    send: Send,
) -> bool:
    """Send the request to ``base_url`` (``https://host:port``) and stream the answer back; False when
    the backend could not be reached."""
    target = base_url + scope.get("raw_path", scope["path"].encode()).decode("latin-1")
    if scope.get("query_string"):
        target += "?" + scope["query_string"].decode("latin-1")
    body = await read_body(receive)
    request = client.build_request(
        scope["method"],
        target,
        headers=forwarded_headers(scope),
        content=body or None,
        extensions={"sni_hostname": sni_hostname},
    )
    try:
        response = await client.send(request, stream=True)
    except httpx.HTTPError as error:
        log.warning("error while proxying %s: %s", target, error)
        await respond_text(send, 503, _error_text(error))
        return False
    try:
        await send(
            {
                "type": "http.response.start",
                "status": response.status_code,
                "headers": [
                    (name, value)
                    for name, value in response.headers.raw
                    if name.lower() not in HOP_BY_HOP
                ],
            }
        )
        try:
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        except httpx.HTTPError as error:  # the backend went away mid-answer: end what was sent
            log.warning("the backend of %s broke off: %s", target, error)
        await send({"type": "http.response.body", "body": b""})
    finally:
        await response.aclose()
    return True


def _error_text(error: Exception) -> str:
    text = str(error) or type(error).__name__
    return f"{text}\n"
