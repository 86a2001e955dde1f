"""The HTTP/1.1 connection's own limits, as kube-apiserver's net/http server sets them
(k8s.io/apiserver pkg/server/secure_serving.go: ``MaxHeaderBytes: 1 << 20``, ``ReadHeaderTimeout: 32 *
time.Second`` "just shy of requestTimeoutUpperBound", ``IdleTimeout: 90 * time.Second``), on uvicorn's httptools
protocol, which has none of them: a request's headers are bounded in bytes and in number (431, Go's answer,
before more than about a read's worth past the bound is buffered), and a client that sends its headers or its
body too slowly is disconnected. The idle keep-alive timeout is uvicorn's (``timeout_keep_alive``), kept by one
sweep per loop (idlesweep.py) rather than a timer per response.

kube sets no body read timeout (its ``--request-timeout`` bounds a handler that waits for a body); here a body
must arrive whole within ``read_body_timeout`` of its headers, by default the request timeout, so that slow
bodies cannot hold connections where the request timeout does not reach (the request may be waiting for its
body before it is routed). Go counts no headers; 10,000 one-byte headers fit in Go's megabyte, but each costs a
Python tuple here, so their number is bounded as Node's server bounds it (``maxHeadersCount``: 2000).

The checks are made once per read and once per request (the header count when the headers are complete),
never per header, so a GET costs what it did.

Over TLS, the connection's certificates reach the application through the ASGI TLS extension
(``scope["extensions"]["tls"]``: ``client_cert_chain`` as PEM strings, leaf first, ``tls_version``...), one
dict made when the connection is (after the handshake) and shared by its requests, so that the x509
authenticator verifies a connection's certificate once (apiserver/authentication/x509.py).
"""

from __future__ import annotations

import asyncio
import ssl
import urllib.parse
from typing import Any

import httptools
from uvicorn.config import Config
from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from apiserver.endpoints.replay import SCOPE_REPLAY
from apiserver.server.cycle import MessageEvent, ResponseCycle
from apiserver.server.idlesweep import idle_sweep
from apiserver.server.limits import ConnectionLimits
from apiserver.server.openssl import peer_chain
from apiserver.server.replays import KeptAnswers, request_size

MAX_HEADER_BYTES = 1 << 20
"""Go's http.Server MaxHeaderBytes as kube sets it; Go reads up to 4096 bytes more before it refuses."""
_HEADER_SLACK = 4096
MAX_HEADERS = 2000
_TLS_VERSIONS = {"TLSv1": 0x0301, "TLSv1.1": 0x0302, "TLSv1.2": 0x0303, "TLSv1.3": 0x0304}
# Go's answer to headers past MaxHeaderBytes (net/http server.go: "431 Request Header Fields Too Large",
# with its errorHeaders, as HTTP/1.0 and closing the connection)
_TOO_LARGE = b"431 Request Header Fields Too Large"
HEADERS_TOO_LARGE_RESPONSE = (
    b"HTTP/1.0 "
    + _TOO_LARGE
    + b"\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    + _TOO_LARGE
)


class _HeadersTooLarge(Exception):
    """Raised from a parser callback to stop the parse; answered 431."""


class LimitedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the header bounds and the read timeouts. A phase is ``headers``
    from the connection (or a request's first byte) to the end of its headers, ``body`` from there to the
    end of the message; each has one timer, armed when a read leaves the phase unfinished (an idle
    connection, between requests, has uvicorn's keep-alive timer instead)."""

    limits = ConnectionLimits()

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, object],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._reading_headers = True
        self._reading_body = False
        self._header_bytes = 0
        self._timer: asyncio.TimerHandle | None = None
        self._extensions: dict[str, Any] | None = None
        self._idle = idle_sweep(self.loop)
        self._listed = False
        """Whether the idle sweep may hold this connection (``_busy`` takes it out)."""
        self._kept = KeptAnswers()
        self._replayed = False
        """The request being parsed was answered by a replay: no cycle was made for it."""
        self._asgi = {"version": self.asgi_version, "spec_version": "2.3"}
        self._scope_base: dict[str, Any] = {}
        """The scope's entries that every request of the connection shares (``connection_made``)."""
        self._next_message()

    def data_received(self, data: bytes) -> None:
        if self._listed:  # _unset_keepalive_if_required's work, without a call
            self._busy()
        if self._reading_headers:
            self._header_bytes += len(data)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as error:
            if isinstance(error.__context__, _HeadersTooLarge):  # raised in on_headers_complete
                self._refuse_headers()
                return
            msg = "Invalid HTTP request received."
            self.logger.warning(msg)
            self.send_400_response(msg)
            return
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return
        if self._reading_headers:
            if self._header_bytes > MAX_HEADER_BYTES + _HEADER_SLACK:
                self._refuse_headers()
            elif self._header_bytes and self._timer is None:  # a request has begun
                self._arm(self.limits.read_header_timeout)
        elif self._reading_body and self._timer is None:
            self._arm(self.limits.read_body_timeout)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        ssl_object = transport.get_extra_info("ssl_object")
        if ssl_object is not None:
            self._extensions = {"tls": tls_extension(ssl_object)}
        self._scope_base = {
            "type": "http",
            "asgi": self._asgi,
            "server": self.server,
            "client": self.client,
            "scheme": self.scheme,
            "root_path": self.root_path,
        }
        if self._extensions is not None:
            self._scope_base["extensions"] = self._extensions
        self._arm(self.limits.read_header_timeout)

    on_message_begin = None  # type: ignore[assignment]
    """No parser callback when a message begins: what uvicorn's reset is done when the previous message
    completed (``_next_message``), and the scope is made once the headers are complete."""

    def _next_message(self) -> None:
        """uvicorn's on_message_begin, for the message that follows."""
        self.url = b""
        self.expect_100_continue = False
        self.headers = []

    def on_header(self, name: bytes, value: bytes) -> None:
        """uvicorn's: the name lowercased, the value without the trailing whitespace llhttp keeps."""
        name = name.lower()
        value = value.rstrip(b" \t")
        if name == b"expect" and value.lower() == b"100-continue":
            self.expect_100_continue = True
        self.headers.append((name, value))

    def connection_lost(self, exc: Exception | None) -> None:
        self._kept.clear()
        self._disarm()
        self._idle.discard(self)
        super().connection_lost(exc)

    def _unset_keepalive_if_required(self) -> None:
        self._busy()

    def _busy(self) -> None:
        self._listed = False
        self._idle.discard(self)

    def on_response_complete(self) -> None:
        """uvicorn's, with the connection handed to the loop's idle sweep instead of a timer of its own."""
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        if self.flow.read_paused:
            self.flow.resume_reading()
        if self.pipeline:
            if self._listed:
                self._busy()
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
        else:
            self._idle.add(self, self.timeout_keep_alive, self.timeout_keep_alive_handler)
            self._listed = True

    def on_headers_complete(self) -> None:
        self._reading_headers = False
        if self._timer is not None:
            self._disarm()
        if len(self.headers) > MAX_HEADERS or (
            self._header_bytes > MAX_HEADER_BYTES
            and request_size(self.url, self.headers) > MAX_HEADER_BYTES
        ):
            raise _HeadersTooLarge
        self._reading_body = True
        # uvicorn's on_headers_complete, with this module's cycle (uvicorn names its own class there).
        # ``serve`` sets no ``limit_concurrency``: the in-flight limits are the filter chain's.
        parser = self.parser
        http_version = parser.get_http_version()
        method = parser.get_method()
        # uvicorn's scope, its connection's entries copied from one dict made when the connection was
        self.scope = scope = {  # type: ignore[assignment]
            **self._scope_base,
            "http_version": http_version,
            "method": _METHODS.get(method) or method.decode("ascii"),
            "headers": self.headers,
            "state": self.app_state.copy(),
        }
        if parser.should_upgrade() and self._should_upgrade():
            return
        path, raw_path, query = _PARSED_URLS.get(self.url) or _parsed_url(self.url)
        if self.root_path:
            path = self.root_path + path
            raw_path = self.root_path.encode("ascii") + raw_path
        scope["path"] = path
        scope["raw_path"] = raw_path
        scope["query_string"] = query
        existing = self.cycle
        keep_alive = http_version != "1.0" and parser.should_keep_alive()
        if (
            keep_alive
            and scope["method"] == "GET"
            and (existing is None or existing.response_complete)
            and not self.access_log
            and self._may_replay()
        ):
            return
        self.cycle = ResponseCycle(
            scope,
            self.transport,
            self.flow,
            self.logger,
            self.access_logger,
            self.access_log,
            self.server_state.default_headers,
            MessageEvent(),
            self.expect_100_continue,
            keep_alive,
            self.on_response_complete,
        )
        if existing is None or existing.response_complete:
            if self._listed:  # busy again: a replay earlier in this read made it idle
                self._busy()
            self._start_asgi_task(self.cycle, self.app)
        else:  # a pipelined request waits for the one before it
            self.flow.pause_reading()
            self.pipeline.appendleft((self.cycle, self.app))

    def _may_replay(self) -> bool:
        """A GET answered here and now from this connection's kept answer (True), or one that goes the full
        way, offering its answer for keeping (apiserver/server/replays.py). A client that stopped reading
        gets the full path's flow control."""
        if self.flow.write_paused:
            return False
        answered = self._kept.answer(
            self.url, self.headers, self.transport, self.server_state.default_headers
        )
        if answered is True:
            self._replayed = True
            self.on_response_complete()
            return True
        if answered:
            self.scope[SCOPE_REPLAY] = answered  # type: ignore[literal-required]
        return False

    def on_message_complete(self) -> None:
        # what follows is the next request's headers
        self._reading_body = False
        self._reading_headers = True
        self._header_bytes = 0
        if self._timer is not None:
            self._disarm()
        if self._replayed:  # its answer is written already, by no cycle
            self._replayed = False
        else:  # uvicorn's, inlined
            cycle = self.cycle
            if not (
                cycle.response_complete or (self.parser.should_upgrade() and self._should_upgrade())
            ):
                cycle.more_body = False
                cycle.message_event.set()
        self._next_message()

    def on_body(self, body: bytes) -> None:
        """uvicorn's, with the cycle looked up once."""
        cycle = self.cycle
        if cycle.response_complete or (self.parser.should_upgrade() and self._should_upgrade()):
            return
        cycle.body += body
        if len(cycle.body) > HIGH_WATER_LIMIT:
            self.flow.pause_reading()
        cycle.message_event.set()

    def _refuse_headers(self) -> None:
        self._disarm()
        if not self.transport.is_closing():
            self.transport.write(HEADERS_TOO_LARGE_RESPONSE)
            self.transport.close()

    def _arm(self, seconds: float) -> None:
        self._disarm()
        if seconds > 0:
            self._timer = self.loop.call_later(seconds, self._timed_out)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _timed_out(self) -> None:
        """Go closes a connection whose read deadline passed without an answer; so does this. A handler
        waiting for the body sees the client gone (http.disconnect)."""
        self._timer = None
        if self._reading_headers or self._reading_body:
            self.transport.close()


def _parsed_url(url: bytes) -> tuple[str, bytes, bytes]:
    """The request target's path (percent-decoded), raw path and query, as uvicorn reads them; kept per
    target, as a client sends the same few (a target that does not parse raises, and is not kept; nor is
    a long one)."""
    parsed = _PARSED_URLS.get(url)
    if parsed is None:
        parsed_url = httptools.parse_url(url)
        raw_path = parsed_url.path
        path = raw_path.decode("ascii")
        if "%" in path:
            path = urllib.parse.unquote(path)
        parsed = (path, raw_path, parsed_url.query or b"")
        if len(url) <= _LONGEST_REMEMBERED:
            if len(_PARSED_URLS) >= _REMEMBERED_URLS:
                _PARSED_URLS.clear()
            _PARSED_URLS[url] = parsed
    return parsed


_METHODS = {method.encode(): method for method in ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD")}
"""The usual methods' names as the scope's strings, made once."""
_PARSED_URLS: dict[bytes, tuple[str, bytes, bytes]] = {}
_REMEMBERED_URLS = 4096
_LONGEST_REMEMBERED = 2048
"""A longer target (a megabyte may come) is parsed every time: the kept ones stay a few megabytes."""


def tls_extension(ssl_object: ssl.SSLObject) -> dict[str, Any]:
    """The ASGI TLS extension's dict for a connection (https://asgi.readthedocs.io, "TLS"); the cipher
    suite's number is not known to Python's ssl module, hence None."""
    return {
        "server_cert": None,
        "client_cert_chain": [ssl.DER_cert_to_PEM_cert(der) for der in peer_chain(ssl_object)],
        "client_cert_name": None,
        "client_cert_error": None,
        "tls_version": _TLS_VERSIONS.get(ssl_object.version() or ""),
        "cipher_suite": None,
    }


def protocol_class(limits: ConnectionLimits) -> type[LimitedHttpToolsProtocol]:
    """A protocol class bound to ``limits`` (uvicorn takes a class, built per connection)."""
    return type("ConfiguredHttpToolsProtocol", (LimitedHttpToolsProtocol,), {"limits": limits})
