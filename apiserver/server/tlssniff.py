"""Plain HTTP sent to the TLS port gets Go's answer instead of a failed handshake.

Go's TLS server reads a record header first; when those five bytes look like an HTTP request, net/http writes
``HTTP/1.0 400 Bad Request`` with "Client sent an HTTP request to an HTTPS server." and closes the
connection (net/http server.go, ``tlsRecordHeaderLooksLikeHTTP``), so that curl or a misconfigured client sees
why. asyncio's TLS transport would read those bytes as a handshake and close without a word.

So the listener serves TCP, and each connection's first bytes decide: HTTP-looking ones get the 400; anything
else goes, with those same bytes, to the event loop's own TLS protocol (the one ``create_server(ssl=...)`` or
``start_tls`` would use), which then does the handshake and hands its transport to the HTTP protocol. From
then on the connection is exactly what a TLS listener would have made. The handshake begins when the loop's
handshake gate (handshakes.py) gives it a turn: at once, unless a burst of handshakes has this turn's share. A
connection that sends nothing within the header read timeout is closed, as Go's ReadHeaderTimeout closes it.
"""

from __future__ import annotations

import asyncio
import asyncio.sslproto
import ssl
from collections.abc import Callable
from typing import Any, cast

import uvloop
import uvloop.loop

from apiserver.server.handshakes import HandshakeGate

# net/http server.go: the record header prefixes that mean "this is HTTP", and the reply
_HTTP_PREFIXES = (b"GET /", b"HEAD ", b"POST ", b"PUT /", b"OPTIO")
HTTP_ON_TLS_RESPONSE = (
    b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
)
_RECORD_HEADER = 5


def looks_like_http(head: bytes) -> bool | None:
    """True or False once ``head`` decides it; None while a prefix of it could still be HTTP."""
    if len(head) >= _RECORD_HEADER:
        return head[:_RECORD_HEADER] in _HTTP_PREFIXES
    if any(prefix.startswith(head) for prefix in _HTTP_PREFIXES):
        return None
    return False


class TLSSniffingProtocol(asyncio.Protocol):
    """Stands in for the TLS protocol until the connection's first bytes say TLS or plain HTTP; built with
    the HTTP protocol's arguments, configured by subclassing (``sniffing``), as uvicorn takes a class."""

    inner_class: Callable[..., asyncio.Protocol]
    context: ssl.SSLContext
    wait_limit: float = 0.0
    handshake_timeout: float = 60.0
    handshakes: HandshakeGate

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._inner = self.inner_class(*args, **kwargs)
        self._transport: asyncio.Transport | None = None
        self._head = b""
        self._timer: asyncio.TimerHandle | None = None
        self._connected = 0.0
        self._admitted = False
        """TLS: the handshake has begun, or waits for its turn (handshakes.py), reading paused meanwhile."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's TCPTransport is no subclass of asyncio.Transport, though it is one in all but name
        self._transport = cast(asyncio.Transport, transport)
        loop = asyncio.get_running_loop()
        self._connected = loop.time()
        if self.wait_limit:  # 0: no limit, as for the header read timeout
            self._timer = loop.call_later(self.wait_limit, self._close)

    def data_received(self, data: bytes) -> None:
        self._head += data
        if self._admitted:
            return
        verdict = looks_like_http(self._head)
        if verdict is None:
            return
        assert self._transport is not None
        if verdict:
            self._transport.write(HTTP_ON_TLS_RESPONSE)
            self._close()
            return
        self._admitted = True
        if not self.handshakes.admit(self._hand_over, self._connected):
            self._transport.pause_reading()

    def eof_received(self) -> bool | None:
        self._close()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timer()

    def _hand_over(self) -> None:
        """The loop's TLS protocol takes the transport over, fed what was read so far."""
        transport = self._transport
        assert transport is not None
        if transport.is_closing():  # gone while its handshake waited
            return
        self._cancel_timer()
        loop = asyncio.get_running_loop()
        protocol_class: Any = (
            getattr(uvloop.loop, "SSLProtocol")  # noqa: B009 (not in uvloop's type stubs)
            if isinstance(loop, uvloop.Loop)
            else asyncio.sslproto.SSLProtocol
        )
        secure = protocol_class(
            loop,
            self._inner,
            self.context,
            None,  # no waiter: the handshake's end calls the HTTP protocol's connection_made
            server_side=True,
            ssl_handshake_timeout=self.handshake_timeout,
        )
        transport.set_protocol(secure)
        secure.connection_made(transport)
        transport.resume_reading()  # paused while the handshake waited; else a no-op
        head = memoryview(self._head)
        while head:
            buffer = secure.get_buffer(len(head))
            size = min(len(buffer), len(head))
            buffer[:size] = head[:size]
            secure.buffer_updated(size)
            head = head[size:]
        self._head = b""

    def _close(self) -> None:
        self._cancel_timer()
        if self._transport is not None:
            self._transport.close()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def sniffing(
    protocol_class: Callable[..., asyncio.Protocol], context: ssl.SSLContext, wait_limit: float
) -> type[TLSSniffingProtocol]:
    """A protocol class for a TCP listener that serves ``protocol_class``'s HTTP over TLS."""
    return type(
        "ConfiguredTLSSniffingProtocol",
        (TLSSniffingProtocol,),
        {
            "inner_class": protocol_class,
            "context": context,
            "wait_limit": wait_limit,
            "handshakes": HandshakeGate(),
        },
    )
