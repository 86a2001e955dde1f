"""Informers and listers in client-go's shape (k8s.io/client-go/tools/cache: reflector.go, shared_informer.go,
thread_safe_store.go, listers.go) on asyncio: an ``Informer`` lists a kind, then watches from the list's
resourceVersion, keeps every object in an indexed local cache and tells its handlers what changed; a
``Lister`` reads that cache.

Why asyncio rather than a thread: the informer spends its life waiting on one watch stream, which an asyncio
task does for the price of a coroutine; handlers then run on the program's own event loop (the loop of kopf
and of async controllers) with no lock around the cache, since nothing else writes it concurrently.

What it survives: a watch the server ends (it watches again from the last resourceVersion seen, bookmarks
included), a dropped connection or a restarted server (the same, after a capped back-off), and a
resourceVersion compacted away (410 Gone: it lists again and reconciles the cache, reporting objects deleted
meanwhile as ``DeletedFinalStateUnknown`` tombstones, as client-go's DeltaFIFO.Replace does). An object is
reported once per change: a relist reports only what differs from the cache."""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic

import httpx

from apiclient.errors import APIStatusError, Gone
from apiclient.requests import T, WatchEvent
from apiclient.resource import AsyncResource
from apiserver.machinery.selectors import parse_label_selector

log = logging.getLogger(__name__)

IndexFunc = Callable[[T], Iterable[str]]
"""The index values of an object (client-go's IndexFunc)."""

NAMESPACE_INDEX = "namespace"
LABELS_INDEX = "labels"

MAX_BACKOFF = 5.0
"""The longest wait between attempts to reach an unreachable server."""


@dataclass(frozen=True)
class DeletedFinalStateUnknown(Generic[T]):
    """A deletion the informer did not watch (it happened while the watch was down and its history was
    compacted away): the object's key and its last state known to the cache."""

    key: str
    object: T


def key_of(obj: Any) -> str:
    """The cache key: ``namespace/name``, or ``name`` for a cluster-scoped object (MetaNamespaceKeyFunc)."""
    metadata = obj.metadata
    return f"{metadata.namespace}/{metadata.name}" if metadata.namespace else str(metadata.name)


def namespace_index(obj: Any) -> list[str]:
    return [obj.metadata.namespace or ""]


def labels_index(obj: Any) -> list[str]:
    """One value per label, ``key=value``: the objects with a given label, by index."""
    return [f"{key}={value}" for key, value in _labels(obj).items()]


def _labels(obj: Any) -> dict[str, str]:
    return dict(obj.metadata.labels or {})


def _resource_version(obj: Any) -> str:
    return str(obj.metadata.resource_version or "")


class Store(Generic[T]):
    """The cache: objects by key, and by index value for every index function (client-go's Indexer)."""

    def __init__(self, indexers: dict[str, IndexFunc[T]]) -> None:
        self.indexers = indexers
        self._items: dict[str, T] = {}
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in indexers}

    def get(self, key: str) -> T | None:
        return self._items.get(key)

    def keys(self) -> builtins.list[str]:
        return builtins.list(self._items)

    def items(self) -> builtins.list[T]:
        return builtins.list(self._items.values())

    def by_index(self, index: str, value: str) -> builtins.list[T]:
        if index not in self.indexers:
            raise KeyError(f"index with name {index} does not exist")
        return [self._items[key] for key in sorted(self._indices[index].get(value, ()))]

    def put(self, obj: T) -> T | None:
        """Store ``obj``; the object it replaces, if any."""
        key = key_of(obj)
        old = self._items.get(key)
        if old is not None:
            self._unindex(key, old)
        self._items[key] = obj
        for name, function in self.indexers.items():
            for value in function(obj):
                self._indices[name].setdefault(value, set()).add(key)
        return old

    def remove(self, key: str) -> T | None:
        old = self._items.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        return old

    def _unindex(self, key: str, obj: T) -> None:
        for name, function in self.indexers.items():
            for value in function(obj):
                keys = self._indices[name].get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del self._indices[name][value]


class Lister(Generic[T]):
    """Reads of the informer's cache: no request to the server."""

    def __init__(self, store: Store[T]) -> None:
        self._store = store

    def get(self, name: str, namespace: str | None = None) -> T | None:
        return self._store.get(f"{namespace}/{name}" if namespace else name)

    def list(self, label_selector: str = "", namespace: str | None = None) -> builtins.list[T]:
        """The cached objects a label selector (kube's syntax) selects, of one namespace or all."""
        requirements = parse_label_selector(label_selector)
        candidates = (
            self._store.by_index(NAMESPACE_INDEX, namespace)
            if namespace is not None
            else self._store.items()
        )
        return [
            obj
            for obj in candidates
            if all(requirement.matches(_labels(obj)) for requirement in requirements)
        ]

    def by_index(self, index: str, value: str) -> builtins.list[T]:
        return self._store.by_index(index, value)


@dataclass(frozen=True)
class _Handlers(Generic[T]):
    on_add: Callable[[T], None] | None
    on_update: Callable[[T, T], None] | None
    on_delete: Callable[[T | DeletedFinalStateUnknown[T]], None] | None


