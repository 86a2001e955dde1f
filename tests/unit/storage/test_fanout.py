"""The watch fan-out (``apiserver.storage.fanout``) and the store's watch on top of it.

A WatchStream replays history and then follows live events without ever duplicating or losing one;
while its consumer sleeps in ``batch()`` a listener may take live events synchronously (the HTTP
layer writes them straight to an idle connection). A PumpedStream gives any other ``Watch`` (etcd's)
the same consumer interface, and a StoreWatch turns storage events into the API watch events a
watcher's selector lets through. ``async def`` tests run in ``asyncio.run`` (see conftest); every
wait is bounded so that a missing wake-up fails the test instead of hanging it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from apiserver.machinery.errors import APIError
from apiserver.registry.store import Object, Store, StoreWatch, WatchEvent
from apiserver.storage import (
    CompactedError,
    EventType,
    KeyValue,
    MemoryStorage,
    StorageError,
    StorageEvent,
    WatchOverflowError,
)
from apiserver.storage.fanout import PumpedStream, WatchHub, WatchStream
from tests.widgets import WIDGETS

PREFIX = "/registry/widgets/"
TIMEOUT = 5.0
QUIET = 0.05  # how long a consumer that must stay asleep is watched


def put(name: str, revision: int, prefix: str = PREFIX) -> StorageEvent:
    """A creation of ``name`` at ``revision``; its revision is all the fan-out orders by."""
    return StorageEvent(EventType.PUT, KeyValue(f"{prefix}{name}", b"{}", revision, revision), None)


def revisions(events: list[StorageEvent] | None) -> list[int]:
    assert events is not None
    return [event.revision for event in events]


class History:
    """A replay function over a fixed history, served in pages of ``page_size``.

    ``during_replay`` runs inside each replay call: a write committed while the replay reads history
    (published live to the stream, and possibly also in the page being read).
    """

    def __init__(self, events: list[StorageEvent], page_size: int = 100) -> None:
        self.events = events
        self.page_size = page_size
        self.calls: list[int] = []
        self.during_replay: Callable[[], None] | None = None

    async def __call__(self, after_revision: int) -> list[StorageEvent]:
        self.calls.append(after_revision)
        if self.during_replay is not None:
            self.during_replay()
        later = [event for event in self.events if event.revision > after_revision]
        return later[: self.page_size]


def subscribe(
    history: History | None = None, after_revision: int = 0, capacity: int = 100
) -> tuple[WatchHub, WatchStream]:
    hub = WatchHub(capacity)
    return hub, hub.subscribe(PREFIX, after_revision, history or History([]))


async def until_parked(stream: WatchStream) -> None:
    """Wait until the consumer sleeps in ``batch()``: the only state in which the listener is used."""
    for _ in range(100):
        if stream._parked():
            return
        await asyncio.sleep(0)
    raise AssertionError("the consumer never parked in batch()")


async def parked_batch(stream: WatchStream, limit: int = 100) -> asyncio.Task[Any]:
    """A consumer task sleeping in ``batch(limit)``, the replay (if any) already done."""
    task = asyncio.create_task(stream.batch(limit))
    await until_parked(stream)
    return task


async def stays_asleep(task: asyncio.Task[Any]) -> bool:
    """Whether ``task`` is still waiting after the loop has had time to run it."""
    await asyncio.sleep(QUIET)
    return not task.done()


async def go_live(stream: WatchStream) -> None:
    """Finish the (empty) replay: the stream then only holds live events."""
    task = await parked_batch(stream)
    stream.poke()
    assert await asyncio.wait_for(task, TIMEOUT) == []


# ------------------------------------------------------------------------- WatchHub.publish


async def test_the_hub_gives_each_watcher_the_events_under_its_prefix_and_only_those() -> None:
    """Watchers are found by the key's leading characters: nested, disjoint, shared and empty prefixes,
    a prefix that is not cut at a slash, and a batch whose keys reach different watchers."""
    hub = WatchHub(100)
    prefixes = [
        "",
        "/registry/",
        PREFIX,
        PREFIX,
        "/registry/widgets/ns-a/",
        "/registry/w",
        "/other/",
    ]
    streams = [hub.subscribe(prefix, 0, History([])) for prefix in prefixes]
    for stream in streams:
        await go_live(stream)
    events = [
        put("ns-a/one", 1),
        put("ns-b/two", 2),
        put("x", 3, prefix="/registry/gadgets/"),
        put("y", 4, prefix="/elsewhere/"),
    ]
    hub.publish(events)
    expected = [[1, 2, 3, 4], [1, 2, 3], [1, 2], [1, 2], [1], [1, 2], []]
    for stream, wanted in zip(streams, expected, strict=True):
        assert stream.backlog == len(wanted)
        if wanted:
            assert revisions(await asyncio.wait_for(stream.batch(100), TIMEOUT)) == wanted


async def test_watchers_that_come_and_go_after_a_key_was_published_are_found_for_its_next_write() -> (
    None
):
    """The hub remembers which prefixes a key's parent starts with; a prefix that appears or goes away
    since changes that for the next write, one at a time or in a batch."""
    hub = WatchHub(100)
    collection = hub.subscribe(PREFIX, 0, History([]))
    await go_live(collection)
    hub.publish([put("ns-a/one", 1)])
    namespace = hub.subscribe("/registry/widgets/ns-a/", 1, History([]))
    cut = hub.subscribe("/registry/widgets/ns-a/tw", 1, History([]))  # not cut at a slash
    for stream in (namespace, cut):
        await go_live(stream)
    hub.publish([put("ns-a/two", 2)])
    await collection.close()
    hub.publish([put("ns-a/three", 3), put("ns-a/twelve", 4)])
    assert revisions(await asyncio.wait_for(namespace.batch(100), TIMEOUT)) == [2, 3, 4]
    assert revisions(await asyncio.wait_for(cut.batch(100), TIMEOUT)) == [2, 4]
    assert collection.backlog == 0


async def test_an_ended_watcher_leaves_the_hub_and_its_prefix_still_serves_the_others() -> None:
    hub = WatchHub(100)
    first, second = hub.subscribe(PREFIX, 0, History([])), hub.subscribe(PREFIX, 0, History([]))
    alone = hub.subscribe("/registry/gadgets/", 0, History([]))
    for stream in (first, second, alone):
        await go_live(stream)
    await first.close()
    await alone.close()
    hub.publish([put("a", 1), put("b", 2, prefix="/registry/gadgets/")])
    assert first.backlog == 0 and alone.backlog == 0
    assert revisions(await asyncio.wait_for(second.batch(100), TIMEOUT)) == [1]


# ------------------------------------------------------------------------- WatchStream.batch


async def test_replayed_history_comes_first_in_pages_that_honour_the_limit() -> None:
    history = History([put(str(r), r) for r in range(1, 8)], page_size=3)
    hub, stream = subscribe(history)
    hub.publish([put("8", 8), put("9", 9)])  # live events, queued while nothing is taken yet
    batches = [await asyncio.wait_for(stream.batch(2), TIMEOUT) for _ in range(6)]
    assert [revisions(batch) for batch in batches] == [[1, 2], [3], [4, 5], [6], [7], [8, 9]]
    assert history.calls == [0, 3, 6, 7]  # each page starts after the last revision taken


async def test_live_events_published_during_replay_are_neither_duplicated_nor_lost() -> None:
    history = History([put(str(r), r) for r in range(1, 4)])
    hub, stream = subscribe(history)
    # revisions 2 and 3 commit while the first page is read: they are in the page and also published;
    # revision 4 commits right after, so only the live queue has it
    history.during_replay = lambda: hub.publish([put("2", 2), put("3", 3), put("4", 4)])
    taken: list[int] = []
    while len(taken) < 4:
        taken += revisions(await asyncio.wait_for(stream.batch(100), TIMEOUT))
    assert taken == [1, 2, 3, 4]
    assert stream.backlog == 0
    history.during_replay = None
    task = await parked_batch(stream)  # nothing else is ready: a duplicate would show up here
    hub.publish([put("5", 5)])
    assert revisions(await asyncio.wait_for(task, TIMEOUT)) == [5]


async def test_events_outside_the_prefix_are_ignored() -> None:
    hub, stream = subscribe()
    await go_live(stream)
    hub.publish([put("a", 1, "/registry/gadgets/"), put("b", 2, "/registry/widgetsx/")])
    assert stream.backlog == 0
    hub.publish([put("c", 3)])
    assert revisions(await asyncio.wait_for(stream.batch(100), TIMEOUT)) == [3]


async def test_events_at_or_before_the_start_revision_are_ignored() -> None:
    hub, stream = subscribe(after_revision=5)
    await go_live(stream)
    hub.publish([put("a", 4), put("b", 5), put("c", 6)])
    assert revisions(await asyncio.wait_for(stream.batch(100), TIMEOUT)) == [6]


async def test_batch_returns_an_empty_list_after_a_poke_with_nothing_ready() -> None:
    hub, stream = subscribe()
    task = await parked_batch(stream)
    stream.poke()
    assert await asyncio.wait_for(task, TIMEOUT) == []
    hub.publish([put("a", 1)])  # the stream still works after a poke
    assert revisions(await asyncio.wait_for(stream.batch(100), TIMEOUT)) == [1]


@pytest.mark.parametrize("ending", ["end", "close"])
async def test_batch_returns_none_once_the_stream_has_ended(ending: str) -> None:
    hub, stream = subscribe()
    task = await parked_batch(stream)
    if ending == "end":
        stream.end()
    else:
        await stream.close()
    assert await asyncio.wait_for(task, TIMEOUT) is None
    hub.publish([put("a", 1)])  # an ended stream takes nothing more
    assert await asyncio.wait_for(stream.batch(100), TIMEOUT) is None
    assert stream.backlog == 0


async def test_an_ended_stream_is_none_even_before_its_replay_ran() -> None:
    _, stream = subscribe(History([put("a", 1)]))
    stream.end()
    assert await asyncio.wait_for(stream.batch(100), TIMEOUT) is None


async def test_an_end_while_history_is_left_drops_the_live_events_after_the_gap() -> None:
    """The consumer must not see 11 and 12 without 8..10: it would resume after 12 and miss them."""
    hub, stream = subscribe(History([put("a", revision) for revision in range(6, 11)]), 5)
    assert revisions(await asyncio.wait_for(stream.batch(2), TIMEOUT)) == [6, 7]
    hub.publish([put("a", 11), put("a", 12)])
    hub.end_all()
    assert await asyncio.wait_for(stream.batch(100), TIMEOUT) is None


async def test_an_end_once_live_still_delivers_what_was_queued() -> None:
    hub, stream = subscribe()
    await go_live(stream)
    hub.publish([put("a", 1), put("a", 2)])
    hub.end_all()
    assert revisions(await asyncio.wait_for(stream.batch(100), TIMEOUT)) == [1, 2]
    assert await asyncio.wait_for(stream.batch(100), TIMEOUT) is None


async def test_batch_raises_the_error_given_to_fail() -> None:
    _, stream = subscribe()
    task = await parked_batch(stream)
    error = StorageError("the source broke")
    stream.fail(error)
    with pytest.raises(StorageError) as raised:
        await asyncio.wait_for(task, TIMEOUT)
    assert raised.value is error
    with pytest.raises(StorageError):  # and again on every later call
        await asyncio.wait_for(stream.batch(100), TIMEOUT)


async def test_a_replay_that_fails_ends_the_stream_with_its_error() -> None:
    async def compacted(after_revision: int) -> list[StorageEvent]:
        raise CompactedError(after_revision, 7)

    hub = WatchHub()
    stream = hub.subscribe(PREFIX, 3, compacted)
    with pytest.raises(CompactedError):
        await asyncio.wait_for(stream.batch(100), TIMEOUT)
    hub.publish([put("a", 8)])
    with pytest.raises(CompactedError):
        await asyncio.wait_for(stream.batch(100), TIMEOUT)


async def test_exactly_capacity_queued_events_are_kept() -> None:
    hub, stream = subscribe(capacity=3)
    hub.publish([put(str(r), r) for r in range(1, 4)])
    assert revisions(await asyncio.wait_for(stream.batch(100), TIMEOUT)) == [1, 2, 3]


async def test_more_than_capacity_queued_events_end_the_stream_with_overflow() -> None:
    hub, stream = subscribe(capacity=3)
    hub.publish([put("1", 1), put("2", 2)])
    assert revisions(await asyncio.wait_for(stream.batch(100), TIMEOUT)) == [1, 2]
    for revision in range(3, 7):  # four events waiting: one more than the capacity
        hub.publish([put(str(revision), revision)])
    with pytest.raises(WatchOverflowError) as raised:
        await asyncio.wait_for(stream.batch(100), TIMEOUT)
    assert raised.value.last_revision == 2  # where the consumer re-watches from
    assert raised.value.capacity == 3
    assert stream.backlog == 0  # the queue is released, not kept for a consumer that will not come


async def test_an_overflow_wakes_a_parked_consumer() -> None:
    hub, stream = subscribe(capacity=2)
    task = await parked_batch(stream)
    hub.publish([put(str(r), r) for r in range(1, 4)])
    with pytest.raises(WatchOverflowError):
        await asyncio.wait_for(task, TIMEOUT)


async def test_backlog_counts_what_the_consumer_has_not_taken() -> None:
    history = History([put("1", 1)])
    hub, stream = subscribe(history)
    assert stream.backlog == 1  # the replay has not run: the consumer may be behind
    assert revisions(await asyncio.wait_for(stream.batch(100), TIMEOUT)) == [1]
    await go_live(stream)
    assert stream.backlog == 0
    hub.publish([put(str(r), r) for r in range(2, 5)])
    assert stream.backlog == 3
    assert revisions(await asyncio.wait_for(stream.batch(2), TIMEOUT)) == [2, 3]
    assert stream.backlog == 1
    assert revisions(await asyncio.wait_for(stream.batch(2), TIMEOUT)) == [4]
    assert stream.backlog == 0


async def test_iterating_a_stream_yields_every_event_once_in_order() -> None:
    """The ``Watch`` protocol is ``batch(1)`` in a loop: the conformance suite's consumers use it."""
    hub, stream = subscribe(History([put("1", 1), put("2", 2)]))
    hub.publish([put("2", 2), put("3", 3)])
    iterator = aiter(stream)
    taken = [await asyncio.wait_for(anext(iterator), TIMEOUT) for _ in range(3)]
    assert revisions(taken) == [1, 2, 3]
    stream.end()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(anext(iterator), TIMEOUT)


