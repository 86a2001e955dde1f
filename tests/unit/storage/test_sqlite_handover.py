"""How SQLiteStorage's writer receives writes: the writes submitted during one turn of the event loop are
committed together (one transaction, one delivery back to the loop), a turn larger than a batch's bound is
split in order, and stopping the writer commits what the current turn submitted."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from apiserver.storage.interface import StorageEvent
from apiserver.storage.sqlite import _MAX_BATCH, _Create, _Writer, _WriteRequest


class _Deliveries:
    """What the writer hands back to the loop: one list of events per committed batch."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []

    def __call__(self, events: list[StorageEvent], settles: list[Callable[[], None]]) -> None:
        self.batches.append([event.revision for event in events])
        for settle in settles:
            settle()


async def _submit_in_one_turn(
    writer: _Writer, count: int, first: int = 0, pause: float = 0.0
) -> list[_WriteRequest]:
    """``count`` creates (of keys numbered from ``first``) submitted without yielding to the loop in
    between; a ``pause`` gives up the GIL between them, as a busy loop's requests do, so that the writer
    thread could run, and would take the first write alone if it were handed over at once."""
    keys = [f"/registry/x/{n:05d}" for n in range(first, first + count)]
    requests = [_WriteRequest(_Create(key, b"v")) for key in keys]
    for request in requests:
        writer.submit(request)
        time.sleep(pause)
    return requests


async def test_the_writes_of_one_turn_commit_together(tmp_path: Path) -> None:
    deliveries = _Deliveries()
    writer = _Writer(tmp_path / "state.db", asyncio.get_running_loop(), deliveries)
    await writer.start()
    try:
        first = await _submit_in_one_turn(writer, 40, pause=0.001)
        await asyncio.gather(*(request.future for request in first))
        second = await _submit_in_one_turn(writer, 3, first=40, pause=0.001)
        events = await asyncio.gather(*(request.future for request in second))
    finally:
        await writer.stop()
    assert deliveries.batches == [list(range(1, 41)), [41, 42, 43]]
    assert [event.revision for event in events] == [41, 42, 43]


async def test_a_turn_beyond_the_batch_bound_commits_in_order(tmp_path: Path) -> None:
    deliveries = _Deliveries()
    writer = _Writer(tmp_path / "state.db", asyncio.get_running_loop(), deliveries)
    await writer.start()
    count = 2 * _MAX_BATCH + 7
    try:
        requests = await _submit_in_one_turn(writer, count)
        events = await asyncio.gather(*(request.future for request in requests))
    finally:
        await writer.stop()
    assert [len(batch) for batch in deliveries.batches] == [_MAX_BATCH, _MAX_BATCH, 7]
    assert [revision for batch in deliveries.batches for revision in batch] == list(
        range(1, count + 1)
    )
    assert [event.kv.key for event in events] == [r.write.key for r in requests]


async def test_stopping_commits_the_writes_of_the_current_turn(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    deliveries = _Deliveries()
    writer = _Writer(path, asyncio.get_running_loop(), deliveries)
    await writer.start()
    requests = await _submit_in_one_turn(writer, 5)
    await writer.stop()  # before the loop's next turn would have handed them over
    events = await asyncio.gather(*(request.future for request in requests))
    assert [event.revision for event in events] == [1, 2, 3, 4, 5]

    reopened = _Writer(path, asyncio.get_running_loop(), deliveries)
    assert await reopened.start() == 5  # committed, not only answered
    await reopened.stop()
