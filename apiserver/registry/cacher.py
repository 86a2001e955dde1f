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
from bisect import bisect_left, insort
from collections import deque
from collections.abc import Callable
from typing import Any

import orjson

from apiserver.registry.offload import is_heavy, run_heavy
from apiserver.storage.fanout import WatchHub, WatchStream, no_history
from apiserver.storage.interface import (
    CompactedError,
    EventType,
    KeyValue,
    Storage,
    StorageError,
    StorageEvent,
    Watch,
)

log = logging.getLogger(__name__)

DEFAULT_HISTORY = 10_000
_LAST_CHAR = chr(0x10FFFF)

Decode = Callable[[KeyValue], dict[str, Any]]
Rendered = tuple[int, dict[str, Any], bytes]
"""A cached key's mod_revision, decoded object and its JSON (shared by every reader, so read-only)."""


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
        # the keys of ``objects``, kept sorted as they change: a LIST is then a bisect slice, not a
        # sort of every key
        self._keys: list[str] = []
        # per key of ``objects``, only ever for its current value (dropped when the key changes)
        self._rendered: dict[str, Rendered] = {}
        self.revision = 0
        self._history: deque[StorageEvent] = deque(maxlen=history_size)
        self._floor = 0  # every change after this revision is in the history
        self._hub = WatchHub()
        self._task: asyncio.Task[None] | None = None
        self._local: WatchStream | None = None
        self._unpublished: list[StorageEvent] = []  # applied by the listener, published soon after
        self._publishing = False

    async def start(self) -> None:
        await self._relist()
        self._task = asyncio.create_task(self._follow())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._hub.end_all()

    def forget_renders(self) -> None:
        """Render every object again when next asked (its resource changed shape)."""
        self._rendered.clear()

    async def _relist(self) -> None:
        page = await self.storage.list(self.prefix)
        self.objects = {kv.key: kv for kv in page.items}
        self._keys = sorted(self.objects)
        self._rendered.clear()
        self.revision = self._floor = page.revision
        self._history.clear()

    async def _follow(self) -> None:
        while True:
            try:
                stream = self.storage.watch(self.prefix, self.revision, with_prev=False)
                self._local = stream if isinstance(stream, WatchStream) else None
                if self._local is not None:
                    self._local.listener = self._taker(self._local)
                ready: list[StorageEvent] = []
                try:
                    async for event in stream:
                        self._publish()  # what the listener applied comes first
                        ready.append(self._apply(event))
                        if not getattr(stream, "ready", False):
                            self._hub.publish(ready)
                            ready = []
                finally:
                    self._publish()
                    if ready:
                        self._hub.publish(ready)
                    self._local = None
                    await stream.close()
                return  # the storage closed
            except StorageError as error:
                log.warning("watch cache of %s restarts after: %s", self.prefix, error)
                self._hub.end_all()  # clients re-watch from their last revision
            await self._restart()

    def _taker(self, stream: WatchStream) -> Callable[[list[StorageEvent]], bool]:
        """The listener of the storage's stream while ``_follow`` is parked: a write's events are applied
        as the write publishes them (no task wake-up per write, and the cache reflects the write before the
        writer goes on), and published to the cache's watchers once the loop comes round, together with
        every other write applied meanwhile (one hand-over per watcher for a burst of writes). An event the
        cache cannot apply ends the stream with the error, as ``_follow`` would end it."""

        def take(events: list[StorageEvent]) -> bool:
            try:
                for event in events:
                    self._unpublished.append(self._apply(event))
            except StorageError as error:
                stream.fail(error)
            if self._unpublished and not self._publishing:
                self._publishing = True
                asyncio.get_running_loop().call_soon(self._publish)
            return True

        return take

    def _publish(self) -> None:
        """Publish what the listener has applied, in order."""
        self._publishing = False
        ready, self._unpublished = self._unpublished, []
        if ready:
            self._hub.publish(ready)

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

    async def rendered(self, kv: KeyValue, decode: Decode) -> tuple[dict[str, Any], bytes]:
        """The decoded object of a cached key-value and its JSON, computed once per revision of the key: a
        large list then costs a join of cached bytes instead of decoding and encoding every item. A large
        value is rendered off the event loop (registry.offload)."""
        entry = self._rendered.get(kv.key)
        if entry is None or entry[0] != kv.mod_revision:
            entry = (
                await run_heavy(_render, kv, decode)
                if is_heavy(len(kv.value))
                else _render(kv, decode)
            )
            current = self.objects.get(kv.key)
            if current is not None and current.mod_revision == kv.mod_revision:
                self._rendered[kv.key] = entry  # only the current value: list_rendered relies on it
        return entry[1], entry[2]

    def unchanged(self, key: str, rendered: bytes) -> Callable[[], bool] | None:
        """A check that ``rendered`` is still the JSON of ``key``'s current value and that the cache still
        reflects every acknowledged write (``get``'s condition, without waiting); None when it is not so now.
        Any change of the key drops its memo entry (``_apply``), as do a relist and a reshape."""
        entry = self._rendered.get(key)
        local = self._local
        if entry is None or entry[2] is not rendered or local is None or local.backlog:
            return None
        memo = self._rendered

        def check() -> bool:
            return memo.get(key) is entry and self._local is local and not local.backlog

        return check

    def _render_current(self, key: str, decode: Decode) -> Rendered:
        """A memo miss of list_rendered: render the key's current value, and keep it for the next."""
        entry = self._rendered[key] = _render(self.objects[key], decode)
        return entry

    def _apply(self, event: StorageEvent) -> StorageEvent:
        """One storage event into the objects, and the event to publish; on the write path, so a key
        that already exists costs no work on the sorted keys. Events the storage watch has ready together
        are published together (``_follow``): each watcher gets them in one write."""
        key = event.kv.key
        self._rendered.pop(key, None)
        current = self.objects.get(key)
        if event.prev is None and current is not None:  # left out: this watch is with_prev=False
            event = _completed(event, current)
        if event.type is EventType.DELETE:
            if current is None:
                raise StorageError(f"the watch of {self.prefix} deleted {key}, which it never had")
            del self.objects[key]
            del self._keys[bisect_left(self._keys, key)]
        else:
            if current is None:
                insort(self._keys, key)
            self.objects[key] = event.kv
        if len(self._history) == self._history.maxlen:
            self._floor = self._history[0].revision
        self._history.append(event)
        self.revision = event.revision
        return event

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

    async def list_rendered(
        self, prefix: str, decode: Decode, *, consistent: bool
    ) -> tuple[list[Rendered], int] | Miss:
        """The rendered objects under ``prefix`` in key order and the revision they reflect; MISS when
        ``consistent`` asks for every acknowledged write and the cache cannot vouch for that.

        The revision is the store's, not only that of the last change under ``prefix``, whenever the
        cache holds every write acknowledged so far: an empty list, or one of a resource nobody wrote for
        a while, is as of now (kube's consistent list answers etcd's current revision), so a watch from it
        does not replay every other resource's history first.
        """
        local = self._local
        known = 0
        if local is not None and (consistent or not local.backlog):
            known = await self.storage.current_revision()  # before the catch-up that covers it
        listed = await self._list_rendered(prefix, decode, consistent=consistent)
        if listed is MISS or known <= listed[1]:
            return listed
        return listed[0], known

    async def _list_rendered(
        self, prefix: str, decode: Decode, *, consistent: bool
    ) -> tuple[list[Rendered], int] | Miss:
        """list_rendered at the cache's own revision. Every memo entry is for its key's current value,
        so a hit is a plain lookup (no revision check) and the whole list is one comprehension."""
        if consistent and not await self._caught_up():
            return MISS
        memo = self._rendered
        keys = self._keys_under(prefix)
        entries = [memo.get(key) for key in keys]
        if (
            None not in entries
        ):  # the usual list: all memoized, one comprehension and a C-speed scan
            return entries, self.revision  # type: ignore[return-value]
        objects = self.objects
        unrendered = sum(len(objects[key].value) for key in keys if key not in memo)
        if is_heavy(unrendered):
            return await self._render_off_loop(keys, decode)
        render = self._render_current
        return [
            entry or render(key, decode) for key, entry in zip(keys, entries, strict=True)
        ], self.revision

    async def _render_off_loop(self, keys: list[str], decode: Decode) -> tuple[list[Rendered], int]:
        """list_rendered when what is not yet rendered is large (registry.offload): the keys' values as
        they are now, rendered on the worker thread; the memo keeps those still current afterwards (events
        may have been applied meanwhile: the list reflects the revision it was taken at)."""
        revision, memo, objects = self.revision, self._rendered, self.objects
        snapshot = [(key, memo.get(key), objects[key]) for key in keys]

        def render_all() -> list[Rendered]:
            return [entry or _render(kv, decode) for _, entry, kv in snapshot]

        entries = await run_heavy(render_all)
        for (key, _, kv), entry in zip(snapshot, entries, strict=True):
            if objects.get(key) is kv:
                memo[key] = entry
        return entries, revision

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

        if after_revision >= self.revision:
            # nothing to replay: every later change reaches the stream live, however long its consumer
            # takes to start reading (it may be writing a large initial list first)
            return self._hub.subscribe(prefix, after_revision, no_history)

        async def replay(after: int) -> list[StorageEvent]:
            if after < self._floor:
                raise CompactedError(after, self._floor)
            return [e for e in self._history if e.revision > after and e.kv.key.startswith(prefix)]

        return self._hub.subscribe(prefix, after_revision, replay)

    def _keys_under(self, prefix: str) -> list[str]:
        """The cached keys that start with ``prefix``, in order: a slice of the sorted keys."""
        keys = self._keys
        start = bisect_left(keys, prefix)
        end = _prefix_end(prefix)
        stop = len(keys) if end is None else bisect_left(keys, end, start)
        return keys[start:stop]

    def list(self, prefix: str) -> tuple[list[KeyValue], int]:
        """The cached objects under ``prefix`` in key order, and the revision they reflect."""
        return list(map(self.objects.__getitem__, self._keys_under(prefix))), self.revision