# ------------------------------------------------------------------------------- the listener


class Listener:
    """Records what it is offered; takes it when ``takes`` (the connection is idle), else declines."""

    def __init__(self, takes: bool = True) -> None:
        self.takes = takes
        self.offered: list[list[int]] = []

    def __call__(self, events: list[StorageEvent]) -> bool:
        self.offered.append(revisions(events))
        return self.takes


async def test_a_listener_takes_live_events_synchronously_while_the_consumer_is_parked() -> None:
    hub, stream = subscribe()
    listener = Listener()
    stream.listener = listener
    task = await parked_batch(stream)
    hub.publish([put("1", 1), put("2", 2)])
    assert listener.offered == [[1, 2]]  # during publish itself, no task switch needed
    assert stream.backlog == 0
    hub.publish([put("3", 3)])
    assert listener.offered == [[1, 2], [3]]  # only the new event: taken ones are not offered again
    assert await stays_asleep(task)  # taken events do not wake the consumer
    stream.poke()
    assert await asyncio.wait_for(task, TIMEOUT) == []  # nor does it get them later


async def test_events_a_listener_took_are_not_returned_by_a_later_batch() -> None:
    hub, stream = subscribe()
    listener = Listener()
    stream.listener = listener
    task = await parked_batch(stream)
    hub.publish([put("1", 1)])
    listener.takes = False
    hub.publish([put("2", 2)])
    assert listener.offered == [[1], [2]]
    assert revisions(await asyncio.wait_for(task, TIMEOUT)) == [2]
    assert stream.backlog == 0


