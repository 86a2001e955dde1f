"""One group commit of SQLiteStorage's writer: each write's precondition sees the writes before it in the same
batch, as it would if each had its own transaction (etcd's one Txn per write), and a compaction in the middle
of a batch sees the rows written before it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from apiserver.storage import SQLiteStorage
from apiserver.storage.interface import (
    EventType,
    KeyExistsError,
    KeyNotFoundError,
    RevisionConflictError,
    StorageEvent,
)
from apiserver.storage.sqlite import (
    _SCHEMA,
    _CompactRequest,
    _connect,
    _Create,
    _Delete,
    _Update,
    _Writer,
    _WriteRequest,
)

A, B = "/registry/x/a", "/registry/x/b"

# (the writes of one batch, what each answers: the event's revision or the error raised)
CASES: dict[str, tuple[list[object], list[object]]] = {
    "create, update, delete, create again of one key": (
        [_Create(A, b"1"), _Update(A, b"2", 1), _Delete(A, 2), _Create(A, b"3")],
        [1, 2, 3, 4],
    ),
    "a precondition on a revision the batch replaced": (
        [_Create(A, b"1"), _Update(A, b"2", 1), _Update(A, b"3", 1)],
        [1, 2, RevisionConflictError],
    ),
    "a second create of a key": (
        [_Create(A, b"1"), _Create(B, b"1"), _Create(A, b"2")],
        [1, 2, KeyExistsError],
    ),
    "an update of a key the batch deleted": (
        [_Create(A, b"1"), _Delete(A, None), _Update(A, b"2", 1), _Delete(A, None)],
        [1, 2, KeyNotFoundError, KeyNotFoundError],
    ),
    "a failed write takes no revision": (
        [_Update(B, b"1", 5), _Create(A, b"1"), _Delete(B, None), _Create(B, b"1")],
        [KeyNotFoundError, 1, KeyNotFoundError, 2],
    ),
    "a compaction between writes": (
        [_Create(A, b"1"), _Update(A, b"2", 1), 2, _Update(A, b"3", 2), _Delete(A, 3), 3],
        [1, 2, None, 3, 4, None],
    ),
}


def _batch(items: list[object]) -> list[_WriteRequest | _CompactRequest]:
    return [
        _CompactRequest(item) if isinstance(item, int) else _WriteRequest(item)  # type: ignore[arg-type]
        for item in items
    ]


def _outcome(future: asyncio.Future[object]) -> object:
    error = future.exception()
    if error is not None:
        return type(error)
    result = future.result()
    return result.revision if isinstance(result, StorageEvent) else result


@pytest.mark.parametrize(("writes", "expected"), CASES.values(), ids=CASES.keys())
async def test_a_batch_answers_as_one_transaction_per_write(
    tmp_path: Path, writes: list[object], expected: list[object]
) -> None:
    path = tmp_path / "state.db"
    delivered: list[Callable[[], None]] = []
    events: list[StorageEvent] = []

    def deliver(batch: list[StorageEvent], settles: list[Callable[[], None]]) -> None:
        events.extend(batch)
        delivered.extend(settles)

    writer = _Writer(path, asyncio.get_running_loop(), deliver)
    batch = _batch(writes)
    with closing(_connect(path)) as db:
        db.execute("PRAGMA journal_mode = WAL")
        db.executescript(_SCHEMA)
        writer._commit(db, batch)  # one group commit, on this thread
    await asyncio.sleep(0)  # the delivery is scheduled on the loop
    for settle in delivered:
        settle()
    assert [_outcome(request.future) for request in batch] == expected  # type: ignore[arg-type]
    assert [event.revision for event in events] == [e for e in expected if isinstance(e, int)]

    # what was committed reads back as the same history: every surviving row, its previous value
    storage = SQLiteStorage(path)
    await storage.start()
    try:
        last = max((e for e in expected if isinstance(e, int)), default=0)
        assert await storage.current_revision() == last
        kv = await storage.get(A)
        live = {e.kv.key: e for e in events}
        if A in live and live[A].type is EventType.PUT:
            assert kv is not None and kv.value == live[A].kv.value
            assert kv.create_revision == live[A].kv.create_revision
        else:
            assert kv is None
    finally:
        await storage.close()
