"""In-process watch fan-out shared by the embedded backends: history replay, then live events.

A watch subscribes *before* it reads history, so an event committed while the replay runs is in the
replayed history or in the live queue (or both; duplicates are dropped by revision), never in
neither.

Every watcher has its own bounded queue, and publishing never waits for a consumer, so a slow
watcher cannot hold up the writer or the other watchers. A watcher that falls more than ``capacity``
events behind is ended with WatchOverflowError rather than growing without bound: its consumer
re-watches from the last revision it saw, which loses nothing unless that revision has been
compacted meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Iterable

from apiserver.storage.interface import StorageError, StorageEvent, Watch

log = logging.getLogger(__name__)

DEFAULT_WATCH_CAPACITY = 10_000
"""Events a watcher may queue before it is ended: about a second of a busy cluster's writes."""
_PARENTS_REMEMBERED = 4096
"""Key parents (a collection, or a namespace of one) whose watched prefixes a hub remembers."""

Replay = Callable[[int], Awaitable[list[StorageEvent]]]
"""Returns the next page of history under the watch prefix after a revision ([] once caught up).

Raises CompactedError when history after that revision is no longer complete.
"""


class WatchOverflowError(StorageError):
    """The watcher fell ``capacity`` events behind and was ended; re-watch from last_revision."""

    def __init__(self, prefix: str, capacity: int, last_revision: int) -> None:
        super().__init__(
            f"watch on {prefix!r} fell more than {capacity} events behind"
            f" after revision {last_revision}"
        )
        self.prefix = prefix
        self.capacity = capacity
        self.last_revision = last_revision


