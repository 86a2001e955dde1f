"""The storage contract, run against every backend (see ``BACKENDS`` in conftest)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest

from apiserver.storage import (
    CompactedError,
    EventType,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    MemoryStorage,
    RevisionConflictError,
    SQLiteStorage,
    Storage,
    StorageEvent,
    Watch,
    WatchOverflowError,
)

OpenStore = Callable[[], AbstractAsyncContextManager[Storage]]  # the conftest fixture's type

PREFIX = "/registry/widgets/"
TIMEOUT = 5.0


def key(name: str, prefix: str = PREFIX) -> str:
    return f"{prefix}{name}"


class Events:
    """Reads one watch through a single iterator, with timeouts so a missing event fails the test."""

    def __init__(self, watch: Watch) -> None:
        self.watch = watch
        self._iterator = aiter(watch)

    async def take(self, count: int) -> list[StorageEvent]:
        return [await asyncio.wait_for(anext(self._iterator), TIMEOUT) for _ in range(count)]

    async def rest(self) -> list[StorageEvent]:
        """Every event until the watch ends."""
        return [event async for event in self._iterator]

    async def assert_quiet(self) -> None:
        """No further event arrives within a short grace period."""
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(anext(self._iterator), 0.05)

    async def close(self) -> None:
        await self.watch.close()


def summary(events: list[StorageEvent]) -> list[tuple[EventType, str, bytes, int]]:
    return [(e.type, e.kv.key, e.kv.value, e.revision) for e in events]


def keys_of(items: list[KeyValue]) -> list[str]:
    return [kv.key for kv in items]


# ------------------------------------------------------------------------------------------- writes


async def test_revisions_start_at_one_and_increase_by_one_per_write(open_store: OpenStore) -> None:
    async with open_store() as s:
        assert await s.current_revision() == 0
        created = await s.create(key("a"), b"1")
        updated = await s.update(key("a"), b"2", created.mod_revision)
        other = await s.create(key("b"), b"x")
        deleted = await s.delete(key("a"))
        assert [kv.mod_revision for kv in (created, updated, other, deleted)] == [1, 2, 3, 4]
        assert (updated.create_revision, deleted.create_revision) == (1, 1)
        assert await s.current_revision() == 4

        with pytest.raises(KeyExistsError):
            await s.create(key("b"), b"y")
        with pytest.raises(RevisionConflictError):
            await s.update(key("b"), b"y", 1)
        assert await s.current_revision() == 4  # failed writes take no revision
        assert (await s.create(key("c"), b"z")).mod_revision == 5


async def test_create_fails_when_the_key_exists_and_works_again_after_delete(
    open_store: OpenStore,
) -> None:
    async with open_store() as s:
        first = await s.create(key("a"), b"first")
        with pytest.raises(KeyExistsError) as raised:
            await s.create(key("a"), b"second")
        assert raised.value.key == key("a")
        assert await s.get(key("a")) == first
        assert await s.get(key("missing")) is None

        await s.delete(key("a"))
        assert await s.get(key("a")) is None
        again = await s.create(key("a"), b"again")
        assert again == KeyValue(key("a"), b"again", 3, 3)


async def test_concurrent_creates_of_one_key_have_exactly_one_winner(open_store: OpenStore) -> None:
    async with open_store() as s:
        outcomes = await asyncio.gather(
            *(s.create(key("a"), str(i).encode()) for i in range(10)), return_exceptions=True
        )
        winners = [o for o in outcomes if isinstance(o, KeyValue)]
        assert len(winners) == 1
        assert all(isinstance(o, KeyExistsError) for o in outcomes if o not in winners)
        assert await s.get(key("a")) == winners[0]
        assert await s.current_revision() == 1


async def test_writes_in_flight_together_each_get_their_own_outcome(open_store: OpenStore) -> None:
    """Concurrent writes may share one commit; a failed precondition fails only its own write."""
    async with open_store() as s:
        await s.create(key("existing"), b"")
        outcomes = await asyncio.gather(
            s.create(key("x"), b"x"),
            s.update(key("missing"), b"", 1),
            s.create(key("existing"), b""),
            s.create(key("y"), b"y"),
            s.delete(key("missing")),
            return_exceptions=True,
        )
        x, update_missing, create_existing, y, delete_missing = outcomes
        assert isinstance(update_missing, KeyNotFoundError)
        assert isinstance(create_existing, KeyExistsError)
        assert isinstance(delete_missing, KeyNotFoundError)
        assert isinstance(x, KeyValue) and isinstance(y, KeyValue)
        assert {x.mod_revision, y.mod_revision} == {2, 3}
        assert await s.current_revision() == 3


async def test_update_is_compare_and_swap_on_the_mod_revision(open_store: OpenStore) -> None:
    async with open_store() as s:
        with pytest.raises(KeyNotFoundError):
            await s.update(key("a"), b"v", 0)
        created = await s.create(key("a"), b"v1")
        updated = await s.update(key("a"), b"v2", created.mod_revision)
        assert updated == KeyValue(key("a"), b"v2", 1, 2)

        with pytest.raises(RevisionConflictError) as raised:
            await s.update(key("a"), b"stale", created.mod_revision)
        assert (raised.value.key, raised.value.expected) == (key("a"), 1)
        assert raised.value.current == updated
        assert await s.get(key("a")) == updated

        await s.delete(key("a"))
        with pytest.raises(KeyNotFoundError):
            await s.update(key("a"), b"v3", updated.mod_revision)


async def test_update_given_the_create_revision_is_the_same_compare_and_swap(
    open_store: OpenStore,
) -> None:
    """The caller's create_revision spares etcd a read-back; nothing else about the write changes."""
    async with open_store() as s:
        await s.create(key("other"), b"")  # 1: create and mod revisions of "a" differ below
        created = await s.create(key("a"), b"v1")  # 2
        updated = await s.update(
            key("a"), b"v2", created.mod_revision, create_revision=created.create_revision
        )
        assert updated == KeyValue(key("a"), b"v2", 2, 3)
        assert await s.get(key("a")) == updated
        again = await s.update(key("a"), b"v3", 3, create_revision=2)
        assert again == KeyValue(key("a"), b"v3", 2, 4)

        with pytest.raises(RevisionConflictError) as raised:
            await s.update(key("a"), b"stale", created.mod_revision, create_revision=2)
        assert raised.value.current == again
        await s.delete(key("a"))
        with pytest.raises(KeyNotFoundError):
            await s.update(key("a"), b"gone", again.mod_revision, create_revision=2)


