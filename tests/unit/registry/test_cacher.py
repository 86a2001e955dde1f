"""The watch cache: replay from its history, fall back to storage for older revisions (410 once compacted),
serve rv=0 lists from memory, and cut off a watcher that stops reading without slowing the others."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from apiserver.registry import cacher
from apiserver.registry.cacher import WatchCache
from apiserver.storage.fanout import WatchOverflowError, WatchStream
from apiserver.storage.interface import (
    CompactedError,
    ListResult,
    StorageError,
    StorageEvent,
    StorageUnavailableError,
    Watch,
)
from apiserver.storage.memory import MemoryStorage

PREFIX = "/registry/things/"


def run(body: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(body(), timeout=10))


async def take(watch: Watch, count: int) -> list[StorageEvent]:
    events: list[StorageEvent] = []
    async for event in watch:
        events.append(event)
        if len(events) == count:
            break
    return events


async def settle(cache: WatchCache, storage: MemoryStorage) -> None:
    """Until the cache has applied every write, and the loop has come round to publish them."""
    while cache.revision < await storage.current_revision():
        await asyncio.sleep(0.001)
    await asyncio.sleep(0)


@contextlib.asynccontextmanager
async def following(storage: MemoryStorage) -> AsyncIterator[tuple[MemoryStorage, WatchCache]]:
    """``storage`` started, with a cache whose follower is live; both stopped on exit."""
    await storage.start()
    cache = WatchCache(storage, PREFIX)
    await cache.start()
    try:
        await asyncio.sleep(0.01)  # the follower is live
        yield storage, cache
    finally:
        await cache.stop()
        await storage.close()


def test_replays_history_and_follows_live_changes() -> None:
    async def body() -> None:
        storage = MemoryStorage()
        await storage.start()
        first = await storage.create(f"{PREFIX}a", b"1")
        cache = WatchCache(storage, PREFIX)
        await cache.start()
        await storage.update(f"{PREFIX}a", b"2", first.mod_revision)
        await storage.create(f"{PREFIX}b", b"3")
        await settle(cache, storage)
        watch = cache.watch(PREFIX, first.mod_revision)
        await storage.delete(f"{PREFIX}b")
        events = await take(watch, 3)
        assert [(e.kv.key, e.kv.value) for e in events] == [
            (f"{PREFIX}a", b"2"),
            (f"{PREFIX}b", b"3"),
            (f"{PREFIX}b", b"3"),
        ]
        assert [e.revision for e in events] == sorted(e.revision for e in events)
        await watch.close()
        items, revision = cache.list(PREFIX)
        assert [kv.key for kv in items] == [
            f"{PREFIX}a"
        ] and revision == await storage.current_revision()
        await cache.stop()
        await storage.close()

    run(body)


def test_revisions_older_than_history_come_from_storage_then_410_once_compacted() -> None:
    async def body() -> None:
        storage = MemoryStorage()
        await storage.start()
        cache = WatchCache(storage, PREFIX, history_size=2)
        await cache.start()
        for index in range(5):
            await storage.create(f"{PREFIX}{index}", b"x")
        await settle(cache, storage)
        assert not cache.covers(1)
        old = cache.watch(PREFIX, 1)  # served by storage, which still has the whole history
        assert [e.kv.key for e in await take(old, 4)] == [f"{PREFIX}{i}" for i in range(1, 5)]
        await old.close()
        await storage.compact(4)
        with pytest.raises(CompactedError):
            await take(cache.watch(PREFIX, 1), 1)
        await cache.stop()
        await storage.close()

    run(body)


def test_a_watcher_that_stops_reading_is_cut_off_and_others_continue() -> None:
    async def body() -> None:
        storage = MemoryStorage()
        await storage.start()
        cache = WatchCache(storage, PREFIX)
        await cache.start()
        stalled = cache.watch(PREFIX, 0)
        reader = cache.watch(PREFIX, 0)
        received: list[StorageEvent] = []

        async def read() -> None:
            received.extend(await take(reader, 10_500))

        task = asyncio.create_task(read())
        for index in range(10_500):
            await storage.create(f"{PREFIX}{index:05}", b"x")
            if index % 100 == 0:
                await asyncio.sleep(
                    0
                )  # let the cache and the reading watcher run, as requests would
        await task
        assert len(received) == 10_500
        with pytest.raises(WatchOverflowError):
            await take(stalled, 10_500)
        await cache.stop()
        await storage.close()

    run(body)


class FlakyStorage(MemoryStorage):
    """Memory storage whose next ``failing_lists`` lists fail, as an unreachable etcd's would."""

    def __init__(self) -> None:
        super().__init__()
        self.failing_lists = 0

    async def list(
        self, prefix: str, *, limit: int = 0, start_key: str | None = None, revision: int = 0
    ) -> ListResult:
        if self.failing_lists:
            self.failing_lists -= 1
            raise StorageUnavailableError("storage is unavailable")
        return await super().list(prefix, limit=limit, start_key=start_key, revision=revision)