class WatchStream:
    """One watcher: replays history through ``replay``, then yields the live events published to it.

    Implements the ``Watch`` protocol, and ``batch()`` for a consumer that takes every ready event at once:
    one wake-up per batch instead of one per event is what lets a single process feed a thousand watchers.
    It is an iterator class rather than an async generator so that abandoning it half-way leaves nothing
    for the garbage collector to finalize.
    """

    def __init__(
        self,
        prefix: str,
        after_revision: int,
        replay: Replay,
        capacity: int,
        unsubscribe: Callable[[WatchStream], None],
    ) -> None:
        self.prefix = prefix
        self._last = after_revision
        self._replay = replay
        self._capacity = capacity
        self._unsubscribe = unsubscribe
        self._replaying = True
        self._page: deque[StorageEvent] = deque()  # replayed history not taken yet
        self._pending: deque[StorageEvent] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._poked = False  # a poke with no consumer parked, for its next batch()
        self._ended = False
        self._error: StorageError | None = None
        # Takes live events synchronously while the consumer is parked, saving a task wake-up per event
        # (the HTTP layer writes them straight to an idle connection); returns False to leave them queued.
        self.listener: Callable[[list[StorageEvent]], bool] | None = None

    def publish(self, events: Iterable[StorageEvent]) -> None:
        """Queue the committed events under this watch's prefix; runs on the loop, never waits."""
        if self._ended:
            return
        prefix, last = self.prefix, self._last
        # not event.revision: a property call per watcher and event
        mine = [e for e in events if e.kv.mod_revision > last and e.kv.key.startswith(prefix)]
        if not mine:
            return
        pending = self._pending
        # a parked consumer has taken everything queued: the listener gets these events as they are
        if not pending and self.listener is not None and self._parked() and self._hand_over(mine):
            return
        pending.extend(mine)
        if len(pending) > self._capacity:
            self._finish(WatchOverflowError(prefix, self._capacity, self._last))
        else:
            self._wake()

    def _parked(self) -> bool:
        """The consumer waits in batch() with everything before these events taken."""
        return self._waiter is not None and not self._waiter.done()

    def _hand_over(self, events: list[StorageEvent]) -> bool:
        """Offer the events to the listener; True once it has taken them. A listener that fails only
        loses the shortcut: the events go to the queue for batch()."""
        assert self.listener is not None
        try:
            taken = self.listener(events)
        except Exception:
            log.exception("a watch listener failed; its events go through the queue")
            self.listener = None
            return False
        if taken:
            self._last = events[-1].kv.mod_revision
        return taken

    def poke(self) -> None:
        """Wake the consumer without an event: its current or next ``batch()`` returns, empty if nothing
        is ready (a timer's tick, or the client going away)."""
        self._poked = True
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    @property
    def ready(self) -> bool:
        """Whether the next event can be taken without waiting (the watch cache publishes the events
        ready together in one batch)."""
        return bool(self._page) if self._replaying else bool(self._pending)

    @property
    def backlog(self) -> int:
        """Events published to this stream that its consumer has not taken yet (0: it has seen every write
        acknowledged so far, because the backends publish before they acknowledge)."""
        return len(self._pending) + len(self._page) + (1 if self._replaying else 0)

    def end(self) -> None:
        """End the stream normally (the storage is closing); the consumer's loop finishes once it has
        taken what is queued."""
        self._finish(None, keep_queue=True)

    def fail(self, error: StorageError) -> None:
        """End the stream with ``error``, raised to the consumer once it has taken what is queued."""
        self._finish(error, keep_queue=True)

    async def close(self) -> None:
        self._finish(None)

    def __aiter__(self) -> WatchStream:
        return self

    async def __anext__(self) -> StorageEvent:
        while True:
            events = await self.batch(1)
            if events is None:
                raise StopAsyncIteration
            if events:
                return events[0]

    async def batch(self, limit: int) -> list[StorageEvent] | None:
        """The next events in revision order, as many as are ready (at most ``limit``): the replayed
        history first, then live ones. [] after a poke with nothing ready; None once the stream has ended;
        raises the error that ended it."""
        if self._replaying and not self._ended:
            if not self._page:
                await self._replay_page()
            if self._page:
                return self._take(self._page, limit)
        if not self._pending and not self._ended and not self._poked:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        self._poked = False
        if self._pending:
            return self._take(self._pending, limit)
        if self._error is not None:
            raise self._error
        return None if self._ended else []

    async def _replay_page(self) -> None:
        """Fetch the next page of history after the last revision taken; none left means live."""
        try:
            page = await self._replay(self._last)
        except StorageError as err:
            self._finish(err)
            raise
        if not self._ended:
            self._page.extend(page)
            self._replaying = bool(page)

    def _take(self, source: deque[StorageEvent], limit: int) -> list[StorageEvent]:
        last = self._last
        taken: list[StorageEvent] = []
        while source and len(taken) < limit:
            event = source.popleft()
            if event.revision > last:  # a live event the replay already yielded is dropped here
                taken.append(event)
                last = event.revision
        self._last = last
        self._drop_seen()
        return taken

    def _drop_seen(self) -> None:
        """Drop queued live events the replay already yielded; they must not count as backlog."""
        while self._pending and self._pending[0].revision <= self._last:
            self._pending.popleft()

    def _finish(self, error: StorageError | None, *, keep_queue: bool = False) -> None:
        """End the stream; what is queued is dropped unless ``keep_queue`` (an overflow, or a consumer
        that has gone, must not keep it), and always while history is left to replay: live events after
        a gap would make the consumer resume past changes it never saw."""
        if self._ended:
            return
        self._ended = True
        self._error = error
        if not keep_queue or self._replaying:
            self._pending.clear()
        self._page.clear()
        self._unsubscribe(self)
        self._wake()