async def test_an_overflow_after_a_hand_over_re_watches_from_what_the_listener_took() -> None:
    """The listener's events were sent to the client: re-watching from before them would repeat them."""
    hub, stream = subscribe(capacity=2)
    listener = Listener()
    stream.listener = listener
    task = await parked_batch(stream)
    hub.publish([put("1", 1), put("2", 2)])
    listener.takes = False
    hub.publish([put(str(r), r) for r in range(3, 6)])
    with pytest.raises(WatchOverflowError) as raised:
        await asyncio.wait_for(task, TIMEOUT)
    assert raised.value.last_revision == 2


async def test_a_replayed_event_is_not_offered_to_the_listener_again() -> None:
    """The listener follows the last revision taken, whichever path took it."""
    hub, stream = subscribe(History([put("1", 1)]))
    listener = Listener()
    stream.listener = listener
    assert revisions(await asyncio.wait_for(stream.batch(100), TIMEOUT)) == [1]
    task = await parked_batch(stream)
    hub.publish([put("1", 1), put("2", 2)])  # a late duplicate of the replayed event
    assert listener.offered == [[2]]
    stream.poke()
    assert await asyncio.wait_for(task, TIMEOUT) == []


async def test_events_a_listener_declines_wake_the_consumer() -> None:
    hub, stream = subscribe()
    listener = Listener(takes=False)
    stream.listener = listener
    task = await parked_batch(stream)
    hub.publish([put("1", 1)])
    assert listener.offered == [[1]]
    assert revisions(await asyncio.wait_for(task, TIMEOUT)) == [1]
    assert stream.backlog == 0


