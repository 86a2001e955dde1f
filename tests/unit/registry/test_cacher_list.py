"""The watch cache's LIST: its keys are kept sorted as events arrive (inserted when new, removed on delete,
rebuilt on relist), so a prefix's objects are a bisect slice; it must return exactly what filtering and
sorting every key did before, and its rendered entries must follow every change."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apiserver.registry import cacher
from apiserver.registry.cacher import MISS, WatchCache
from apiserver.storage.interface import KeyValue, ListResult, StorageError
from apiserver.storage.memory import MemoryStorage

PREFIX = "/registry/things/"
TOP = "\U0010ffff"  # the largest character: a prefix ending in it has no simple upper bound
KEYS = [
    f"{PREFIX}ns1/a",
    f"{PREFIX}ns1/b",
    f"{PREFIX}ns1",
    f"{PREFIX}ns10/a",
    f"{PREFIX}ns1/",
    f"{PREFIX}ns2/é",
    f"{PREFIX}ns2/{TOP}",
    f"{PREFIX}{TOP}/x",
    f"{PREFIX}{TOP}{TOP}",
    f"{PREFIX}{TOP}",
    f"{PREFIX}0",
]
PREFIXES = [
    "",
    "/registry/",
    PREFIX,
    f"{PREFIX}ns1/",
    f"{PREFIX}ns1",
    f"{PREFIX}ns1/a",
    f"{PREFIX}ns10/",
    f"{PREFIX}ns2/",
    f"{PREFIX}ns2/{TOP}",
    f"{PREFIX}{TOP}",
    f"{PREFIX}{TOP}{TOP}",
    f"{PREFIX}zz/",
    "/registry/other/",
]


def run(body: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(body(), timeout=10))


async def settle(cache: WatchCache, storage: MemoryStorage) -> None:
    while cache.revision < await storage.current_revision():
        await asyncio.sleep(0.001)


def decode(kv: KeyValue) -> dict[str, Any]:
    return {"key": kv.key, "value": orjson.loads(kv.value)}


def sorted_then_filtered(cache: WatchCache, prefix: str) -> list[KeyValue]:
    """What the cache's list returned before it kept its keys sorted: filter every key, then sort."""
    keys = sorted(key for key in cache.objects if key.startswith(prefix))
    return [cache.objects[key] for key in keys]


async def assert_lists_match(cache: WatchCache, storage: MemoryStorage) -> None:
    """Every prefix lists as filtering and sorting did, as storage does, at the cache's revision."""
    for prefix in PREFIXES:
        items, revision = cache.list(prefix)
        assert items == sorted_then_filtered(cache, prefix), prefix
        assert items == (await storage.list(prefix)).items, prefix
        assert revision == await storage.current_revision()


def test_a_prefix_lists_exactly_its_keys_in_order_whether_listed_or_watched() -> None:
    async def body() -> None:
        storage = MemoryStorage()
        listed, watched = KEYS[::2], KEYS[1::2]
        for key in listed:
            await storage.create(key, b"1")
        cache = WatchCache(storage, PREFIX)
        await cache.start()  # the listed keys come from the relist, the others from the watch
        for key in watched:
            await storage.create(key, b"2")
        await settle(cache, storage)
        assert [kv.key for kv in cache.list(PREFIX)[0]] == sorted(KEYS)
        assert [kv.key for kv in cache.list(f"{PREFIX}ns1/")[0]] == [
            f"{PREFIX}ns1/",
            f"{PREFIX}ns1/a",
            f"{PREFIX}ns1/b",
        ]
        assert [kv.key for kv in cache.list(f"{PREFIX}{TOP}")[0]] == [
            f"{PREFIX}{TOP}",
            f"{PREFIX}{TOP}/x",
            f"{PREFIX}{TOP}{TOP}",
        ]
        await assert_lists_match(cache, storage)
        await cache.stop()
        await storage.close()

    run(body)


OPERATIONS = st.lists(st.tuples(st.sampled_from(KEYS), st.booleans()), max_size=40)


@settings(max_examples=60, deadline=None)
@given(initial=st.sets(st.sampled_from(KEYS)), operations=OPERATIONS)
def test_creates_updates_and_deletes_keep_every_prefix_listing_as_before(
    initial: set[str], operations: list[tuple[str, bool]]
) -> None:
    """Each operation writes its key (a create when missing, else an update) or deletes it."""

    async def body() -> None:
        storage = MemoryStorage()
        for key in initial:
            await storage.create(key, b"0")
        cache = WatchCache(storage, PREFIX)
        await cache.start()
        for number, (key, write) in enumerate(operations):
            current = await storage.get(key)
            if write and current is None:
                await storage.create(key, str(number).encode())
            elif write and current is not None:
                await storage.update(key, str(number).encode(), current.mod_revision)
            elif current is not None:
                await storage.delete(key)
        await settle(cache, storage)
        await assert_lists_match(cache, storage)
        await cache.stop()
        await storage.close()

    run(body)