class WatchHub:
    """The set of live watchers of one store; the store publishes each committed batch here once.

    Watchers are indexed by prefix. A key's watchers are those of the prefixes it starts with: a prefix
    ending in "/" (every resource's, namespace's and watch cache's) can only be one up to the key's last
    "/", so they are looked up once per such parent and remembered until the prefixes change; any other
    prefix is looked up by the key's leading characters at each of their lengths. A write then costs a
    dictionary lookup or two, not a call per watcher (every resource's watch cache watches its own prefix
    of one shared storage)."""

    def __init__(self, capacity: int = DEFAULT_WATCH_CAPACITY) -> None:
        self._capacity = capacity
        self._by_prefix: dict[str, set[WatchStream]] = {}
        self._other_lengths: tuple[int, ...] = ()  # of the prefixes not ending in "/"
        self._by_parent: dict[
            str, tuple[str, ...]
        ] = {}  # key's parent -> the "/" prefixes it starts with

    def subscribe(self, prefix: str, after_revision: int, replay: Replay) -> WatchStream:
        stream = WatchStream(prefix, after_revision, replay, self._capacity, self._unsubscribe)
        streams = self._by_prefix.get(prefix)
        if streams is None:
            streams = self._by_prefix[prefix] = set()
            self._prefixes_changed()
        streams.add(stream)
        return stream

    def _unsubscribe(self, stream: WatchStream) -> None:
        prefix = stream.prefix
        streams = self._by_prefix.get(prefix)
        if streams is None:
            return
        streams.discard(stream)
        if not streams:
            del self._by_prefix[prefix]
            self._prefixes_changed()

    def _prefixes_changed(self) -> None:
        self._by_parent.clear()
        self._other_lengths = tuple(
            sorted({len(p) for p in self._by_prefix if not p.endswith("/")})
        )

    def _prefixes_of(self, key: str) -> tuple[str, ...]:
        """The prefixes with watchers that ``key`` starts with."""
        cut = key.rfind("/") + 1
        parent = key[:cut]
        by_prefix = self._by_prefix
        found = self._by_parent.get(parent)
        if found is None:
            found = tuple(
                parent[: i + 1]
                for i in range(cut)
                if parent[i] == "/" and parent[: i + 1] in by_prefix
            )
            if len(self._by_parent) >= _PARENTS_REMEMBERED:
                self._by_parent.clear()
            self._by_parent[parent] = found
        if self._other_lengths:
            found += tuple(
                key[:length]
                for length in self._other_lengths
                if length <= len(key) and key[:length] in by_prefix
            )
        return found

    def publish(self, events: list[StorageEvent]) -> None:
        if len(events) == 1:  # a write: its key's parent is most likely remembered
            key = events[0].kv.key
            found = self._by_parent.get(key[: key.rfind("/") + 1])
            prefixes: Iterable[str] = (
                found if found is not None and not self._other_lengths else self._prefixes_of(key)
            )
        else:
            prefixes = dict.fromkeys(p for event in events for p in self._prefixes_of(event.kv.key))
        by_prefix = self._by_prefix
        for prefix in prefixes:
            streams = by_prefix.get(prefix)  # gone when an earlier one's overflow emptied it
            if streams is not None:
                for stream in list(streams):  # a stream that overflows unsubscribes itself
                    stream.publish(events)

    def end_all(self) -> None:
        for streams in list(self._by_prefix.values()):
            for stream in list(streams):
                stream.end()


class PumpedStream(WatchStream):
    """A WatchStream fed by a task that reads another ``Watch`` (etcd's): one consumer interface for every
    watch, so the HTTP layer batches and pokes the same way whatever serves the events."""

    def __init__(self, source: Watch, prefix: str, after_revision: int, capacity: int) -> None:
        super().__init__(prefix, after_revision, no_history, capacity, _keep)
        self._replaying = False  # the source's events are all there is
        self._source = source
        self._pump = asyncio.create_task(self._run())

    async def _run(self) -> None:
        try:
            async for event in self._source:
                self.publish((event,))
        except StorageError as error:
            self.fail(error)
        except Exception as error:  # a bug in the source: its consumer re-watches rather than hangs
            log.exception("a pumped watch failed")
            self.fail(StorageError(f"the watch failed: {error}"))
        finally:
            self.end()  # a no-op once failed

    async def close(self) -> None:
        await super().close()
        self._pump.cancel()
        try:
            await asyncio.wait(
                [self._pump]
            )  # unlike awaiting it, a cancel of the caller still raises
        finally:
            await self._source.close()


async def no_history(after_revision: int) -> list[StorageEvent]:
    """The Replay of a stream whose every event arrives live."""
    return []


def _keep(stream: WatchStream) -> None:
    """A pumped stream belongs to no hub: nothing to unsubscribe from."""
