"""Conformance checks of watches (replay then live, previous values, prefixes, the joint between replay and
live writes, closing) and of compaction."""

from __future__ import annotations

import asyncio

from apiserver.storage.interface import (
    CompactedError,
    EventType,
    KeyValue,
)
from apiserver.storage.testing.support import (
    PREFIX,
    TIMEOUT,
    Check,
    Events,
    OpenStore,
    key,
    keys_of,
    raises,
    summary,
)


async def watch_replays_history_then_streams_live_changes(open_store: OpenStore) -> None:
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


async def watch_without_prev_keeps_every_event_and_its_new_value(
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


async def watch_from_zero_replays_everything_and_close_ends_it(open_store: OpenStore) -> None:
    async with open_store() as s:
        await s.create(key("a"), b"")
        await s.create(key("b"), b"")
        watch = Events(s.watch(PREFIX, after_revision=0))
        assert [e.revision for e in await watch.take(2)] == [1, 2]
        await watch.close()
        assert await watch.rest() == []


async def watch_sees_only_its_prefix(open_store: OpenStore) -> None:
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


async def watch_started_during_writes_has_no_gap_and_no_duplicate(
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


async def an_idle_watcher_does_not_hold_up_writes_or_other_watchers(
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


async def closing_the_store_ends_pending_watches(open_store: OpenStore) -> None:
    async with open_store() as s:
        watch = Events(s.watch(PREFIX, after_revision=0))
        consumer = asyncio.create_task(watch.rest())
        await asyncio.sleep(0.01)
    assert await asyncio.wait_for(consumer, TIMEOUT) == []


async def compaction_makes_older_revisions_unavailable(open_store: OpenStore) -> None:
    async with open_store() as s:
        await s.create(key("a"), b"a1")  # 1
        await s.update(key("a"), b"a2", 1)  # 2
        await s.create(key("b"), b"b1")  # 3
        await s.delete(key("b"))  # 4
        await s.create(key("c"), b"c1")  # 5
        await s.update(key("c"), b"c2", 5)  # 6

        await s.compact(5)
        await s.compact(3)  # older than the compacted revision: nothing to do

        with raises(CompactedError) as raised:
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
        with raises(CompactedError):
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


async def compaction_keeps_the_revision_counter(open_store: OpenStore) -> None:
    async with open_store() as s:
        await s.create(key("a"), b"")
        await s.delete(key("a"))
        await s.compact(2)
        assert (await s.list(PREFIX, revision=2)).items == []
        assert await s.current_revision() == 2
        assert (await s.create(key("a"), b"")).mod_revision == 3


WATCHES: dict[str, Check] = {
    "watch_replays_history_then_streams_live_changes": watch_replays_history_then_streams_live_changes,
    "watch_without_prev_keeps_every_event_and_its_new_value": watch_without_prev_keeps_every_event_and_its_new_value,
    "watch_from_zero_replays_everything_and_close_ends_it": watch_from_zero_replays_everything_and_close_ends_it,
    "watch_sees_only_its_prefix": watch_sees_only_its_prefix,
    "watch_started_during_writes_has_no_gap_and_no_duplicate": watch_started_during_writes_has_no_gap_and_no_duplicate,
    "an_idle_watcher_does_not_hold_up_writes_or_other_watchers": an_idle_watcher_does_not_hold_up_writes_or_other_watchers,
    "closing_the_store_ends_pending_watches": closing_the_store_ends_pending_watches,
    "compaction_makes_older_revisions_unavailable": compaction_makes_older_revisions_unavailable,
    "compaction_keeps_the_revision_counter": compaction_keeps_the_revision_counter,
}
