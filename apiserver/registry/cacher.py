"""The watch cache of one resource (kube's cacher): one storage watch feeds a bounded event history and the
current objects, and fans out to any number of client watches without touching storage.

Watches starting inside the history are served from memory; older ones fall back to a storage watch (the
backend may still have that history, or raises CompactedError: 410 for the client). `resourceVersion=0`
lists ("any version is fine") are served from the cached objects. A slow client watch is ended when it falls
too far behind (WatchHub's bound) without slowing the others; it resumes from its last revision.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from collections import deque
from collections.abc import Callable
from typing import Any

import orjson

from apiserver.storage.fanout import WatchHub, WatchStream
from apiserver.storage.interface import (
    CompactedError,
    EventType,
    KeyValue,
    Storage,
    StorageError,
    StorageEvent,
    Watch,
)

log = logging.getLogger("apiforge")

DEFAULT_HISTORY = 10_000


class Miss(enum.Enum):
    """The cache cannot answer; read storage."""

    MISS = "miss"


MISS = Miss.MISS
RELIST_DELAY_SECONDS = 0.5


class WatchCache:
    def __init__(self, storage: Storage, prefix: str, history_size: int = DEFAULT_HISTORY) -> None:
        self.storage = storage
        self.prefix = prefix
        self.objects: dict[str, KeyValue] = {}
        # per key: (mod_revision, decoded object, its JSON); shared by every list, so read-only
        self._rendered: dict[str, tuple[int, dict[str, Any], bytes]] = {}
        self.revision = 0
        self._history: deque[StorageEvent] = deque(maxlen=history_size)
        self._floor = 0  # every change after this revision is in the history
        self._hub = WatchHub()
        self._task: asyncio.Task[None] | None = None
        self._local: WatchStream | None = None

    async def start(self) -> None:
        await self._relist()
        self._task = asyncio.create_task(self._follow())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._hub.end_all()

    async def _relist(self) -> None:
        page = await self.storage.list(self.prefix)
        self.objects = {kv.key: kv for kv in page.items}
        self._rendered.clear()
        self.revision = self._floor = page.revision
        self._history.clear()

    async def _follow(self) -> None:
        while True:
            try:
                stream = self.storage.watch(self.prefix, self.revision)
                self._local = stream if isinstance(stream, WatchStream) else None
                try:
                    async for event in stream:
                        self._apply(event)
                finally:
                    self._local = None
                    await stream.close()
                return  # the storage closed
            except StorageError as error:
                log.warning("watch cache of %s restarts after: %s", self.prefix, error)
                self._hub.end_all()  # clients re-watch from their last revision
            await self._restart()

    async def _restart(self) -> None:
        """Relist until storage answers (a failed relist must not end the follower for good).

        Watchers that subscribed meanwhile are ended too: the changes they wait for are folded into the
        relisted objects and never published, so they re-watch and the floor check sends them to storage.
        """
        while True:
            await asyncio.sleep(RELIST_DELAY_SECONDS)
            try:
                await self._relist()
            except StorageError as error:
                log.warning("watch cache of %s cannot relist yet: %s", self.prefix, error)
                continue
            self._hub.end_all()
            return

    def rendered(
        self, kv: KeyValue, decode: Callable[[KeyValue], dict[str, Any]]
    ) -> tuple[dict[str, Any], bytes]:
        """The decoded object of a cached key-value and its JSON, computed once per revision of the key: a
        large list then costs a join of cached bytes instead of decoding and encoding every item."""
        entry = self._rendered.get(kv.key)
        if entry is None or entry[0] != kv.mod_revision:
            obj = decode(kv)
            entry = (kv.mod_revision, obj, orjson.dumps(obj))
            self._rendered[kv.key] = entry
        return entry[1], entry[2]

    def _apply(self, event: StorageEvent) -> None:
        self._rendered.pop(event.kv.key, None)
        if event.type is EventType.DELETE:
            self.objects.pop(event.kv.key, None)
        else:
            self.objects[event.kv.key] = event.kv
        if len(self._history) == self._history.maxlen:
            self._floor = self._history[0].revision
        self._history.append(event)
        self.revision = event.revision
        self._hub.publish([event])

    def forget_before(self, revision: int) -> None:
        """Storage compacted at ``revision``: drop the history before it too, so resuming there is 410 on
        every path, and the history's memory follows the compaction window."""
        while self._history and self._history[0].revision <= revision:
            self._floor = self._history.popleft().revision
        self._floor = max(self._floor, min(revision, self.revision))

    async def _caught_up(self) -> bool:
        """Wait until every write acknowledged so far is applied; False when that cannot be known."""
        stream = self._local
        if stream is None:
            return False
        while stream.backlog:
            await asyncio.sleep(0)  # let the follower apply what was published
        return self._local is stream

    async def consistent_list(self, prefix: str) -> tuple[list[KeyValue], int] | Miss:
        return self.list(prefix) if await self._caught_up() else MISS

    async def get(self, key: str) -> KeyValue | Miss | None:
        """The current value of ``key`` as a consistent read, or MISS when the cache cannot vouch for it.

        Only an in-process store publishes every write to the cache's stream before acknowledging it, so
        once that stream has no backlog the cache reflects every acknowledged write (read-your-writes).
        Other backends are read directly.
        """
        return self.objects.get(key) if await self._caught_up() else MISS

    def covers(self, revision: int) -> bool:
        return revision >= self._floor

    def watch(self, prefix: str, after_revision: int) -> Watch:
        if not self.covers(after_revision):
            return self.storage.watch(prefix, after_revision)

        async def replay(after: int) -> list[StorageEvent]:
            if after < self._floor:
                raise CompactedError(after, self._floor)
            return [e for e in self._history if e.revision > after and e.kv.key.startswith(prefix)]

        return self._hub.subscribe(prefix, after_revision, replay)

    def list(self, prefix: str) -> tuple[list[KeyValue], int]:
        """The cached objects under ``prefix`` in key order, and the revision they reflect."""
        keys = sorted(key for key in self.objects if key.startswith(prefix))
        return [self.objects[key] for key in keys], self.revision