async def test_a_listener_that_raises_is_dropped_and_its_events_still_reach_batch(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hub, stream = subscribe()
    calls: list[list[int]] = []

    def broken(events: list[StorageEvent]) -> bool:
        calls.append(revisions(events))
        raise RuntimeError("the connection's send failed")

    stream.listener = broken
    task = await parked_batch(stream)
    with caplog.at_level(logging.ERROR, logger="apiserver.storage.fanout"):
        hub.publish([put("1", 1)])
    assert "listener failed" in caplog.text
    assert stream.listener is None
    assert revisions(await asyncio.wait_for(task, TIMEOUT)) == [1]
    task = await parked_batch(stream)
    hub.publish([put("2", 2)])
    assert calls == [[1]]  # not asked again
    assert revisions(await asyncio.wait_for(task, TIMEOUT)) == [2]


async def test_the_listener_is_not_used_while_events_are_pending() -> None:
    """The consumer is not parked: handing newer events over would overtake the queued ones."""
    hub, stream = subscribe()
    await go_live(stream)
    listener = Listener()
    stream.listener = listener
    hub.publish([put("1", 1)])  # the consumer is busy elsewhere, not in batch()
    hub.publish([put("2", 2)])
    assert listener.offered == []
    assert revisions(await asyncio.wait_for(stream.batch(100), TIMEOUT)) == [1, 2]


async def test_the_listener_is_not_used_once_the_consumer_is_woken() -> None:
    hub, stream = subscribe()
    listener = Listener(takes=False)
    stream.listener = listener
    task = await parked_batch(stream)
    hub.publish([put("1", 1)])  # declined: wakes the consumer, which has not run yet
    listener.takes = True
    hub.publish([put("2", 2)])
    assert listener.offered == [[1]]
    assert revisions(await asyncio.wait_for(task, TIMEOUT)) == [1, 2]


async def test_the_listener_is_not_used_during_replay() -> None:
    history = History([put("1", 1)])
    hub, stream = subscribe(history)
    listener = Listener()
    stream.listener = listener
    history.during_replay = lambda: hub.publish([put("2", 2)])
    taken: list[int] = []
    while len(taken) < 2:
        taken += revisions(await asyncio.wait_for(stream.batch(100), TIMEOUT))
    assert taken == [1, 2]
    assert listener.offered == []


# ------------------------------------------------------------------------------- PumpedStream


class FakeWatch:
    """A generic ``Watch`` fed by the test: events, a StorageError to raise, or None to end."""

    def __init__(self) -> None:
        self.feed: asyncio.Queue[StorageEvent | StorageError | None] = asyncio.Queue()
        self.closed = False
        self.cancelled = False

    def __aiter__(self) -> FakeWatch:
        return self

    async def __anext__(self) -> StorageEvent:
        try:
            item = await self.feed.get()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        if item is None:
            raise StopAsyncIteration
        if isinstance(item, StorageError):
            raise item
        return item

    async def close(self) -> None:
        self.closed = True


async def take_all(stream: WatchStream, count: int) -> list[int]:
    taken: list[int] = []
    while len(taken) < count:
        taken += revisions(await asyncio.wait_for(stream.batch(100), TIMEOUT))
    return taken


async def test_a_pumped_stream_passes_the_source_events_to_batch() -> None:
    source = FakeWatch()
    stream = PumpedStream(source, PREFIX, 0, 100)
    for revision in (1, 2, 3):
        source.feed.put_nowait(put(str(revision), revision))
    assert await take_all(stream, 3) == [1, 2, 3]
    task = await parked_batch(stream)
    source.feed.put_nowait(put("4", 4))
    assert revisions(await asyncio.wait_for(task, TIMEOUT)) == [4]
    await stream.close()


async def test_a_pumped_stream_raises_the_source_storage_error() -> None:
    source = FakeWatch()
    stream = PumpedStream(source, PREFIX, 0, 100)
    source.feed.put_nowait(put("1", 1))
    assert await take_all(stream, 1) == [1]
    task = await parked_batch(stream)
    source.feed.put_nowait(CompactedError(1, 5))
    with pytest.raises(CompactedError):
        await asyncio.wait_for(task, TIMEOUT)
    await stream.close()
    assert source.closed


async def test_a_pumped_stream_ends_with_its_source() -> None:
    source = FakeWatch()
    stream = PumpedStream(source, PREFIX, 0, 100)
    source.feed.put_nowait(put("1", 1))
    assert await take_all(stream, 1) == [1]
    task = await parked_batch(stream)
    source.feed.put_nowait(None)
    assert await asyncio.wait_for(task, TIMEOUT) is None
    await stream.close()
    assert source.closed


async def test_closing_a_pumped_stream_cancels_the_pump_and_closes_the_source() -> None:
    source = FakeWatch()
    stream = PumpedStream(source, PREFIX, 0, 100)
    task = await parked_batch(stream)
    await asyncio.sleep(0)  # the pump waits on the source
    await stream.close()
    assert source.cancelled and source.closed
    assert await asyncio.wait_for(task, TIMEOUT) is None


async def test_events_a_source_yields_before_failing_reach_the_consumer_first() -> None:
    source = FakeWatch()
    stream = PumpedStream(source, PREFIX, 0, 100)
    # etcd's watch yields a whole response's events, then its error, without the consumer running
    for item in (put("1", 1), put("2", 2), CompactedError(2, 5)):
        source.feed.put_nowait(item)
    try:
        assert revisions(await asyncio.wait_for(stream.batch(100), TIMEOUT)) == [1, 2]
        with pytest.raises(CompactedError):
            await asyncio.wait_for(stream.batch(100), TIMEOUT)
    finally:
        await stream.close()


# -------------------------------------------------------------------------------- StoreWatch


def widget(name: str, app: str) -> Object:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "labels": {"app": app}},
    }