async def test_concurrent_read_modify_write_loses_no_update(open_store: OpenStore) -> None:
    async with open_store() as s:
        await s.create(key("counter"), b"0")
        conflicts = 0

        async def increment() -> None:
            nonlocal conflicts
            while True:
                current = await s.get(key("counter"))
                assert current is not None
                await asyncio.sleep(0)  # let the other writers read the same revision
                try:
                    await s.update(
                        key("counter"), b"%d" % (int(current.value) + 1), current.mod_revision
                    )
                    return
                except RevisionConflictError:
                    conflicts += 1

        await asyncio.gather(*(increment() for _ in range(20)))
        final = await s.get(key("counter"))
        assert final is not None
        assert final.value == b"20"
        assert final.mod_revision == 21
        assert conflicts > 0  # the test really raced


async def test_delete_returns_the_last_value_and_honours_the_expected_revision(
    open_store: OpenStore,
) -> None:
    async with open_store() as s:
        with pytest.raises(KeyNotFoundError):
            await s.delete(key("a"))
        created = await s.create(key("a"), b"v1")
        updated = await s.update(key("a"), b"v2", created.mod_revision)

        with pytest.raises(RevisionConflictError) as raised:
            await s.delete(key("a"), expected_revision=created.mod_revision)
        assert raised.value.current == updated
        assert await s.get(key("a")) == updated

        deleted = await s.delete(key("a"), expected_revision=updated.mod_revision)
        assert deleted == KeyValue(key("a"), b"v2", 1, 3)
        assert await s.get(key("a")) is None
        with pytest.raises(KeyNotFoundError):
            await s.delete(key("a"))

        await s.create(key("b"), b"x")
        assert (await s.delete(key("b"))).mod_revision == 5  # no expected revision: unconditional


