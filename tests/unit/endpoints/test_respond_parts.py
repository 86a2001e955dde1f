"""A body sent in parts (a large list between its head and tail) is the same response as one body: the
same start message and headers, a Content-Length of the total, then the parts in order, all but the last
with more_body."""

from __future__ import annotations

import asyncio

from apiserver.endpoints.http import (
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


def test_two_large_bodies_leave_a_piece_at_a_time_in_turn() -> None:
    """Two large responses written at once take turns piece by piece (each piece at most WRITE_PIECE), so
    that neither, nor anything else on the loop, waits for a whole body."""
    written: list[tuple[str, int]] = []

    def sender(name: str) -> Send:
        async def send(message: Message) -> None:
            if message["type"] == "http.response.body":
                written.append((name, len(message["body"])))

        return send

    body = b"x" * (3 * WRITE_PIECE)

    async def both() -> None:
        await asyncio.gather(respond(sender("a"), 200, body), respond(sender("b"), 200, body))

    asyncio.run(both())
    assert written == [(name, WRITE_PIECE) for _ in range(3) for name in ("a", "b")]