def labelled(app: str) -> Callable[[Object], Object]:
    """An update that sets the object's ``app`` label."""

    def update(obj: Object) -> Object:
        obj["metadata"]["labels"] = {"app": app}
        return obj

    return update


def web_only(obj: Object) -> bool:
    return bool(obj["metadata"].get("labels", {}).get("app") == "web")


def summary(events: list[WatchEvent]) -> list[tuple[str, str, str, str, int]]:
    """Type, name, label, resourceVersion and revision of each event: what a watcher sees."""
    return [
        (
            event.type,
            event.object["metadata"]["name"],
            event.object["metadata"].get("labels", {}).get("app", ""),
            event.object["metadata"]["resourceVersion"],
            event.revision,
        )
        for event in events
    ]


async def with_store(body: Callable[[Store, MemoryStorage], Awaitable[None]]) -> None:
    storage = MemoryStorage()
    await storage.start()
    try:
        await body(Store(WIDGETS, storage), storage)
    finally:
        await storage.close()


class Deliveries:
    """A ``deliver`` for StoreWatch.listen that takes everything and records it."""

    def __init__(self) -> None:
        self.batches: list[list[WatchEvent]] = []

    def __call__(self, events: list[WatchEvent]) -> bool:
        self.batches.append(events)
        return True

    @property
    def events(self) -> list[WatchEvent]:
        return [event for batch in self.batches for event in batch]