class CountingStorage(MemoryStorage):
    """Memory storage that counts the lists it serves."""

    def __init__(self) -> None:
        super().__init__()
        self.lists = 0

    async def list(
        self, prefix: str, *, limit: int = 0, start_key: str | None = None, revision: int = 0
    ) -> ListResult:
        self.lists += 1
        return await super().list(prefix, limit=limit, start_key=start_key, revision=revision)


def test_a_relist_rebuilds_the_sorted_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cacher, "RELIST_DELAY_SECONDS", 0.01)

    async def body() -> None:
        storage = CountingStorage()
        for key in KEYS[:6]:
            await storage.create(key, b"1")
        cache = WatchCache(storage, PREFIX)
        await cache.start()
        await asyncio.sleep(0.01)  # the follower is live
        assert cache._local is not None
        cache._local.fail(
            StorageError("the watch broke")
        )  # as a broken etcd watch: the cache relists
        for key in KEYS[:3]:  # changes the cache's watch misses, folded into the relist
            await storage.delete(key)
        for key in KEYS[6:]:
            await storage.create(key, b"2")
        await asyncio.wait_for(settle(cache, storage), timeout=2)
        assert storage.lists >= 2
        await assert_lists_match(cache, storage)
        await cache.stop()
        await storage.close()

    run(body)


def test_rendered_lists_follow_changes_and_a_stale_read_is_not_kept() -> None:
    async def body() -> None:
        storage = MemoryStorage()
        for key in KEYS:
            await storage.create(key, b"1")
        cache = WatchCache(storage, PREFIX)
        await cache.start()
        stale = await storage.get(f"{PREFIX}ns1/a")
        assert stale is not None
        await storage.update(stale.key, b"2", stale.mod_revision)
        await settle(cache, storage)
        assert (await cache.rendered(stale, decode))[0]["value"] == 1  # rendered, but not kept
        for consistent in (False, True):
            snapshot = await cache.list_rendered(f"{PREFIX}ns1/", decode, consistent=consistent)
            assert snapshot is not MISS
            entries, revision = snapshot
            items, _ = cache.list(f"{PREFIX}ns1/")
            assert revision == await storage.current_revision()
            assert [entry[0] for entry in entries] == [kv.mod_revision for kv in items]
            assert [entry[1] for entry in entries] == [decode(kv) for kv in items]
            assert [entry[2] for entry in entries] == [orjson.dumps(decode(kv)) for kv in items]
            assert entries[1][1]["value"] == 2  # ns1/a, after ns1/
        current = cache.objects[stale.key]
        assert (await cache.rendered(current, decode))[0]["value"] == 2
        await cache.stop()
        await storage.close()

    run(body)


def test_large_unrendered_values_are_rendered_off_the_loop_at_the_listed_revision() -> None:
    """registry.offload: a list whose unrendered values are large is rendered on the worker thread; it
    holds exactly what a rendering on the loop would, at the revision the list was taken, and the memo
    keeps the values still current, so the next list is a plain lookup."""

    async def body() -> None:
        storage = MemoryStorage()
        big = orjson.dumps({"value": "x" * 20_000})
        for key in KEYS:
            await storage.create(key, big)
        cache = WatchCache(storage, PREFIX)
        await cache.start()
        await settle(cache, storage)
        threads: list[str] = []
        real_render = cacher._render

        def spying_render(kv: KeyValue, decode_kv: Callable[[KeyValue], Any]) -> Any:
            threads.append(threading.current_thread().name)
            return real_render(kv, decode_kv)

        cacher._render = spying_render  # type: ignore[assignment]
        try:
            snapshot = await cache.list_rendered(PREFIX, decode, consistent=False)
        finally:
            cacher._render = real_render  # type: ignore[assignment]
        assert snapshot is not MISS
        entries, revision = snapshot
        items, _ = cache.list(PREFIX)
        assert revision == await storage.current_revision()
        assert [entry[2] for entry in entries] == [orjson.dumps(decode(kv)) for kv in items]
        assert threads and all(name.startswith("apiforge-heavy") for name in threads)
        again = await cache.list_rendered(PREFIX, decode, consistent=False)
        assert again is not MISS
        assert all(a is b for a, b in zip(again[0], entries, strict=True))  # kept in the memo
        await cache.stop()
        await storage.close()

    run(body)
