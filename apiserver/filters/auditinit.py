"""The audit ID of every request (kube's WithAuditInit, the outermost filter of kube-apiserver's chain): the
client's own ``Audit-ID`` header when it sent one, so that it can correlate its request across servers, or a
new UUID; echoed in the ``Audit-Id`` response header of every response, whether audit records the request or
not, and whichever filter answers it (a 401, a 403, a 429, a 504 alike)."""

from __future__ import annotations

import binascii
import random

from apiserver.endpoints.http import SCOPE_AUDIT_ID, Scope
from apiserver.endpoints.replay import Replay
from apiserver.filters.pipeline import AUDIT_ID_HEADER, Exchange


class AuditInitFilter:
    """The exchange's ``send`` adds the header to the response's start (filters/pipeline.py)."""

    def before(self, exchange: Exchange) -> None:
        audit_id = _client_audit_id(exchange.scope) or new_audit_id()
        exchange.audit_id = audit_id
        exchange.scope[SCOPE_AUDIT_ID] = audit_id.decode("latin-1")

    def replay(self, exchange: Exchange, replay: Replay) -> None:
        """A replay gets a new audit ID (``new_audit_id``); the client's own is not made up again."""
        if _client_audit_id(exchange.scope):
            replay.refuse()


_UUID_MASK = ~(0xF << 76) & ~(0xC << 60)
_UUID_V4 = (0x4 << 76) | (0x8 << 60)
"""The version (4) and RFC 4122 variant bits of a random UUID."""


def new_audit_id() -> bytes:
    """A random (version 4) UUID, as kube's uuid.New() makes one, in a sixth of ``str(uuid.uuid4())``'s
    time: every request pays for it. An audit ID identifies, it guards nothing (a client may choose its
    own), so Python's generator serves; it is reseeded in each forked worker."""
    hexed = binascii.hexlify((random.getrandbits(128) & _UUID_MASK | _UUID_V4).to_bytes(16, "big"))
    return b"%b-%b-%b-%b-%b" % (hexed[:8], hexed[8:12], hexed[12:16], hexed[16:20], hexed[20:])


def _client_audit_id(scope: Scope) -> bytes:
    for key, value in scope["headers"]:
        if key == AUDIT_ID_HEADER:
            return bytes(value)
    return b""
