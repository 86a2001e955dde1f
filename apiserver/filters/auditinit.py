"""The audit ID of every request (kube's WithAuditInit, the outermost filter of kube-apiserver's chain): the
client's own ``Audit-ID`` header when it sent one, so that it can correlate its request across servers, or a
new UUID; echoed in the ``Audit-Id`` response header of every response, whether audit records the request or
not, and whichever filter answers it (a 401, a 403, a 429, a 504 alike)."""

from __future__ import annotations

import random
from collections.abc import Awaitable

from apiserver.endpoints.http import (
    SCOPE_AUDIT_ID,
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
    transport_of,
)

AUDIT_ID_HEADER = b"audit-id"


class AuditInitFilter:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        audit_id = _client_audit_id(scope) or new_audit_id()
        scope[SCOPE_AUDIT_ID] = audit_id.decode("latin-1")
        await self.app(scope, receive, _IdentifiedSend(send, audit_id).send)


class _IdentifiedSend:
    """``send`` with the Audit-Id header added to the response's start. A bound method of an object
    carrying the server's ``transport``, as uvicorn's own send is (``http.transport_of``), and handing back
    the server's own awaitable: the watch writer still sees the socket, and may still drive a send by
    hand."""

    __slots__ = ("_send", "audit_id", "transport")

    def __init__(self, send: Send, audit_id: bytes) -> None:
        self._send = send
        self.audit_id = audit_id
        self.transport = transport_of(send)

    def send(self, message: Message) -> Awaitable[None]:
        if message["type"] == "http.response.start":
            headers = [*message.get("headers", ()), (AUDIT_ID_HEADER, self.audit_id)]
            return self._send({**message, "headers": headers})
        return self._send(message)


_UUID_MASK = ~(0xF << 76) & ~(0xC << 60)
_UUID_V4 = (0x4 << 76) | (0x8 << 60)
"""The version (4) and RFC 4122 variant bits of a random UUID."""


def new_audit_id() -> bytes:
    """A random (version 4) UUID, as kube's uuid.New() makes one, in a sixth of ``str(uuid.uuid4())``'s
    time: every request pays for it. An audit ID identifies, it guards nothing (a client may choose its
    own), so Python's generator serves; it is reseeded in each forked worker."""
    text = f"{random.getrandbits(128) & _UUID_MASK | _UUID_V4:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}".encode()


def _client_audit_id(scope: Scope) -> bytes:
    for key, value in scope["headers"]:
        if key == AUDIT_ID_HEADER:
            return bytes(value)
    return b""
