"""A response of known length leaves in one write, its head with its body; a stream's head leaves at once
(a watch's client waits for it before any event), and HEAD, 304 and Connection: close keep uvicorn's framing."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable

import pytest
from uvicorn.protocols.http.flow_control import FlowControl

from apiserver.endpoints.http import chunk_stream, frame_chunk, respond
from apiserver.server.cycle import MessageEvent, ResponseCycle


class Transport:
    """What the cycle writes, write by write."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False
        self.buffered = 0
        """Bytes the transport holds, not yet taken by the kernel."""

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def pause_reading(self) -> None: ...

    def resume_reading(self) -> None: ...


def cycle(
    method: str = "GET", keep_alive: bool = True
) -> tuple[ResponseCycle, Transport, list[int]]:
    transport = Transport()
    completed: list[int] = []
    made = ResponseCycle(
        scope={"method": method, "http_version": "1.1", "path": "/"},  # type: ignore[typeddict-item]
        transport=transport,  # type: ignore[arg-type]
        flow=FlowControl(transport),  # type: ignore[arg-type]
        logger=logging.getLogger("test"),
        access_logger=logging.getLogger("test"),
        access_log=False,
        default_headers=[],
        message_event=MessageEvent(),
        expect_100_continue=False,
        keep_alive=keep_alive,
        on_response=lambda: completed.append(1),
    )
    return made, transport, completed


def awaited(response: Awaitable[None]) -> None:
    """``response`` awaited on a loop of its own (``respond`` hands back an awaitable, not a coroutine)."""

    async def main() -> None:
        await response

    asyncio.run(main())


def test_a_response_of_known_length_is_one_write() -> None:
    made, transport, completed = cycle()
    awaited(respond(made.send, 200, b'{"kind":"Status"}', headers=[(b"audit-id", b"a")]))
    assert transport.writes == [
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 17\r\n"
        b'audit-id: a\r\n\r\n{"kind":"Status"}'
    ]
    assert completed == [1] and not transport.closed


def test_a_whole_response_is_written_in_the_call_without_a_coroutine() -> None:
    """``respond`` through the cycle's ``send_whole``: written before anything is awaited, the same bytes
    as its two messages sent one after the other."""
    made, transport, completed = cycle()
    pending = respond(made.send, 201, b"{}", headers=[(b"warning", b'299 - "w"')])
    assert not inspect.iscoroutine(pending)
    assert completed == [1]
    apart, apart_transport, _ = cycle()

    async def two_messages() -> None:
        await apart.send(
            {
                "type": "http.response.start",
                "status": 201,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", b"2"),
                    (b"warning", b'299 - "w"'),
                ],
            }
        )
        await apart.send({"type": "http.response.body", "body": b"{}"})

    asyncio.run(two_messages())
    assert (
        transport.writes
        == apart_transport.writes
        == [
            b"HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: 2\r\n"
            b'warning: 299 - "w"\r\n\r\n{}'
        ]
    )


def test_a_stream_sends_its_head_at_once_then_chunks() -> None:
    made, transport, _ = cycle()

    async def stream() -> None:
        await made.send({"type": "http.response.start", "status": 200, "headers": []})
        assert transport.writes == [b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"]
        await made.send({"type": "http.response.body", "body": b"{}\n", "more_body": True})
        await made.send({"type": "http.response.body", "body": b"", "more_body": False})

    asyncio.run(stream())
    assert transport.writes[1:] == [b"3\r\n{}\n\r\n", b"0\r\n\r\n"]


@pytest.mark.parametrize(
    ("method", "status", "keep_alive", "expected"),
    [
        (
            "HEAD",
            200,
            True,
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n",
        ),
        (
            "GET",
            304,
            True,
            b"HTTP/1.1 304 Not Modified\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n",
        ),
        (
            "GET",
            200,
            False,
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
        ),
    ],
    ids=["HEAD has no body", "304", "closing"],
)
def test_framing_as_uvicorn_frames_it(
    method: str, status: int, keep_alive: bool, expected: bytes
) -> None:
    made, transport, completed = cycle(method, keep_alive)
    body = b"" if status == 304 else b"{}"
    awaited(respond(made.send, status, body))
    assert transport.writes == [expected]
    assert completed == [1] and transport.closed is not keep_alive


def test_a_body_longer_than_its_length_is_refused() -> None:
    made, _, _ = cycle()

    async def overlong() -> None:
        await made.send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"1")]}
        )
        await made.send({"type": "http.response.body", "body": b"{}"})

    with pytest.raises(RuntimeError, match="longer than Content-Length"):
        asyncio.run(overlong())


@pytest.mark.parametrize(
    ("length", "body", "error"),
    [(b"1", b"{}", "longer than"), (b"3", b"{}", "shorter than")],
    ids=["longer", "shorter"],
)
def test_a_whole_response_whose_body_misses_its_length_is_refused(
    length: bytes, body: bytes, error: str
) -> None:
    """``send_whole`` writes at once only a body of exactly its Content-Length; any other gets uvicorn's
    checks, and a short one is never answered as complete."""
    made, _, completed = cycle()
    start = {"type": "http.response.start", "status": 200, "headers": [(b"content-length", length)]}
    with pytest.raises(RuntimeError, match=error):
        awaited(made.send_whole(start, body))
    assert completed == []


