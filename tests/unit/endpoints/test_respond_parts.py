"""A body sent in parts (a large list between its head and tail) is the same response as one body: the
same start message and headers, a Content-Length of the total, then the parts in order, all but the last
with more_body."""

from __future__ import annotations

import asyncio

import pytest

from apiserver.endpoints.http import (
    ALONE_PIECE,
    CONTENTION,
    WRITE_PIECE,
    Message,
    Send,
    respond,
    respond_parts,
    warning_header,
)

HEADERS = [(b"etag", b'"1"')]
WARNINGS = ['a "quoted" warning']


def sent(parts: list[bytes] | None) -> list[Message]:
    """The ASGI messages of one response: ``respond_parts(parts)``, or ``respond`` of their join."""
    messages: list[Message] = []

    async def send(message: Message) -> None:
        messages.append(message)

    if parts is None:
        asyncio.run(respond(send, 200, b'{"items":[1,2]}', headers=HEADERS, warnings=WARNINGS))
    else:
        asyncio.run(respond_parts(send, 200, parts, headers=HEADERS, warnings=WARNINGS))
    return messages


def test_parts_start_like_one_body_and_follow_in_order() -> None:
    whole = sent(None)
    start, *bodies = sent([b'{"items":[', b"1,2", b"]}"])
    assert start == whole[0]
    assert (b"content-length", b"15") in start["headers"]
    assert bodies == [
        {"type": "http.response.body", "body": b'{"items":[', "more_body": True},
        {"type": "http.response.body", "body": b"1,2", "more_body": True},
        {"type": "http.response.body", "body": b"]}"},
    ]


def test_one_part_is_exactly_respond_and_no_parts_an_empty_body() -> None:
    assert sent([b'{"items":[1,2]}']) == sent(None)
    start, body = sent([])
    assert (b"content-length", b"0") in start["headers"]
    assert body == {"type": "http.response.body", "body": b""}


def test_a_warning_with_a_control_character_is_dropped_as_kubes_recorder_drops_it() -> None:
    # net.NewWarningHeader refuses control characters; the recorder then adds nothing
    assert warning_header('fine \\ and "quoted"') == b'299 - "fine \\\\ and \\"quoted\\""'
    assert warning_header("line\nbreak") is None
    assert warning_header("c1 \x85 control") is None


@pytest.fixture
def uncontended(monkeypatch: pytest.MonkeyPatch) -> None:
    """No request waits for seats (another test's queue may have been left with waiters)."""
    monkeypatch.setattr(CONTENTION, "waiting", 0)
    monkeypatch.setattr(CONTENTION, "writing", 0)


def recorder(written: list[tuple[str, int]], name: str, pause: bool = False) -> Send:
    """A send that records each body message's size; with ``pause``, one that waits a turn of the loop
    after each, as a transport over its high-water mark makes ``send`` wait until it drains."""

    async def send(message: Message) -> None:
        if message["type"] == "http.response.body":
            written.append((name, len(message["body"])))
            if pause:
                await asyncio.sleep(0)

    return send


def test_a_large_body_alone_leaves_whole(uncontended: None) -> None:
    """Nobody else wants the loop: no small pieces, no turns of the loop given up for nothing; only a body
    over ALONE_PIECE is cut, so that each piece waits for the transport to take the last."""
    written: list[tuple[str, int]] = []
    body = b"x" * (3 * WRITE_PIECE)
    asyncio.run(respond(recorder(written, "a"), 200, body))
    asyncio.run(respond_parts(recorder(written, "b"), 200, [b"[", body, b"]"]))
    asyncio.run(respond(recorder(written, "c"), 200, b"x" * (ALONE_PIECE + 1)))
    assert written == [
        ("a", 3 * WRITE_PIECE),
        ("b", 1),
        ("b", 3 * WRITE_PIECE),
        ("b", 1),
        ("c", ALONE_PIECE),
        ("c", 1),
    ]


def test_while_requests_wait_two_large_bodies_leave_a_piece_at_a_time_in_turn(
    uncontended: None,
) -> None:
    """While requests wait for seats, two large responses written at once take turns piece by piece (each
    piece at most WRITE_PIECE), so that neither, nor anything else on the loop, waits for a whole body."""
    written: list[tuple[str, int]] = []
    body = b"x" * (3 * WRITE_PIECE)
    CONTENTION.waiting = 1

    async def both() -> None:
        await asyncio.gather(
            respond(recorder(written, "a"), 200, body), respond(recorder(written, "b"), 200, body)
        )

    asyncio.run(both())
    assert written == [(name, WRITE_PIECE) for _ in range(3) for name in ("a", "b")]


def test_a_body_begun_while_another_is_written_leaves_in_pieces(uncontended: None) -> None:
    """The first body waits for its transport to drain; the second, written meanwhile, leaves in pieces
    with the loop given back between them; the first's last part, alone again, leaves whole."""
    written: list[tuple[str, int]] = []
    body = b"x" * (2 * WRITE_PIECE)

    async def both() -> None:
        await asyncio.gather(
            respond_parts(recorder(written, "a", pause=True), 200, [body, body]),
            respond(recorder(written, "b"), 200, body),
        )

    asyncio.run(both())
    assert written == [
        ("a", 2 * WRITE_PIECE),
        ("b", WRITE_PIECE),
        ("b", WRITE_PIECE),
        ("a", 2 * WRITE_PIECE),
    ]
    assert CONTENTION.writing == 0