async def break_follower(cache: WatchCache, storage: FlakyStorage) -> None:
    """End the cache's storage watch with an error, as a broken etcd watch ends, and write what it then
    misses: its follower restarts."""
    await asyncio.sleep(0.01)  # the follower is live
    assert cache._local is not None
    cache._local.fail(StorageError("the watch broke"))
    for _ in range(5):
        await storage.create(f"{PREFIX}{await storage.current_revision()}", b"x")
    await asyncio.sleep(0.01)  # the follower sees the error and waits to relist


def test_the_cache_follows_again_after_a_failed_relist(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cacher, "RELIST_DELAY_SECONDS", 0.01)

    async def body() -> None:
        storage = FlakyStorage()
        cache = WatchCache(storage, PREFIX)
        await cache.start()
        storage.failing_lists = 2
        await break_follower(cache, storage)
        await asyncio.wait_for(settle(cache, storage), timeout=2)
        await storage.create(f"{PREFIX}after", b"y")
        await asyncio.wait_for(settle(cache, storage), timeout=2)
        assert f"{PREFIX}after" in cache.objects
        await cache.stop()
        await storage.close()

    run(body)


def test_a_watch_started_while_the_cache_relists_is_ended_not_left_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cacher, "RELIST_DELAY_SECONDS", 0.05)

    async def body() -> None:
        storage = FlakyStorage()
        cache = WatchCache(storage, PREFIX)
        await cache.start()
        await break_follower(cache, storage)
        watch = cache.watch(PREFIX, cache.revision)  # the cache is behind storage now
        await storage.create(f"{PREFIX}missed", b"y")  # folded into the relist, never published
        # ends (its consumer re-watches from storage) rather than waiting for an event that never comes
        assert await asyncio.wait_for(take(watch, 1), timeout=2) == []
        await cache.stop()
        await storage.close()

    run(body)


def test_a_watch_from_the_current_revision_needs_no_history() -> None:
    """A watch opened at the cache's revision gets every later change even when its consumer starts
    reading after the history has rolled past that revision (a slow initial list being written)."""

    async def body() -> None:
        storage = MemoryStorage()
        await storage.start()
        cache = WatchCache(storage, PREFIX, history_size=3)
        await cache.start()
        try:
            watch = cache.watch(PREFIX, cache.revision)
            for index in range(10):
                await storage.create(f"{PREFIX}k{index}", b"v")
            await settle(cache, storage)
            assert not cache.covers(watch_start := cache.revision - 9)  # history rolled past
            events = await take(watch, 10)
            assert [e.revision for e in events] == list(range(watch_start, watch_start + 10))
            await watch.close()
        finally:
            await cache.stop()
            await storage.close()

    run(body)


def test_a_write_is_in_the_cache_when_the_writer_goes_on_and_reaches_watchers_soon_after() -> None:
    """The cache applies a write of the in-process storage as the write publishes it (no task wake-up per
    write): a read right after the write finds it; its watchers get it once the loop comes round."""

    async def body() -> None:
        async with following(MemoryStorage()) as (storage, cache):
            watch = cache.watch(PREFIX, cache.revision)
            written = await storage.create(f"{PREFIX}a", b"1")
            assert cache.objects[f"{PREFIX}a"] is written and cache.revision == written.mod_revision
            assert await cache.get(f"{PREFIX}a") is written
            assert [e.kv for e in await take(watch, 1)] == [written]
            await watch.close()

    run(body)


def test_an_event_the_cache_cannot_apply_restarts_it_from_a_relist(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A deletion of a key the cache never had (its state went wrong) ends the storage watch with the
    error, as on the follower's own path: the cache relists and its watchers are ended to re-watch."""
    monkeypatch.setattr(cacher, "RELIST_DELAY_SECONDS", 0.01)

    async def body() -> None:
        storage = MemoryStorage()
        await storage.create(f"{PREFIX}a", b"1")
        async with following(storage) as (_, cache):
            del cache.objects[f"{PREFIX}a"]  # the cache's state is wrong
            watch = cache.watch(PREFIX, cache.revision)
            await storage.delete(f"{PREFIX}a")
            assert await asyncio.wait_for(take(watch, 1), timeout=2) == []  # ended
            await asyncio.wait_for(settle(cache, storage), timeout=2)
            assert cache.objects == {}

    run(body)


def test_changes_ready_together_reach_a_watcher_in_one_batch() -> None:
    """Writes the cache's storage watch has ready at once are published together: an idle watcher takes
    them in one hand-over (one write to its connection), in order, rather than one per change."""

    async def body() -> None:
        storage = MemoryStorage()
        await storage.start()
        cache = WatchCache(storage, PREFIX)
        await cache.start()
        try:
            watch = cache.watch(PREFIX, cache.revision)
            assert isinstance(watch, WatchStream)
            handed: list[list[int]] = []
            watch.listener = lambda events: handed.append([e.revision for e in events]) or True
            parked = asyncio.create_task(watch.batch(10))
            await asyncio.sleep(0)  # the consumer parks: the listener may take live events
            written = [await storage.create(f"{PREFIX}k{index}", b"v") for index in range(3)]
            await settle(cache, storage)
            assert handed == [[kv.mod_revision for kv in written]]
            parked.cancel()
            await watch.close()
        finally:
            await cache.stop()
            await storage.close()

    run(body)