async def parked_store_batch(changes: StoreWatch) -> asyncio.Task[Any]:
    task = asyncio.create_task(changes.batch(100))
    await until_parked(changes._stream)
    return task


async def test_listen_delivers_added_modified_and_deleted_events() -> None:
    async def body(store: Store, storage: MemoryStorage) -> None:
        changes = store.open_watch(None, await store.current_revision(), None)
        deliveries = Deliveries()
        changes.listen(deliveries)
        task = await parked_store_batch(changes)
        await store.create(None, widget("a", "web"))
        assert len(deliveries.batches) == 1  # written synchronously, as the write publishes
        await store.update(None, "a", labelled("db"))
        await store.delete(None, "a")
        assert summary(deliveries.events) == [
            ("ADDED", "a", "web", "1", 1),
            ("MODIFIED", "a", "db", "2", 2),
            ("DELETED", "a", "db", "3", 3),
        ]
        assert await stays_asleep(task)
        changes.poke()
        assert await asyncio.wait_for(task, TIMEOUT) == []
        await changes.close()

    await with_store(body)


async def test_listen_with_a_selector_sees_objects_enter_and_leave_it() -> None:
    """kube's cacheWatcher: entering the selection is ADDED; leaving it is DELETED carrying the
    previous (matching) content at the event's resourceVersion; changes outside it are not seen."""

    async def body(store: Store, storage: MemoryStorage) -> None:
        changes = store.open_watch(None, await store.current_revision(), web_only)
        deliveries = Deliveries()
        changes.listen(deliveries)
        task = await parked_store_batch(changes)
        await store.create(None, widget("a", "db"))  # 1: hidden
        await store.update(None, "a", labelled("web"))  # 2: enters
        await store.update(None, "a", labelled("web2"))  # 3: leaves
        await store.update(None, "a", labelled("db"))  # 4: hidden to hidden
        await store.delete(None, "a")  # 5: a hidden object's deletion
        await store.create(None, widget("b", "web"))  # 6: created inside
        await store.delete(None, "b")  # 7: deleted inside
        assert summary(deliveries.events) == [
            ("ADDED", "a", "web", "2", 2),
            ("DELETED", "a", "web", "3", 3),
            ("ADDED", "b", "web", "6", 6),
            ("DELETED", "b", "web", "7", 7),
        ]
        assert all(batch for batch in deliveries.batches)  # hidden events are never delivered
        assert changes._stream.backlog == 0  # but they count as taken
        assert await stays_asleep(task)  # and wake no one
        changes.poke()
        assert await asyncio.wait_for(task, TIMEOUT) == []
        await changes.close()

    await with_store(body)


