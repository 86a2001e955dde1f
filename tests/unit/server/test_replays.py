"""A connection's kept answers (apiserver/server/replays.py): what it remembers, what it offers for keeping,
when it replays, and the bytes of a replay (the cycle's order: status line, default headers, the handler's
headers, the Audit-Id, the body)."""

from __future__ import annotations

import re

from apiserver.endpoints.replay import Replay
from apiserver.server.replays import (
    MAX_REMEMBERED_REQUEST,
    REPLAYS_KEPT,
    RETRY_AFTER_REFUSAL,
    KeptAnswers,
)

URL = b"/api/v1/namespaces/default/configmaps/polled"
HEADERS = [(b"host", b"127.0.0.1"), (b"accept", b"application/json")]
DATE = [(b"date", b"Mon, 07 Dec 2026 16:00:00 GMT")]


class Transport:
    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(data)


def answer(
    kept: KeptAnswers, transport: Transport, headers: list[tuple[bytes, bytes]] = HEADERS
) -> Replay | bool:
    return kept.answer(URL, headers, transport, DATE)  # type: ignore[arg-type]


def completed(replay: Replay, body: bytes = b'{"kind":"ConfigMap"}') -> None:
    """The full path's answer, every step having vouched."""
    replay.depends_on_handler(lambda: True)
    replay.see(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"Content-Type", b"application/json"), (b"content-length", b"20")],
        }
    )
    replay.see({"type": "http.response.body", "body": body})
    replay.ready = replay.complete


def test_a_request_is_offered_for_keeping_the_second_time_and_replayed_the_third() -> None:
    kept, transport = KeptAnswers(), Transport()
    assert answer(kept, transport) is False  # remembered only
    offered = answer(kept, transport)
    assert isinstance(offered, Replay)
    completed(offered)
    assert answer(kept, transport) is True
    assert answer(kept, transport) is True
    first, second = transport.written
    pattern = (
        rb"HTTP/1.1 200 OK\r\ndate: Mon, 07 Dec 2026 16:00:00 GMT\r\ncontent-type: application/json\r\n"
        rb"content-length: 20\r\naudit-id: [0-9a-f-]{36}\r\n\r\n\{\"kind\":\"ConfigMap\"\}"
    )
    assert re.fullmatch(pattern, first) and re.fullmatch(pattern, second)
    assert first != second  # a new Audit-Id each time


def test_an_answer_whose_checks_fail_goes_the_full_way_and_is_offered_again() -> None:
    kept, transport = KeptAnswers(), Transport()
    answer(kept, transport)
    offered = answer(kept, transport)
    assert isinstance(offered, Replay)
    holds = [True]
    completed(offered)
    offered.checks.append(lambda: holds[0])
    holds[0] = False
    again = answer(kept, transport)
    assert isinstance(again, Replay) and again is not offered
    assert transport.written == []


def test_a_refused_answer_is_not_offered_again_for_a_while() -> None:
    kept, transport = KeptAnswers(), Transport()
    answer(kept, transport)
    refused = answer(kept, transport)
    assert isinstance(refused, Replay)
    refused.refuse()  # a LIST, say: never ready
    outcomes = [answer(kept, transport) for _ in range(RETRY_AFTER_REFUSAL)]
    assert outcomes == [False] * RETRY_AFTER_REFUSAL
    assert isinstance(answer(kept, transport), Replay)


def test_what_a_connection_remembers_is_bounded() -> None:
    kept, transport = KeptAnswers(), Transport()
    for n in range(REPLAYS_KEPT + 1):
        answer(kept, transport, [*HEADERS, (b"x-n", str(n).encode())])
    assert len(kept._kept) == REPLAYS_KEPT
    large = [*HEADERS, (b"x-large", b"x" * MAX_REMEMBERED_REQUEST)]
    assert answer(kept, transport, large) is False
    assert answer(kept, transport, large) is False  # never remembered, never offered
    with_body = [*HEADERS, (b"content-length", b"5")]
    assert answer(kept, transport, with_body) is False
    assert answer(kept, transport, with_body) is False