# -------------------------------------------------------------------------------------------- lists


async def test_list_returns_keys_in_order_and_only_under_the_prefix(open_store: OpenStore) -> None:
    async with open_store() as s:
        for name in [
            "/registry/a/z",
            "/registry/ab/x",
            "/registry/a/b",
            "/registry/a",
            "/registry/b/a",
        ]:
            await s.create(name, name.encode())
        await s.create("/registry/a/gone", b"")
        await s.delete("/registry/a/gone")
        await s.create("/registry/a/m", b"m")

        result = await s.list("/registry/a/")
        assert keys_of(result.items) == ["/registry/a/b", "/registry/a/m", "/registry/a/z"]
        assert result.items[0] == KeyValue("/registry/a/b", b"/registry/a/b", 3, 3)
        assert (result.revision, result.remaining, result.more) == (8, 0, False)

        everything = await s.list("/registry/")
        assert keys_of(everything.items) == [
            "/registry/a",
            "/registry/a/b",
            "/registry/a/m",
            "/registry/a/z",
            "/registry/ab/x",
            "/registry/b/a",
        ]
        assert keys_of((await s.list("")).items) == keys_of(everything.items)
        assert (await s.list("/registry/c/")).items == []


async def test_prefixes_work_for_keys_beyond_ascii(open_store: OpenStore) -> None:
    """A prefix range ends at the next code point; U+D7FF and U+10FFFF have no plain next one."""
    async with open_store() as s:
        names = [
            "/registry/é/a",
            "/registry/\ud7ff/a",
            "/registry/\ue000/a",
            "/registry/\U0010ffff/a",
        ]
        for name in names:
            await s.create(name, b"")
        for name in names:
            for prefix in (name.removesuffix("/a"), name.removesuffix("a")):
                assert keys_of((await s.list(prefix)).items) == [name]
        assert keys_of((await s.list("/registry/")).items) == sorted(names)


async def test_list_starts_at_start_key_inclusive(open_store: OpenStore) -> None:
    async with open_store() as s:
        for name in "abcde":
            await s.create(key(name), name.encode())
        assert keys_of((await s.list(PREFIX, start_key=key("c"))).items) == [
            key("c"),
            key("d"),
            key("e"),
        ]
        assert keys_of((await s.list(PREFIX, start_key=key("bb"))).items) == [
            key("c"),
            key("d"),
            key("e"),
        ]
        assert len((await s.list(PREFIX, start_key="/registry/")).items) == 5  # below the prefix
        assert (await s.list(PREFIX, start_key="/registry/zzz")).items == []  # above the prefix