async def test_batch_with_a_selector_returns_only_the_converted_visible_events() -> None:
    """Without a listener the same conversions come from batch(), and hidden events never show."""

    async def body(store: Store, storage: MemoryStorage) -> None:
        await store.create(None, widget("a", "db"))  # 1: hidden
        await store.update(None, "a", labelled("web"))  # 2: enters
        await store.create(None, widget("b", "db"))  # 3: hidden
        await store.update(None, "a", labelled("db"))  # 4: leaves
        changes = store.open_watch(None, 0, web_only)
        seen: list[WatchEvent] = []
        for _ in range(10):  # one event per batch; a batch of hidden ones may come back empty
            events = await asyncio.wait_for(changes.batch(1), TIMEOUT)
            assert events is not None
            seen += events
            if len(seen) == 2:
                break
        assert summary(seen) == [("ADDED", "a", "web", "2", 2), ("DELETED", "a", "web", "4", 4)]
        await changes.close()
        assert await asyncio.wait_for(changes.batch(100), TIMEOUT) is None

    await with_store(body)


async def test_a_compacted_start_revision_is_410_expired() -> None:
    async def body(store: Store, storage: MemoryStorage) -> None:
        for name in ("a", "b", "c"):
            await store.create(None, widget(name, "web"))
        await storage.compact(2)
        changes = store.open_watch(None, 1, None)
        with pytest.raises(APIError) as raised:
            await asyncio.wait_for(changes.batch(100), TIMEOUT)
        assert (raised.value.code, raised.value.reason) == (410, "Expired")
        assert "too old resource version: 1" in raised.value.message
        await changes.close()
        after = store.open_watch(None, 2, None)  # the compaction revision itself is still covered
        events = await asyncio.wait_for(after.batch(100), TIMEOUT)
        assert events is not None and [event.revision for event in events] == [3]
        await after.close()

    await with_store(body)