class Informer(Generic[T]):
    """A kind's objects (of one namespace, or all; optionally by selector) kept in a local cache by list and
    watch. ``start()`` runs it as a task of the running loop; ``stop()`` ends it."""

    def __init__(
        self,
        resource: AsyncResource[T],
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resync_period: float | None = None,
        indexers: dict[str, IndexFunc[T]] | None = None,
        page_size: int = 500,
        watch_timeout: int = 300,
    ) -> None:
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.resync_period = resync_period
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        builtin_indexers: dict[str, IndexFunc[T]] = {
            NAMESPACE_INDEX: namespace_index,
            LABELS_INDEX: labels_index,
        }
        self.store: Store[T] = Store({**builtin_indexers, **(indexers or {})})
        self.last_resource_version: str | None = None
        self.relists = 0
        self._handlers: builtins.list[_Handlers[T]] = []
        self._synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._resync_task: asyncio.Task[None] | None = None

    def lister(self) -> Lister[T]:
        return Lister(self.store)

    def add_event_handler(
        self,
        on_add: Callable[[T], None] | None = None,
        on_update: Callable[[T, T], None] | None = None,
        on_delete: Callable[[T | DeletedFinalStateUnknown[T]], None] | None = None,
    ) -> None:
        """Handlers of what changes; one added after the cache synced is first told of every cached object
        as added (client-go's AddEventHandler). ``on_delete`` gets the object or a
        ``DeletedFinalStateUnknown``."""
        handlers = _Handlers(on_add, on_update, on_delete)
        self._handlers.append(handlers)
        if self.has_synced and on_add is not None:
            for obj in self.store.items():
                on_add(obj)

    @property
    def has_synced(self) -> bool:
        return self._synced.is_set()

    async def wait_for_cache_sync(self, timeout: float | None = None) -> bool:
        """Whether the first list reached the cache (within ``timeout`` seconds)."""
        try:
            await asyncio.wait_for(self._synced.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def start(self) -> asyncio.Task[None]:
        self._task = asyncio.get_running_loop().create_task(self.run())
        if self.resync_period:
            self._resync_task = asyncio.get_running_loop().create_task(
                self._resync_forever(self.resync_period)
            )
        return self._task

    async def stop(self) -> None:
        for task in (self._task, self._resync_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = self._resync_task = None

    async def run(self) -> None:
        """List, then watch from where the list (or the last event) left off, forever."""
        backoff = 0.1
        while True:
            try:
                if self.last_resource_version is None:
                    await self._relist()
                await self._watch()
                backoff = 0.1
            except Gone:
                log.info("resourceVersion %s expired; relisting", self.last_resource_version)
                self.last_resource_version = None
            except (httpx.TransportError, APIStatusError) as error:
                log.info("list or watch failed (%s); retrying in %.1fs", error, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF)

    async def _relist(self) -> None:
        """Replace the cache with a fresh list, telling the handlers only what differs."""
        listed: dict[str, T] = {}
        resource_version = ""
        token: str | None = None
        while True:
            page = await self.resource.list_page(
                self.namespace,
                label_selector=self.label_selector,
                field_selector=self.field_selector,
                limit=self.page_size,
                continue_token=token,
            )
            resource_version = resource_version or page.resource_version
            listed.update((key_of(obj), obj) for obj in page.items)
            if not (token := page.continue_token):
                break
        for key in set(self.store.keys()) - set(listed):
            old = self.store.remove(key)
            if old is not None:
                self._deleted(DeletedFinalStateUnknown(key, old))
        for obj in listed.values():
            cached = self.store.get(key_of(obj))
            if cached is None or _resource_version(cached) != _resource_version(obj):
                self._apply(obj)
        self.last_resource_version = resource_version
        self.relists += 1
        self._synced.set()

    async def _watch(self) -> None:
        events = self.resource.watch(
            self.namespace,
            resource_version=self.last_resource_version,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            timeout_seconds=self.watch_timeout,
            bookmarks=True,
        )
        async for event in events:
            self._handle(event)
            self.last_resource_version = event.resource_version or self.last_resource_version

    def _handle(self, event: WatchEvent[T]) -> None:
        if event.type in ("ADDED", "MODIFIED"):
            self._apply(event.object)
        elif event.type == "DELETED":
            key = key_of(event.object)
            if self.store.remove(key) is not None:
                self._deleted(event.object)

    def _apply(self, obj: T) -> None:
        old = self.store.put(obj)
        for handlers in self._handlers:
            if old is None and handlers.on_add is not None:
                handlers.on_add(obj)
            elif old is not None and handlers.on_update is not None:
                handlers.on_update(old, obj)

    def _deleted(self, obj: T | DeletedFinalStateUnknown[T]) -> None:
        for handlers in self._handlers:
            if handlers.on_delete is not None:
                handlers.on_delete(obj)

    async def _resync_forever(self, period: float) -> None:
        """Every ``period`` seconds, every cached object to ``on_update`` (old and new the same), so a
        controller reconciles again what it may have missed acting on."""
        while True:
            await asyncio.sleep(period)
            for obj in self.store.items():
                for handlers in self._handlers:
                    if handlers.on_update is not None:
                        handlers.on_update(obj, obj)
