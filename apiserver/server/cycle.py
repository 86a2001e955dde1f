"""One request's response on the wire, as Go's net/http writes it for kube-apiserver: a response whose length
is known leaves in one write, its status line and headers with its body (uvicorn's cycle writes them apart:
two system calls, and over TLS two records, for every GET), and ``send`` is a plain call that hands back a
finished awaitable unless the transport asks it to wait (no coroutine per message). As Go's Write returns once
the kernel has taken the bytes, a ``send`` of a response of known length that leaves the transport's buffer over
its high-water mark returns only once the transport has passed it on: a handler, and the seats priority and
fairness lets it hold, is done when its response is written, not when it was handed over.

The ASGI messages, their checks and their answers (Content-Length kept, chunked framing when none is given,
``Connection: close``, HEAD) are uvicorn's (uvicorn/protocols/http/httptools_impl.py, RequestResponseCycle),
of which this is a subclass: receiving, keep-alive and the 100-continue handshake are its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from operator import itemgetter
from typing import Any, Literal

from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import (
    HEADER_RE,
    HEADER_VALUE_RE,
    STATUS_LINE,
    RequestResponseCycle,
)

from apiserver.endpoints.http import (
    DONE,
    ChunkStream,
    Message,
    Ready,
    frame_chunk,
    sent_apart,
)


class MessageEvent(asyncio.Event):
    """``asyncio.Event`` as the cycle uses it (set, clear, is_set, wait), made for every request: a flag,
    and the waiters' futures only once someone waits (the body of most requests has arrived before the
    handler asks for it)."""

    def __init__(self) -> None:  # not asyncio.Event's: no deque, no loop check per request
        self._value = False
        self._waiters: list[asyncio.Future[bool]] | None = None  # type: ignore[assignment]

    def is_set(self) -> bool:
        return self._value

    def set(self) -> None:
        if self._value:
            return
        self._value = True
        waiters, self._waiters = self._waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(True)

    def clear(self) -> None:
        self._value = False

    async def wait(self) -> Literal[True]:
        if self._value:
            return True
        waiter = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            if self._waiters is not None and waiter in self._waiters:
                self._waiters.remove(waiter)
        return True


class ResponseCycle(RequestResponseCycle):
    """uvicorn's cycle with the head of a response of known length held until its body, and sent with it."""

    _head: bytes = b""
    # uvicorn's state of a new cycle, as class attributes: a cycle per request sets only what varies
    disconnected = False
    more_body = True
    response_started = False
    response_complete = False
    chunked_encoding: bool | None = None
    expected_content_length = 0

    def __init__(
        self,
        scope: Any,
        transport: Any,
        flow: FlowControl,
        logger: logging.Logger,
        access_logger: logging.Logger,
        access_log: bool,
        default_headers: list[tuple[bytes, bytes]],
        message_event: asyncio.Event,
        expect_100_continue: bool,
        keep_alive: bool,
        on_response: Callable[[], None],
    ) -> None:
        """uvicorn's, in half its time (keyword arguments, and the constant state set again each time,
        cost a microsecond per request)."""
        self.scope = scope
        self.transport = transport
        self.flow = flow
        self.logger = logger
        self.access_logger = access_logger
        self.access_log = access_log
        self.default_headers = default_headers
        self.message_event = message_event
        self.on_response = on_response
        self.keep_alive = keep_alive
        self.waiting_for_100_continue = expect_100_continue
        self.body = bytearray()

    def receive(self) -> Awaitable[Any]:  # type: ignore[override]
        """uvicorn's, as a plain call when the whole body has arrived already and no 100 Continue is due (a
        create's body usually comes with its headers): no coroutine, no wait for the message event."""
        event = self.message_event
        if (
            self.more_body
            or self.waiting_for_100_continue
            or self.disconnected
            or self.response_complete
            or not event.is_set()
        ):
            return super().receive()
        if self.flow.read_paused:
            self.flow.resume_reading()
        event.clear()
        message = {"type": "http.request", "body": bytes(self.body), "more_body": False}
        self.body = bytearray()
        return Ready(message)

    def send(self, message: Any) -> Awaitable[None]:  # type: ignore[override]
        if self.flow.write_paused and not self.disconnected:
            return self._send_drained(message)
        self._write(message)
        if self._filled():
            return self.flow.drain()
        return DONE

    def chunk_stream(self) -> ChunkStream | None:
        """This response once it has started as a stream (``http.chunk_stream``): its chunks may then be
        written straight to the transport."""
        streaming = self.response_started and self.chunked_encoding and not self.response_complete
        return self if streaming else None

    def write_chunk(self, framed: bytes) -> bool:
        """A stream's chunk, written at once when nothing waits in the transport: no ASGI message, no
        check that a started stream has passed already (``chunk_stream``)."""
        if self.disconnected or self.response_complete or self.transport.get_write_buffer_size():
            return False
        self.transport.write(framed)
        return True

    async def _send_drained(self, message: Any) -> None:
        await self.flow.drain()
        self._write(message)
        if self._filled():
            await self.flow.drain()

    def _filled(self) -> bool:
        """Whether a response of known length has just filled the transport. A stream's send waits only
        before writing: the watch writer relies on it (it drives a send by hand, and cuts off a client
        that stopped reading rather than wait for it)."""
        return self.flow.write_paused and not self.disconnected and not self.chunked_encoding

    def send_whole(self, start: Message, body: bytes) -> Awaitable[None]:
        """A whole response of known length in one call (``http.respond``): what ``send`` does with its
        start and then its only body message, without the second message and call."""
        if self.response_started or (self.flow.write_paused and not self.disconnected):
            return sent_apart(self.send, start, body)  # as two messages: their checks, their wait
        if self.disconnected:
            return DONE
        if start["type"] != "http.response.start":
            raise RuntimeError(
                f"Expected ASGI message 'http.response.start', but got '{start['type']}'."
            )
        self.response_started = True
        self.waiting_for_100_continue = False
        head = self._head_of(start["status"], start.get("headers", ()))
        if self.chunked_encoding is False and len(body) == self.expected_content_length:
            # the usual answer, its head and body in one write: ``_write_body``'s work, inlined
            if self.scope["method"] == "HEAD":
                self.transport.write(head)
            else:
                self.transport.write(head + body if body else head)
            self.expected_content_length = 0
            self._complete()
            if self.flow.write_paused and not self.disconnected:  # ``_filled``, inlined
                return self.flow.drain()
            return DONE
        # a stream's head, HEAD, a body that does not match its Content-Length
        self._hold_or_write(head)
        self._write_body(body, False)
        if self._filled():
            return self.flow.drain()
        return DONE

    def _write(self, message: Any) -> None:
        if self.disconnected:
            return
        if not self.response_started:
            self._write_start(message)
            return
        kind = message["type"]
        if self.response_complete:
            raise RuntimeError(
                f"Unexpected ASGI message '{kind}' sent, after response already completed."
            )
        if kind != "http.response.body":
            raise RuntimeError(f"Expected ASGI message 'http.response.body', but got '{kind}'.")
        self._write_body(message.get("body", b""), message.get("more_body", False))

    def _write_start(self, message: Any) -> None:
        kind = message["type"]
        if kind != "http.response.start":
            raise RuntimeError(f"Expected ASGI message 'http.response.start', but got '{kind}'.")
        self.response_started = True
        self.waiting_for_100_continue = False
        self._hold_or_write(self._head_of(message["status"], message.get("headers", ())))

    def _hold_or_write(self, head: bytes) -> None:
        """A stream's head goes at once; any other is held for its body."""
        if self.chunked_encoding and self.scope["method"] != "HEAD":  # a stream (a watch)
            self.transport.write(head)  # its headers go at once
        else:
            self._head = head

    def _write_body(self, body: bytes, more_body: bool) -> None:
        if self.scope["method"] == "HEAD":
            self.expected_content_length = 0
            self._flush(b"")
        elif self.chunked_encoding:
            framed = frame_chunk(body) if body else b""
            self.transport.write(framed if more_body else framed + b"0\r\n\r\n")
        elif len(body) > self.expected_content_length:
            raise RuntimeError("Response content longer than Content-Length")
        else:
            self.expected_content_length -= len(body)
            self._flush(body)
        if not more_body:
            if self.expected_content_length != 0:
                raise RuntimeError("Response content shorter than Content-Length")
            self._complete()

    def _complete(self) -> None:
        """The response is written whole: the connection may go on."""
        self.response_complete = True
        self.message_event.set()
        if not self.keep_alive:
            self.transport.close()
        self.on_response()

    def _flush(self, body: bytes) -> None:
        """``body``, after the held head if it is still held."""
        head, self._head = self._head, b""
        if head or body:
            self.transport.write(head + body if head else body)

    def _head_of(self, status: int, headers: Any) -> bytes:
        """The status line and headers, validated as uvicorn validates them; sets the framing and
        keep-alive they imply."""
        if self.access_log:
            self.access_logger.info(
                '%s - "%s %s HTTP/%s" %d',
                self.scope.get("client"),
                self.scope["method"],
                self.scope["path"],
                self.scope["http_version"],
                status,
            )
        content = [STATUS_LINE[status]]
        closing = False
        pairs = (*self.default_headers, *headers)
        # every value checked in one search: the tab that joins them is allowed in any
        if HEADER_VALUE_RE.search(b"\t".join(map(_VALUE, pairs))):
            raise RuntimeError("Invalid HTTP header value.")
        for name, value in pairs:
            prefix, framing = _NAMES.get(name) or _checked_name(name)
            if framing is not None:
                if framing == b"content-length" and self.chunked_encoding is None:
                    self.expected_content_length = int(value)
                    self.chunked_encoding = False
                elif framing == b"transfer-encoding" and value.lower() == b"chunked":
                    self.expected_content_length = 0
                    self.chunked_encoding = True
                elif framing == b"connection" and b"close" in [
                    t.lower().strip() for t in value.split(b",")
                ]:
                    self.keep_alive = False
                    closing = True
            content += (prefix, value, b"\r\n")
        if not self.keep_alive and not closing:
            content.append(b"connection: close\r\n")
        if (
            self.chunked_encoding is None
            and self.scope["method"] != "HEAD"
            and status not in (204, 304)
        ):
            self.chunked_encoding = True
            content.append(b"transfer-encoding: chunked\r\n")
        content.append(b"\r\n")
        return b"".join(content)


_VALUE = itemgetter(1)
_FRAMING = frozenset((b"content-length", b"transfer-encoding", b"connection"))
"""The header names that decide the response's framing and the connection's keep-alive."""
_NAMES: dict[bytes, tuple[bytes, bytes | None]] = {}
"""Header names found valid, each with its line's start (``name: ``, lowercase) and its lowercase form when it
is one of the framing headers: a server sends the same few names, each checked once rather than on every
response."""
_REMEMBERED_NAMES = 256


def _checked_name(name: bytes) -> tuple[bytes, bytes | None]:
    """``name``'s line start and framing name (``_NAMES``), once uvicorn's check found it valid (remembered
    while few are)."""
    if HEADER_RE.search(name):
        raise RuntimeError("Invalid HTTP header name.")
    lowered = name.lower()
    known = (lowered + b": ", lowered if lowered in _FRAMING else None)
    if len(_NAMES) < _REMEMBERED_NAMES:
        _NAMES[name] = known
    return known
