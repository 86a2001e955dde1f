"""The audit ID of every request (kube's WithAuditInit, the outermost filter of kube-apiserver's chain): the
client's own ``Audit-ID`` header when it sent one, so that it can correlate its request across servers, or a
new UUID; echoed in the ``Audit-Id`` response header of every response, whether audit records the request or
not, and whichever filter answers it (a 401, a 403, a 429, a 504 alike)."""

from __future__ import annotations

import os

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


def new_audit_id() -> bytes:
    """A random (version 4) UUID, as kube's uuid.New() makes one (with Go's ``uuid.EnableRandPool``),
    taken from a pool: every request pays for one, and formatting each alone cost more than the rest of
    the audit ID's work. An audit ID identifies, it guards nothing (a client may choose its own)."""
    try:
        return _pool.pop()
    except IndexError:
        _pool.extend(_formatted(os.urandom(16 * _POOLED)))
        return _pool.pop()


_POOLED = 512
_pool: list[bytes] = []
# a forked worker must not hand out its parent's IDs
os.register_at_fork(after_in_child=_pool.clear)

_DIGIT_OF = (*range(8), -1, *range(8, 12), -1, 12, *range(13, 16), -1, 16, *range(17, 20), -1)
_DIGIT_OF += tuple(range(20, 32))
"""For each of a UUID's 36 characters, the hex digit of its 16 bytes it shows, -1 for a dash."""
_VERSION_AT, _VARIANT_AT = 14, 19
_VARIANT = bytes.maketrans(b"0123456789abcdef", b"89ab89ab89ab89ab")
"""RFC 4122's variant: the first digit of the fourth group is 10xx in binary."""


def _formatted(random: bytes) -> list[bytes]:
    """Every 16 bytes of ``random`` as a version 4 UUID's text, built a column at a time for all of them
    (36 slice copies rather than a format per UUID)."""
    count = len(random) // 16
    digits = random.hex().encode()
    text = bytearray(36 * count)
    for column, digit in enumerate(_DIGIT_OF):
        if digit < 0:
            text[column::36] = b"-" * count
        elif column == _VERSION_AT:
            text[column::36] = b"4" * count
        elif column == _VARIANT_AT:
            text[column::36] = digits[digit::32].translate(_VARIANT)
        else:
            text[column::36] = digits[digit::32]
    whole = bytes(text)
    return [whole[start : start + 36] for start in range(0, len(whole), 36)]


def _client_audit_id(scope: Scope) -> bytes:
    for key, value in scope["headers"]:
        if key == AUDIT_ID_HEADER:
            return bytes(value)
    return b""
