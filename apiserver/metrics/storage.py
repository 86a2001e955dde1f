"""A Storage that times every request it passes on, as kube's etcd3 store records
``etcd_request_duration_seconds`` (k8s.io/apiserver/pkg/storage/etcd3/store.go, RecordEtcdRequest). The same
metric name serves both backends (SQLite too): dashboards built for kube keep working.

The ``type`` label is the resource as kube names it (``crontabs.stable.example.com``, ``namespaces``), found
from the key's prefix; a key under no known resource is labelled by its first path segments."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from apiserver.metrics.registry import Metrics
from apiserver.storage.interface import KeyValue, ListResult, Storage, Watch

Resources = Callable[[], dict[str, str]]
"""Key prefix (``/registry/apps/deployments/``) → resource (``deployments.apps``), for every stored kind."""


_OBSERVERS_REMEMBERED = 4096


class InstrumentedStorage:
    """Passes every call on to ``storage``; the reads and writes are timed."""

    def __init__(self, storage: Storage, metrics: Metrics, resources: Resources) -> None:
        self.storage = storage
        self.metrics = metrics
        self.resources = resources
        self._types: dict[str, str] = {}
        # (operation, key's parent) -> the observe of its series: a call's timing costs one lookup
        self._observers: dict[tuple[str, str], Callable[[float], None]] = {}

    def __getattr__(self, name: str) -> Any:
        """What only one backend has (its tests' hooks, its options) is the backend's."""
        return getattr(self.storage, name)

    def _type(self, key: str) -> str | None:
        """The key's resource, found from its leading path segments; None under no known resource."""
        parts = key.split("/", 4)  # "", "registry", group or resource, resource or namespace, ...
        candidates = ("/".join(parts[:4]) + "/", "/".join(parts[:3]) + "/")
        for looked_up_again in (False, True):
            if looked_up_again:  # a resource added since (a CRD)
                self._types = dict(self.resources())
            for candidate in candidates:
                known = self._types.get(candidate)
                if known is not None:
                    return known
        return None

    def _observer(self, operation: str, key: str) -> Callable[[float], None]:
        """What records one ``operation`` on ``key`` in its resource's series, remembered by operation and
        key's parent (a collection, or a namespace of one). A key under no known resource is labelled by
        its first path segments, and looked up again next time (a CRD added since)."""
        parent = key[: key.rfind("/") + 1]
        observe = self._observers.get((operation, parent))
        if observe is not None:
            return observe
        type_ = self._type(key)
        if type_ is None:
            return self.metrics.storage_timer(operation, "/".join(key.split("/", 3)[:3]))
        if len(self._observers) >= _OBSERVERS_REMEMBERED:
            self._observers.clear()
        observe = self._observers[(operation, parent)] = self.metrics.storage_timer(
            operation, type_
        )
        return observe

    async def start(self) -> None:
        await self.storage.start()

    async def close(self) -> None:
        await self.storage.close()

    async def current_revision(self) -> int:
        return await self.storage.current_revision()

    async def get(self, key: str) -> KeyValue | None:
        started = time.perf_counter()
        try:
            return await self.storage.get(key)
        finally:
            self._observer("get", key)(time.perf_counter() - started)

    async def list(
        self, prefix: str, *, limit: int = 0, start_key: str | None = None, revision: int = 0
    ) -> ListResult:
        started = time.perf_counter()
        try:
            return await self.storage.list(
                prefix, limit=limit, start_key=start_key, revision=revision
            )
        finally:
            self._observer("list", prefix)(time.perf_counter() - started)

    async def create(self, key: str, value: bytes) -> KeyValue:
        started = time.perf_counter()
        try:
            return await self.storage.create(key, value)
        finally:
            self._observer("create", key)(time.perf_counter() - started)

    async def update(
        self, key: str, value: bytes, expected_revision: int, *, create_revision: int = 0
    ) -> KeyValue:
        started = time.perf_counter()
        try:
            return await self.storage.update(
                key, value, expected_revision, create_revision=create_revision
            )
        finally:
            self._observer("update", key)(time.perf_counter() - started)

    async def delete(self, key: str, expected_revision: int | None = None) -> KeyValue:
        started = time.perf_counter()
        try:
            return await self.storage.delete(key, expected_revision)
        finally:
            self._observer("delete", key)(time.perf_counter() - started)

    def watch(self, prefix: str, after_revision: int, *, with_prev: bool = True) -> Watch:
        return self.storage.watch(prefix, after_revision, with_prev=with_prev)

    async def compact(self, revision: int) -> None:
        await self.storage.compact(revision)  # not a request kube times: compaction has its own