def test_a_receive_waits_for_the_body_and_a_cancelled_one_leaves_no_waiter() -> None:
    """The cycle's message event wakes a waiting ``receive`` when the body arrives, as asyncio.Event does,
    and forgets a waiter that was cancelled."""
    made, _, _ = cycle("POST")

    async def main() -> None:
        cancelled = asyncio.ensure_future(made.message_event.wait())
        await asyncio.sleep(0)
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        assert not made.message_event._waiters
        waiting = asyncio.ensure_future(made.receive())
        await asyncio.sleep(0)
        assert not waiting.done()
        made.body += b"{}"  # what the connection does as the body arrives
        made.more_body = False
        made.message_event.set()
        assert await waiting == {"type": "http.request", "body": b"{}", "more_body": False}

    asyncio.run(main())


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ((b"x-note", b"a\r\nset-cookie: injected"), "Invalid HTTP header value."),
        ((b"x-note", b"nul\x00"), "Invalid HTTP header value."),
        ((b"x-note", b"del\x7f"), "Invalid HTTP header value."),
        ((b"x note", b"fine"), "Invalid HTTP header name."),
    ],
    ids=["CRLF in a value", "NUL in a value", "DEL in a value", "space in a name"],
)
def test_a_header_uvicorn_refuses_is_refused_and_nothing_is_written(
    header: tuple[bytes, bytes], message: str
) -> None:
    """uvicorn's checks of names and values (httptools_impl HEADER_RE, HEADER_VALUE_RE), whichever header
    carries the fault: a response never leaves with a header split in two."""
    for position in (0, 1):
        made, transport, completed = cycle()
        headers = [(b"audit-id", b"a")]
        headers.insert(position, header)
        with pytest.raises(RuntimeError, match=message):
            awaited(respond(made.send, 200, b"{}", headers=headers))
        assert transport.writes == [] and completed == []


def test_a_tab_in_a_header_value_is_sent() -> None:
    made, transport, _ = cycle()
    awaited(respond(made.send, 200, b"{}", headers=[(b"x-note", b"a\tb")]))
    assert b"\r\nx-note: a\tb\r\n" in transport.writes[0]


def filling_cycle() -> tuple[ResponseCycle, Transport, FlowControl]:
    """A cycle whose transport's buffer passes its high-water mark with any write of more than 4 bytes."""
    made, transport, _ = cycle()
    flow = made.flow

    def write(data: bytes) -> None:
        transport.writes.append(data)
        if len(data) > 4:
            flow.pause_writing()  # what the transport does when its buffer passes the high-water mark

    transport.write = write  # type: ignore[method-assign]
    return made, transport, flow


def test_a_send_that_fills_the_transport_returns_once_the_transport_took_it() -> None:
    """Go's Write returns once the kernel has the bytes; a send that leaves the transport over its
    high-water mark likewise returns only once it has drained, so that a handler (and the seats priority
    and fairness lets it hold) is done when its response is written, not when it was handed over."""
    made, transport, flow = filling_cycle()

    async def run() -> None:
        await made.send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"8")]}
        )
        for body, more in ((b"{}", True), (b"[1,2]\n", False)):
            sent = asyncio.ensure_future(
                made.send({"type": "http.response.body", "body": body, "more_body": more})
            )
            await asyncio.sleep(0)
            assert not sent.done()  # handed over (and written), not yet taken
            flow.resume_writing()
            await sent

    asyncio.run(run())
    assert b"".join(transport.writes).endswith(b"{}[1,2]\n")


def test_a_streams_send_that_fills_the_transport_returns_at_once() -> None:
    """A watch's events: the send waits only before writing (the watch writer drives it by hand and cuts
    off a client that stopped reading rather than wait for it)."""
    made, transport, flow = filling_cycle()

    async def run() -> None:
        await made.send({"type": "http.response.start", "status": 200, "headers": []})
        flow.resume_writing()
        sending = asyncio.ensure_future(
            made.send({"type": "http.response.body", "body": b"{}\n", "more_body": True})
        )
        await asyncio.sleep(0)
        assert flow.write_paused and sending.done()  # written, and nothing waited for

    asyncio.run(run())
    assert transport.writes[-1] == b"3\r\n{}\n\r\n"


def test_a_started_stream_takes_framed_chunks_directly_while_its_transport_is_idle() -> None:
    """A watch writes each event's chunk, framed once for all its watchers, straight to the transport; it
    falls back to ``send`` (flow control, the stall cut-off) whenever the transport holds anything."""
    made, transport, completed = cycle()

    async def stream() -> None:
        assert chunk_stream(made.send) is None  # not started: the head must go first
        await made.send({"type": "http.response.start", "status": 200, "headers": []})
        direct = chunk_stream(made.send)
        assert direct is not None
        assert direct.write_chunk(frame_chunk(b'{"type":"ADDED"}\n'))
        transport.buffered = 1
        assert not direct.write_chunk(frame_chunk(b"{}\n"))  # nothing written past waiting bytes
        transport.buffered = 0
        await made.send({"type": "http.response.body", "body": b"", "more_body": False})
        assert chunk_stream(made.send) is None and not direct.write_chunk(frame_chunk(b"{}\n"))

    asyncio.run(stream())
    assert transport.writes[1:] == [b'11\r\n{"type":"ADDED"}\n\r\n', b"0\r\n\r\n"]
    assert completed == [1]


def test_a_response_of_known_length_is_no_stream() -> None:
    made, _, _ = cycle()

    async def start() -> None:
        await made.send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]}
        )

    asyncio.run(start())
    assert chunk_stream(made.send) is None