async def test_pages_stay_consistent_at_one_revision_while_writes_happen(
    open_store: OpenStore,
) -> None:
    async with open_store() as s:
        for i in range(10):
            await s.create(key(f"k{i:02d}"), b"old")

        first = await s.list(PREFIX, limit=4)
        assert keys_of(first.items) == [key(f"k{i:02d}") for i in range(4)]
        assert (first.revision, first.remaining, first.more) == (10, 6, True)

        await s.delete(key("k05"))
        await s.update(key("k06"), b"new", 7)
        await s.create(key("k045"), b"new")
        await s.create(key("k10"), b"new")

        second = await s.list(
            PREFIX, limit=4, start_key=first.items[-1].key + "\x00", revision=first.revision
        )
        assert keys_of(second.items) == [key(f"k{i:02d}") for i in range(4, 8)]
        assert {kv.value for kv in second.items} == {b"old"}
        assert (second.revision, second.remaining) == (10, 2)

        last = await s.list(
            PREFIX, limit=4, start_key=second.items[-1].key + "\x00", revision=first.revision
        )
        assert keys_of(last.items) == [key("k08"), key("k09")]
        assert (last.remaining, last.more) == (0, False)

        exact = await s.list(PREFIX, limit=2, start_key=key("k08"), revision=first.revision)
        assert (len(exact.items), exact.remaining) == (2, 0)

        latest = await s.list(PREFIX, limit=7)
        assert keys_of(latest.items)[4:] == [key("k04"), key("k045"), key("k06")]
        assert latest.items[6].value == b"new"
        assert (latest.revision, latest.remaining) == (14, 4)  # k07, k08, k09, k10; k05 is gone


async def test_list_at_an_old_revision_sees_the_state_of_then(open_store: OpenStore) -> None:
    async with open_store() as s:
        await s.create(key("a"), b"a1")  # 1
        await s.create(key("b"), b"b1")  # 2
        await s.update(key("a"), b"a2", 1)  # 3
        await s.delete(key("b"))  # 4
        await s.create(key("c"), b"c1")  # 5

        def state(items: list[KeyValue]) -> list[tuple[str, bytes, int]]:
            return [(kv.key[len(PREFIX) :], kv.value, kv.mod_revision) for kv in items]

        expected = {
            1: [("a", b"a1", 1)],
            2: [("a", b"a1", 1), ("b", b"b1", 2)],
            3: [("a", b"a2", 3), ("b", b"b1", 2)],
            4: [("a", b"a2", 3)],
            5: [("a", b"a2", 3), ("c", b"c1", 5)],
        }
        for revision, items in expected.items():
            result = await s.list(PREFIX, revision=revision)
            assert (state(result.items), result.revision) == (items, revision)
        assert (await s.list(PREFIX)).revision == 5
        page = await s.list(PREFIX, limit=1, revision=2)
        assert (state(page.items), page.remaining) == ([("a", b"a1", 1)], 1)


async def test_revisions_after_the_current_one_are_future(open_store: OpenStore) -> None:
    async with open_store() as s:
        with pytest.raises(FutureRevisionError):
            await s.list(PREFIX, revision=1)
        await s.create(key("a"), b"")
        with pytest.raises(FutureRevisionError) as raised:
            await s.list(PREFIX, revision=2)
        assert (raised.value.requested, raised.value.current) == (2, 1)
        with pytest.raises(FutureRevisionError):
            await s.compact(2)


# ------------------------------------------------------------------------------------------ watches


async def test_watch_replays_history_then_streams_live_changes(open_store: OpenStore) -> None:
    async with open_store() as s:
        await s.create(key("a"), b"a1")  # 1
        await s.update(key("a"), b"a2", 1)  # 2
        await s.create(key("b"), b"b1")  # 3
        await s.delete(key("a"))  # 4

        watch = Events(s.watch(PREFIX, after_revision=1))
        replayed = await watch.take(3)
        await s.update(key("b"), b"b2", 3)  # 5
        await s.create(key("c"), b"c1")  # 6
        live = await watch.take(2)
        await watch.assert_quiet()
        await watch.close()

    assert summary(replayed + live) == [
        (EventType.PUT, key("a"), b"a2", 2),
        (EventType.PUT, key("b"), b"b1", 3),
        (EventType.DELETE, key("a"), b"a2", 4),
        (EventType.PUT, key("b"), b"b2", 5),
        (EventType.PUT, key("c"), b"c1", 6),
    ]
    update, create, delete = replayed[0], replayed[1], replayed[2]
    assert update.prev == KeyValue(key("a"), b"a1", 1, 1)
    assert create.prev is None
    assert delete.kv == KeyValue(key("a"), b"a2", 1, 4)
    assert delete.prev == KeyValue(key("a"), b"a2", 1, 2)
    assert live[0].prev == KeyValue(key("b"), b"b1", 3, 3)
    assert live[1].prev is None


