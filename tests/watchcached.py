"""A backend read through the watch cache (apiserver/registry/cacher.py), so the storage contract's checks
(apiserver.storage.testing) also judge what the cache serves.

Writes, compaction and what the cache does not serve go to the backend; a latest, unpaged list, a get and
every watch are answered by one ``WatchCache`` over the whole keyspace, once it has applied every write the
backend acknowledged (as the registry reads it after writes through storage). Compaction is passed to the
cache as the server's compactor passes it (``forget_before``)."""

from __future__ import annotations

import asyncio

from apiserver.registry.cacher import WatchCache
from apiserver.storage.interface import KeyValue, ListResult, Storage, Watch

SETTLE_TIMEOUT = 5.0


class WatchCachedStorage:
    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.cache: WatchCache | None = None

    def _cache(self) -> WatchCache:
        assert self.cache is not None, "the store is not started"
        return self.cache

    async def _settled(self) -> WatchCache:
        """The cache, once it reflects every write acknowledged so far."""
        cache = self._cache()
        target = await self.inner.current_revision()
        async with asyncio.timeout(SETTLE_TIMEOUT):
            while cache.revision < target:
                await asyncio.sleep(0.001)
        return cache

    async def start(self) -> None:
        await self.inner.start()
        self.cache = WatchCache(self.inner, "")
        await self.cache.start()

    async def close(self) -> None:
        await self._cache().stop()
        await self.inner.close()

    async def current_revision(self) -> int:
        return await self.inner.current_revision()

    async def get(self, key: str) -> KeyValue | None:
        return (await self._settled()).objects.get(key)

    async def list(
        self, prefix: str, *, limit: int = 0, start_key: str | None = None, revision: int = 0
    ) -> ListResult:
        if limit or start_key is not None or revision:
            return await self.inner.list(
                prefix, limit=limit, start_key=start_key, revision=revision
            )
        items, at = (await self._settled()).list(prefix)
        return ListResult(items, at, 0)

    async def create(self, key: str, value: bytes) -> KeyValue:
        return await self.inner.create(key, value)

    async def update(
        self, key: str, value: bytes, expected_revision: int, *, create_revision: int = 0
    ) -> KeyValue:
        return await self.inner.update(
            key, value, expected_revision, create_revision=create_revision
        )

    async def delete(self, key: str, expected_revision: int | None = None) -> KeyValue:
        return await self.inner.delete(key, expected_revision)

    def watch(self, prefix: str, after_revision: int, *, with_prev: bool = True) -> Watch:
        return self._cache().watch(prefix, after_revision)

    async def compact(self, revision: int) -> None:
        await self.inner.compact(revision)
        self._cache().forget_before(revision)
