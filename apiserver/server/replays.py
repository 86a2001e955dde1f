"""A connection's kept answers (apiserver/endpoints/replay.py): the last few GETs it read, and for those it
read more than once the answer to replay while it holds, written as the response cycle writes a full answer
(server/cycle.py: the status line, the server's default headers, the handler's headers, then the Audit-Id)."""

from __future__ import annotations

import asyncio
import time

from uvicorn.protocols.http.httptools_impl import STATUS_LINE

from apiserver.endpoints.replay import Replay
from apiserver.filters.auditinit import new_audit_id
from apiserver.filters.pipeline import AUDIT_ID_HEADER

Headers = list[tuple[bytes, bytes]]

REPLAYS_KEPT = 4
"""The requests a connection remembers, and the answers it keeps for replay: a client polls a few objects."""
MAX_REMEMBERED_REQUEST = 16 * 1024
"""The largest request line and headers (as ``request_size`` counts them) a connection remembers: a poller's
fit many times over, while a client sending megabyte headers would pin them on every idle connection."""
RETRY_AFTER_REFUSAL = 16
"""How many times a request whose answer was refused for keeping (a LIST, a watch, an audited request...)
goes the full way unoffered before its answer is offered again: what it depends on may change (a refusal
can be a moment's, an object in flux), but offering costs every request that is never kept."""
_BODY_HEADERS = frozenset((b"content-length", b"transfer-encoding"))
_OK = STATUS_LINE[200]


class KeptAnswers:
    """One connection's: its last ``REPLAYS_KEPT`` GETs (line and headers, without a body), each with its
    kept answer once it has one. A request read for the first time (of late) is only remembered: a client that
    never repeats one pays for no keeping; nor does one that repeats a request whose answer is refused (a
    count of the repeats left before it is offered again)."""

    def __init__(self) -> None:
        self._kept: dict[bytes, Replay | int | None] = {}
        """By the request's line and headers as one bytes object: no container the garbage collector would
        track (keys outlive many requests)."""

    def answer(
        self, url: bytes, headers: Headers, transport: asyncio.Transport, default: Headers
    ) -> Replay | bool:
        """True when the GET of ``url`` with ``headers`` was answered on ``transport`` from its kept answer;
        otherwise it goes the full way, offering its answer to the Replay returned (False: not offered)."""
        if any(name in _BODY_HEADERS for name, _ in headers):
            return False
        # a header's name holds no colon and nothing holds a newline: the joined form is unambiguous
        key = b"\n".join([url, *[name + b":" + value for name, value in headers]])
        kept = self._kept
        if key not in kept:
            if request_size(url, headers) > MAX_REMEMBERED_REQUEST:
                return False
            if len(kept) >= REPLAYS_KEPT:
                del kept[next(iter(kept))]
            kept[key] = None
            return False
        known = kept[key]
        if isinstance(known, Replay):
            if not known.ready:  # refused: not offered again for a while
                kept[key] = RETRY_AFTER_REFUSAL
                return False
            started = time.perf_counter()
            if known.holds():
                transport.write(_replayed(known, default))
                known.recorded(started)
                return True
        elif known is not None and known > 1:
            kept[key] = known - 1
            return False
        replay = kept[key] = Replay()
        return replay

    def clear(self) -> None:
        self._kept.clear()


def _replayed(replay: Replay, default: Headers) -> bytes:
    """The kept answer with the server's current default headers (Date) and a new Audit-Id, as one write."""
    assert replay.headers is not None and replay.body is not None
    if not replay.wire:
        replay.wire = _header_lines(replay.headers)
    return b"".join(
        (
            _OK,
            _default_lines(default),
            replay.wire,
            AUDIT_ID_HEADER,
            b": ",
            new_audit_id(),
            b"\r\n\r\n",
            replay.body,
        )
    )


def _header_lines(headers: Headers) -> bytes:
    """Headers as the cycle writes them (cycle.py, ``_head_of``): a lowercase name, its value, CRLF."""
    return b"".join(b"%s: %s\r\n" % (name.lower(), value) for name, value in headers)


_rendered_defaults: tuple[Headers, bytes] = ([], b"")


def _default_lines(default: Headers) -> bytes:
    """The server's default headers written out, once per list: uvicorn replaces the list (its Date)
    once a second."""
    global _rendered_defaults
    if _rendered_defaults[0] is not default:
        _rendered_defaults = (default, _header_lines(default))
    return _rendered_defaults[1]


def request_size(url: bytes, headers: Headers) -> int:
    """The header block's size as Go counts it against MaxHeaderBytes (lines and their CRLFs)."""
    return len(url) + sum(len(name) + len(value) + 4 for name, value in headers)