async def test_watch_without_prev_keeps_every_event_and_its_new_value(
    open_store: OpenStore,
) -> None:
    """``with_prev=False`` may drop the previous values (etcd does, the in-process backends need not),
    never an event, its order, or a PUT's value."""
    async with open_store() as s:
        await s.create(key("a"), b"a1")  # 1
        await s.update(key("a"), b"a2", 1)  # 2
        await s.delete(key("a"))  # 3
        watch = Events(s.watch(PREFIX, after_revision=0, with_prev=False))
        replayed = await watch.take(3)
        await s.create(key("b"), b"b1")  # 4
        live = await watch.take(1)
        await watch.assert_quiet()
        await watch.close()

    events = replayed + live
    assert [(e.type, e.kv.key, e.revision) for e in events] == [
        (EventType.PUT, key("a"), 1),
        (EventType.PUT, key("a"), 2),
        (EventType.DELETE, key("a"), 3),
        (EventType.PUT, key("b"), 4),
    ]
    assert [e.kv for e in events if e.type is EventType.PUT] == [
        KeyValue(key("a"), b"a1", 1, 1),
        KeyValue(key("a"), b"a2", 1, 2),
        KeyValue(key("b"), b"b1", 4, 4),
    ]
    a1, a2 = KeyValue(key("a"), b"a1", 1, 1), KeyValue(key("a"), b"a2", 1, 2)
    for event, prev in zip(events, [None, a1, a2, None], strict=True):  # what is given is right
        assert event.prev in (None, prev)
    deleted = events[2].kv
    assert deleted in (KeyValue(key("a"), b"a2", 1, 3), KeyValue(key("a"), b"", 0, 3))


async def test_watch_from_zero_replays_everything_and_close_ends_it(open_store: OpenStore) -> None:
    async with open_store() as s:
        await s.create(key("a"), b"")
        await s.create(key("b"), b"")
        watch = Events(s.watch(PREFIX, after_revision=0))
        assert [e.revision for e in await watch.take(2)] == [1, 2]
        await watch.close()
        assert await watch.rest() == []


async def test_watch_sees_only_its_prefix(open_store: OpenStore) -> None:
    async with open_store() as s:
        await s.create("/registry/ab/early", b"")
        await s.create("/registry/a/early", b"")
        watch = Events(s.watch("/registry/a/", after_revision=0))
        for name in [
            "/registry/ab/x",
            "/registry/a/x",
            "/registry/a",
            "/registry/b/x",
            "/registry/a/y",
        ]:
            await s.create(name, b"")
        events = await watch.take(3)
        await watch.assert_quiet()
        await watch.close()
    assert [e.kv.key for e in events] == ["/registry/a/early", "/registry/a/x", "/registry/a/y"]


async def test_watch_started_during_writes_has_no_gap_and_no_duplicate(
    open_store: OpenStore,
) -> None:
    """The replay spans several pages and races live writes; the joint must be exact."""
    async with open_store() as s:

        async def write(count: int, batch: int) -> None:
            for start in range(0, count, batch):
                await asyncio.gather(
                    *(s.create(key(f"k{i:05d}"), b"") for i in range(start, start + batch))
                )

        writer = asyncio.create_task(write(3000, 50))
        while await s.current_revision() < 2000:
            await asyncio.sleep(0.001)
        watch = Events(s.watch(PREFIX, after_revision=50))
        events = await watch.take(2950)
        await writer
        await watch.assert_quiet()
        await watch.close()
    assert [e.revision for e in events] == list(range(51, 3001))