async def test_the_store_watch_generator_yields_each_change_once() -> None:
    async def body(store: Store, storage: MemoryStorage) -> None:
        await store.create(None, widget("a", "web"))
        watch = store.watch(None, 0, None)
        first = await asyncio.wait_for(anext(watch), TIMEOUT)
        await store.update(None, "a", labelled("db"))
        second = await asyncio.wait_for(anext(watch), TIMEOUT)
        assert summary([first, second]) == [
            ("ADDED", "a", "web", "1", 1),
            ("MODIFIED", "a", "db", "2", 2),
        ]
        await watch.aclose()

    await with_store(body)


# ------------------------------------------------------------------------------ lost wake-ups


async def test_a_poke_is_not_swallowed_by_events_the_selector_hides() -> None:
    async def body(store: Store, storage: MemoryStorage) -> None:
        changes = store.open_watch(None, 0, web_only)
        changes.listen(Deliveries())  # as the HTTP watch does
        task = await parked_store_batch(changes)
        changes.poke()  # the bookmark timer rings...
        await store.create(None, widget("a", "db"))  # ...and a hidden write lands in the same tick
        try:
            assert await asyncio.wait_for(task, 0.5) == []
        finally:
            await changes.close()

    await with_store(body)


async def test_a_poke_during_the_replay_is_not_lost() -> None:
    gate = asyncio.Event()

    async def slow_replay(after_revision: int) -> list[StorageEvent]:
        await gate.wait()  # SQLite reads history on its executor thread
        return []

    stream = WatchHub().subscribe(PREFIX, 0, slow_replay)
    task = asyncio.create_task(stream.batch(100))
    await asyncio.sleep(0)  # in the replay now
    stream.poke()  # the client goes away
    gate.set()
    try:
        assert await asyncio.wait_for(task, 0.5) == []
    finally:
        await stream.close()


def everything(obj: Object) -> bool:
    return True


async def test_decoded_objects_are_kept_only_for_a_second_watcher() -> None:
    """A watcher with a selector decodes each event through the store's memo: shared when two watch, and
    not kept alive for nobody when one does (the garbage collector's informer alone, for most kinds)."""

    async def body(store: Store, storage: MemoryStorage) -> None:
        start = await store.current_revision()
        alone = store.open_watch(None, start, everything)
        await store.create(None, widget("a", "web"))
        (first,) = await asyncio.wait_for(alone.batch(100), TIMEOUT)
        assert first.object["metadata"]["name"] == "a"
        assert store._decoded == {}
        other = store.open_watch(None, first.revision, everything)
        await store.create(None, widget("b", "web"))
        (mine,) = await asyncio.wait_for(alone.batch(100), TIMEOUT)
        (theirs,) = await asyncio.wait_for(other.batch(100), TIMEOUT)
        assert mine.object is theirs.object and mine.object["metadata"]["name"] == "b"
        await other.close()
        await other.close()  # counted once
        assert store._watches == 1
        await store.create(None, widget("c", "web"))
        (last,) = await asyncio.wait_for(alone.batch(100), TIMEOUT)
        assert last.object["metadata"]["name"] == "c"
        assert all(key[0].endswith("/b") for key in store._decoded)
        await alone.close()
        assert store._watches == 0

    await with_store(body)
