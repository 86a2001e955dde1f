"""Kept-alive HTTP/1.1 connections to one backend, and one request over them with its answer streamed back to
an ASGI ``send``: the proxy's hot path. httpx costs a proxied GET about a millisecond of the front's CPU
(its layers: request and response models, the transport, anyio), more than the backend spends serving it;
uvloop's streams and httptools' parser (both already under uvicorn) do the same job in a fraction, so that a
proxied GET stays under twice a direct one (bench/aggregation_bench.py)."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Sequence

import httptools

from apiserver.endpoints.http import Receive, Send

CONNECT_TIMEOUT = 5.0
MAX_IDLE = 64
READ_SIZE = 65536
_HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"transfer-encoding", b"upgrade", b"te", b"trailer"}
)
_FRONTS_OWN = frozenset({b"date", b"audit-id"})
"""Response headers the front's server and filter chain write themselves (uvicorn's Date, the Audit-Id of
the front's request, which the backend was given as its own)."""
_Stream = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class BackendError(Exception):
    """The backend could not be reached, or broke off before it answered."""


class _Response:
    """httptools' callbacks, gathering what the backend sent since the last feed."""

    def __init__(self) -> None:
        self.headers: list[tuple[bytes, bytes]] = []
        self.headers_complete = False
        self.chunks: list[bytes] = []
        self.complete = False
        self.answered = False
        """Whether the whole answer went to the client."""
        self.parser: httptools.HttpResponseParser | None = None
        self.keep_alive = False

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name not in _HOP_BY_HOP and name not in _FRONTS_OWN:
            self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        self.headers_complete = True
        # llhttp answers this right only until the message completes (then it says False)
        self.keep_alive = self.parser is not None and self.parser.should_keep_alive()

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)

    def on_message_complete(self) -> None:
        self.complete = True


class Pool:
    def __init__(self, host: str, port: int, context: ssl.SSLContext, sni: str) -> None:
        self.host = host
        self.port = port
        self.context = context
        self.sni = sni
        self.host_header = (f"[{host}]" if ":" in host else host).encode() + f":{port}".encode()
        self.idle: list[_Stream] = []

    async def _connect(self) -> _Stream:
        try:
            return await asyncio.wait_for(
                asyncio.open_connection(
                    self.host, self.port, ssl=self.context, server_hostname=self.sni
                ),
                CONNECT_TIMEOUT,
            )
        except (OSError, TimeoutError, ssl.SSLError) as error:
            raise BackendError(str(error) or type(error).__name__) from None

    async def close(self) -> None:
        idle, self.idle = self.idle, []
        for _, writer in idle:
            writer.close()

    async def forward(
        self,
        method: str,
        target: str,
        headers: Sequence[tuple[bytes, bytes]],
        body: bytes,
        receive: Receive,
        send: Send,
    ) -> None:
        """Send the request, stream the answer to ``send``; raises BackendError when nothing was answered
        (an answer that breaks off midway is ended where it broke). A kept-alive connection the backend
        closed meanwhile is replaced once."""
        head = self._head(method, target, headers, body)
        for attempt in range(2):
            reused = bool(self.idle) and attempt == 0
            reader, writer = self.idle.pop() if reused else await self._connect()
            try:
                keep = await _exchange(reader, writer, head + body, receive, send)
            except _NothingAnswered as error:
                writer.close()
                if reused:
                    continue  # a stale kept-alive connection: once more on a fresh one
                raise BackendError(str(error)) from None
            if keep and len(self.idle) < MAX_IDLE:
                self.idle.append((reader, writer))
            else:
                writer.close()
            return

    def _head(
        self, method: str, target: str, headers: Sequence[tuple[bytes, bytes]], body: bytes
    ) -> bytes:
        lines = [f"{method} {target} HTTP/1.1\r\nhost: ".encode(), self.host_header, b"\r\n"]
        for name, value in headers:
            if name != b"content-length":
                lines += (name, b": ", value, b"\r\n")
        if body or method in ("POST", "PUT", "PATCH"):
            lines.append(b"content-length: %d\r\n" % len(body))
        lines.append(b"\r\n")
        return b"".join(lines)


class _NothingAnswered(Exception):
    pass


async def _exchange(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    request: bytes,
    receive: Receive,
    send: Send,
) -> bool:
    """One request and its streamed answer; whether the connection may be kept. A client that goes away
    (a watch it stops) closes the backend connection, which ends the read."""
    response = _Response()
    parser = response.parser = httptools.HttpResponseParser(response)
    started = False
    watcher = asyncio.ensure_future(_disconnected(receive))
    watcher.add_done_callback(lambda task: _close_unless_answered(task, response, writer))
    try:
        writer.write(request)
        while not response.complete:
            try:
                data = await reader.read(READ_SIZE)
            except (OSError, ssl.SSLError) as error:
                if not started:
                    raise _NothingAnswered(str(error) or type(error).__name__) from None
                break
            if not data:
                if not started:
                    raise _NothingAnswered("the backend closed the connection")
                break
            try:
                parser.feed_data(data)
            except httptools.HttpParserError as error:
                if not started:
                    raise _NothingAnswered(f"malformed response: {error}") from None
                break
            if not started and response.headers_complete:
                status = parser.get_status_code()
                await send(
                    {"type": "http.response.start", "status": status, "headers": response.headers}
                )
                started = True
            if started and response.chunks:
                chunks, response.chunks = response.chunks, []
                await send(
                    {"type": "http.response.body", "body": b"".join(chunks), "more_body": True}
                )
        response.answered = True  # ASGI servers report a finished response as a disconnect
        await send({"type": "http.response.body", "body": b""})
    finally:
        watcher.cancel()
    return response.complete and response.keep_alive and not writer.is_closing()


async def _disconnected(receive: Receive) -> None:
    """Returns once the client has gone (ASGI's http.disconnect)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def _close_unless_answered(
    task: asyncio.Future[None], response: _Response, writer: asyncio.StreamWriter
) -> None:
    if not task.cancelled() and not response.answered:
        writer.close()
