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
from collections import deque
from collections.abc import Awaitable, Callable, Iterable

from apiserver.storage.interface import StorageError, StorageEvent

DEFAULT_WATCH_CAPACITY = 10_000
"""Events a watcher may queue before it is ended: about a second of a busy cluster's writes."""

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

    Implements the ``Watch`` protocol. It is an iterator class rather than an async generator so
    that abandoning it half-way leaves nothing for the garbage collector to finalize.
    """

    def __init__(
        self,
        prefix: str,
        after_revision: int,
        replay: Replay,
        capacity: int,
        unsubscribe: Callable[[WatchStream], None],
    ) -> None:
        self._prefix = prefix
        self._last = after_revision
        self._replay = replay
        self._capacity = capacity
        self._unsubscribe = unsubscribe
        self._replaying = True
        self._page: deque[StorageEvent] = deque()
        self._pending: deque[StorageEvent] = deque()
        self._wakeup = asyncio.Event()
        self._ended = False
        self._error: StorageError | None = None

    def publish(self, events: Iterable[StorageEvent]) -> None:
        """Queue the committed events under this watch's prefix; runs on the loop, never waits."""
        if self._ended:
            return
        self._pending.extend(
            e for e in events if e.revision > self._last and e.kv.key.startswith(self._prefix)
        )
        if len(self._pending) > self._capacity:
            self._finish(WatchOverflowError(self._prefix, self._capacity, self._last))
        self._wakeup.set()

    @property
    def backlog(self) -> int:
        """Events published to this stream that its consumer has not taken yet (0: it has seen every write
        acknowledged so far, because the backends publish before they acknowledge)."""
        return len(self._pending) + len(self._page) + (1 if self._replaying else 0)

    def end(self) -> None:
        """End the stream normally (the storage is closing); the consumer's loop finishes."""
        self._finish(None)

    async def close(self) -> None:
        self._finish(None)

    def __aiter__(self) -> WatchStream:
        return self

    async def __anext__(self) -> StorageEvent:
        while True:
            if self._error is not None:
                raise self._error
            if self._ended:
                raise StopAsyncIteration
            event = await self._next_replayed() if self._replaying else await self._next_live()
            if self._ended:  # closed while this call waited
                continue
            if event is not None and event.revision > self._last:
                self._last = event.revision
                self._drop_seen()
                return event

    async def _next_replayed(self) -> StorageEvent | None:
        if not self._page:
            try:
                page = await self._replay(self._last)
            except StorageError as err:
                self._finish(err)
                raise
            if not page:
                self._replaying = False
                return None
            self._page.extend(page)
        return self._page.popleft()

    async def _next_live(self) -> StorageEvent | None:
        if not self._pending:
            self._wakeup.clear()
            await self._wakeup.wait()
            return None
        return self._pending.popleft()

    def _drop_seen(self) -> None:
        """Drop queued live events the replay already yielded; they must not count as backlog."""
        while self._pending and self._pending[0].revision <= self._last:
            self._pending.popleft()

    def _finish(self, error: StorageError | None) -> None:
        if self._ended:
            return
        self._ended = True
        self._error = error
        self._pending.clear()
        self._page.clear()
        self._unsubscribe(self)
        self._wakeup.set()


class WatchHub:
    """The set of live watchers of one store; the store publishes each committed batch here once."""

    def __init__(self, capacity: int = DEFAULT_WATCH_CAPACITY) -> None:
        self._capacity = capacity
        self._streams: set[WatchStream] = set()

    def subscribe(self, prefix: str, after_revision: int, replay: Replay) -> WatchStream:
        stream = WatchStream(prefix, after_revision, replay, self._capacity, self._streams.discard)
        self._streams.add(stream)
        return stream

    def publish(self, events: list[StorageEvent]) -> None:
        for stream in list(self._streams):
            stream.publish(events)

    def end_all(self) -> None:
        for stream in list(self._streams):
            stream.end()