async def test_an_idle_watcher_does_not_hold_up_writes_or_other_watchers(
    open_store: OpenStore,
) -> None:
    async with open_store() as s:
        idle = Events(s.watch(PREFIX, after_revision=0))
        busy = Events(s.watch(PREFIX, after_revision=0))
        for i in range(100):
            await s.create(key(f"k{i:03d}"), b"")
        assert [e.revision for e in await busy.take(100)] == list(range(1, 101))
        assert [e.revision for e in await idle.take(100)] == list(range(1, 101))
        await idle.close()
        await busy.close()


async def test_closing_the_store_ends_pending_watches(open_store: OpenStore) -> None:
    async with open_store() as s:
        watch = Events(s.watch(PREFIX, after_revision=0))
        consumer = asyncio.create_task(watch.rest())
        await asyncio.sleep(0.01)
    assert await asyncio.wait_for(consumer, TIMEOUT) == []


# --------------------------------------------------------------------------------------- compaction


async def test_compaction_makes_older_revisions_unavailable(open_store: OpenStore) -> None:
    async with open_store() as s:
        await s.create(key("a"), b"a1")  # 1
        await s.update(key("a"), b"a2", 1)  # 2
        await s.create(key("b"), b"b1")  # 3
        await s.delete(key("b"))  # 4
        await s.create(key("c"), b"c1")  # 5
        await s.update(key("c"), b"c2", 5)  # 6

        await s.compact(5)
        await s.compact(3)  # older than the compacted revision: nothing to do

        with pytest.raises(CompactedError) as raised:
            await s.list(PREFIX, revision=4)
        assert (raised.value.requested, raised.value.compact_revision) == (4, 5)
        at_five = await s.list(PREFIX, revision=5)
        assert [(kv.key, kv.value) for kv in at_five.items] == [
            (key("a"), b"a2"),
            (key("c"), b"c1"),
        ]
        assert keys_of((await s.list(PREFIX)).items) == [key("a"), key("c")]
        assert await s.get(key("a")) == KeyValue(key("a"), b"a2", 1, 2)

        too_old = Events(s.watch(PREFIX, after_revision=4))
        with pytest.raises(CompactedError):
            await too_old.take(1)
        await too_old.close()

        watch = Events(s.watch(PREFIX, after_revision=5))
        (update,) = await watch.take(1)
        assert update.prev == KeyValue(key("c"), b"c1", 5, 5)
        await s.delete(key("a"))
        (delete,) = await watch.take(1)
        assert (delete.type, delete.kv, delete.prev) == (
            EventType.DELETE,
            KeyValue(key("a"), b"a2", 1, 7),
            KeyValue(key("a"), b"a2", 1, 2),
        )
        await watch.close()


async def test_compaction_keeps_the_revision_counter(open_store: OpenStore) -> None:
    async with open_store() as s:
        await s.create(key("a"), b"")
        await s.delete(key("a"))
        await s.compact(2)
        assert (await s.list(PREFIX, revision=2)).items == []
        assert await s.current_revision() == 2
        assert (await s.create(key("a"), b"")).mod_revision == 3


# ---------------------------------------------------------------- embedded backends' fan-out


EMBEDDED: dict[str, Callable[[Path], Storage]] = {
    "memory": lambda _: MemoryStorage(watch_capacity=5),
    "sqlite": lambda data_dir: SQLiteStorage(data_dir / "state.db", watch_capacity=5),
}


@pytest.mark.parametrize("kind", EMBEDDED)
async def test_a_watcher_that_falls_too_far_behind_is_ended(kind: str, tmp_path: Path) -> None:
    storage = EMBEDDED[kind](tmp_path)
    await storage.start()
    try:
        laggard = Events(storage.watch(PREFIX, after_revision=0))
        reader = Events(storage.watch(PREFIX, after_revision=0))
        for i in range(10):
            await storage.create(key(f"k{i}"), b"")
            await reader.take(1)
        with pytest.raises(WatchOverflowError) as raised:
            await laggard.take(1)
        assert raised.value.last_revision == 0
        await laggard.close()
        await reader.close()
    finally:
        await storage.close()
