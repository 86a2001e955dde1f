"""MemoryStorage: the storage contract held in process memory, for tests and throwaway servers.

Every key keeps its history (one event per write) so that lists at an old revision, watch replay and
compaction behave exactly as in the persistent backends. No method awaits anything before it is done
with the data, so each one is atomic with respect to the others.
"""

from __future__ import annotations

import builtins
from bisect import bisect_right

from apiserver.storage.fanout import DEFAULT_WATCH_CAPACITY, WatchHub, WatchStream
from apiserver.storage.interface import (
    CompactedError,
    EventType,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    ListResult,
    RevisionConflictError,
    StorageEvent,
    check_value_size,
)


def _revision_of(event: StorageEvent) -> int:
    return event.revision


class MemoryStorage:
    """A revisioned key-value store in a dict, with per-key history and a global event log."""

    def __init__(self, *, watch_capacity: int = DEFAULT_WATCH_CAPACITY) -> None:
        self._revision = 0
        self._compacted = 0
        self._history: dict[str, list[StorageEvent]] = {}
        # every event after the compact revision, in revision order, for watch replay
        self._log: list[StorageEvent] = []
        self._watch_capacity = watch_capacity
        self._hub = WatchHub(watch_capacity)

    def snapshot(self) -> MemoryStorage:
        """A new store holding this one's data and history as they are now, with no watchers: what a fresh
        server's own start-up writes (default namespaces, roles, service accounts...) is written once, and
        each later server starts from its copy instead of writing it all again (the test fixtures' server per
        test). Events are immutable, so the copies share them."""
        copy = MemoryStorage(watch_capacity=self._watch_capacity)
        copy._revision = self._revision
        copy._compacted = self._compacted
        copy._history = {key: list(history) for key, history in self._history.items()}
        copy._log = list(self._log)
        return copy

    async def start(self) -> None:
        """Nothing to open; present for the contract."""

    async def close(self) -> None:
        self._hub.end_all()

    async def current_revision(self) -> int:
        return self._revision

    async def get(self, key: str) -> KeyValue | None:
        return self._current(key)

    async def list(
        self, prefix: str, *, limit: int = 0, start_key: str | None = None, revision: int = 0
    ) -> ListResult:
        at = self._check_revision(revision)
        lower = max(prefix, start_key) if start_key is not None else prefix
        live = [
            kv
            for key in sorted(k for k in self._history if k >= lower and k.startswith(prefix))
            if (kv := self._value_at(key, at)) is not None
        ]
        page = live[:limit] if limit > 0 else live
        return ListResult(items=page, revision=at, remaining=len(live) - len(page))

    async def create(self, key: str, value: bytes) -> KeyValue:
        check_value_size(key, value)
        history = self._history.get(key)
        if history and history[-1].type is not EventType.DELETE:
            raise KeyExistsError(key)
        revision = self._revision = self._revision + 1
        kv = KeyValue(key, value, revision, revision)
        event = StorageEvent(EventType.PUT, kv, None)
        if history is None:
            self._history[key] = [event]
        else:
            history.append(event)
        self._log.append(event)
        self._hub.publish([event])
        return kv

    async def update(
        self, key: str, value: bytes, expected_revision: int, *, create_revision: int = 0
    ) -> KeyValue:
        del create_revision  # known here
        check_value_size(key, value)
        current = self._checked_current(key, expected_revision)
        kv = KeyValue(key, value, current.create_revision, self._revision + 1)
        self._append(StorageEvent(EventType.PUT, kv, current))
        return kv

    async def delete(self, key: str, expected_revision: int | None = None) -> KeyValue:
        current = self._checked_current(key, expected_revision)
        kv = KeyValue(key, current.value, current.create_revision, self._revision + 1)
        self._append(StorageEvent(EventType.DELETE, kv, current))
        return kv

    def watch(self, prefix: str, after_revision: int, *, with_prev: bool = True) -> WatchStream:
        del with_prev  # the previous value costs nothing here: always included
        return self._hub.subscribe(
            prefix, after_revision, lambda after: self._replay(prefix, after)
        )

    async def compact(self, revision: int) -> None:
        """Keep, per key, only the entries a read at ``revision`` or later can still see."""
        if revision > self._revision:
            raise FutureRevisionError(revision, self._revision)
        if revision <= self._compacted:
            return
        for key, history in list(self._history.items()):
            kept = history[max(bisect_right(history, revision, key=_revision_of) - 1, 0) :]
            if kept[0].revision <= revision and kept[0].type is EventType.DELETE:
                kept = kept[1:]
            if kept:
                self._history[key] = kept
            else:
                del self._history[key]
        self._log = self._log[bisect_right(self._log, revision, key=_revision_of) :]
        self._compacted = revision

    async def _replay(self, prefix: str, after_revision: int) -> builtins.list[StorageEvent]:
        if after_revision < self._compacted:
            raise CompactedError(after_revision, self._compacted)
        start = bisect_right(self._log, after_revision, key=_revision_of)
        return [e for e in self._log[start:] if e.kv.key.startswith(prefix)]

    def _append(self, event: StorageEvent) -> None:
        self._revision = event.revision
        self._history.setdefault(event.kv.key, []).append(event)
        self._log.append(event)
        self._hub.publish([event])

    def _current(self, key: str) -> KeyValue | None:
        history = self._history.get(key)
        if not history or history[-1].type is EventType.DELETE:
            return None
        return history[-1].kv

    def _checked_current(self, key: str, expected_revision: int | None) -> KeyValue:
        current = self._current(key)
        if current is None:
            raise KeyNotFoundError(key)
        if expected_revision is not None and current.mod_revision != expected_revision:
            raise RevisionConflictError(key, expected_revision, current)
        return current

    def _value_at(self, key: str, revision: int) -> KeyValue | None:
        history = self._history[key]
        index = bisect_right(history, revision, key=_revision_of) - 1
        if index < 0 or history[index].type is EventType.DELETE:
            return None
        return history[index].kv

    def _check_revision(self, revision: int) -> int:
        """The revision a read at ``revision`` sees (0 = latest); raises when it is out of range."""
        if revision > self._revision:
            raise FutureRevisionError(revision, self._revision)
        if revision == 0:
            return self._revision
        if revision < self._compacted:
            raise CompactedError(revision, self._compacted)
        return revision