def _render(kv: KeyValue, decode: Decode) -> Rendered:
    obj = decode(kv)
    return kv.mod_revision, obj, orjson.dumps(_type_meta_first(obj))


def _type_meta_first(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with apiVersion and kind as its first keys (a copy when they are not): a typed list's items,
    which kube writes without them, are then this JSON with a prefix cut, not decoded and encoded again
    for every LIST (endpoints/output.py, ``joined_untyped``). JSON objects are unordered: only bytes move."""
    keys = iter(obj)
    if next(keys, None) == "apiVersion" and next(keys, None) == "kind":
        return obj
    if "apiVersion" not in obj or "kind" not in obj:
        return obj
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], **obj}


def _prefix_end(prefix: str) -> str | None:
    """The least string above every string that starts with ``prefix`` (its last character raised by
    one, past any trailing U+10FFFF), or None when nothing is: the stop of a prefix's range of keys."""
    stem = prefix.rstrip(_LAST_CHAR)
    if not stem:
        return None
    return stem[:-1] + chr(ord(stem[-1]) + 1)


def _completed(event: StorageEvent, current: KeyValue) -> StorageEvent:
    """``event`` with what a watch without previous values leaves out, from the value the cache holds,
    which is the key's value just before the event: the cache has applied every earlier event in order."""
    if event.type is EventType.DELETE:
        kv = KeyValue(event.kv.key, current.value, current.create_revision, event.revision)
        return StorageEvent(EventType.DELETE, kv, current)
    return StorageEvent(EventType.PUT, event.kv, current)
