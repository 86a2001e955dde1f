"""MemoryStorage.snapshot: a copy that reads, lists at old revisions and replays watches as the original did
at the time, and that neither side's later writes reach the other."""

from __future__ import annotations

import asyncio

import pytest

from apiserver.storage import MemoryStorage
from apiserver.storage.interface import CompactedError, EventType


async def _events(
    storage: MemoryStorage, after: int, count: int
) -> list[tuple[EventType, str, bytes]]:
    stream = storage.watch("/r/", after)
    events = []
    async for event in stream:
        events.append((event.type, event.kv.key, event.kv.value))
        if len(events) >= count:
            break
    await stream.close()
    return events


def test_a_snapshot_is_the_store_as_it_was_and_then_its_own() -> None:
    async def scenario() -> None:
        original = MemoryStorage()
        first = await original.create("/r/a", b"1")
        second = await original.update("/r/a", b"2", first.mod_revision)
        await original.create("/r/b", b"x")
        await original.compact(second.mod_revision)
        copy = original.snapshot()
        assert await copy.current_revision() == await original.current_revision() == 3
        assert (await copy.list("/r/", revision=2)).items[0].value == b"2"
        with pytest.raises(CompactedError):
            await copy.list("/r/", revision=first.mod_revision)
        await copy.delete("/r/b")
        await original.create("/r/c", b"y")
        assert [kv.key for kv in (await copy.list("/r/")).items] == ["/r/a"]
        assert [kv.key for kv in (await original.list("/r/")).items] == ["/r/a", "/r/b", "/r/c"]
        assert await _events(copy, second.mod_revision, 2) == [
            (EventType.PUT, "/r/b", b"x"),
            (EventType.DELETE, "/r/b", b"x"),
        ]

    asyncio.run(scenario())
