"""A backend seen with its revisions shifted, so that checks stating exact revisions (the first write is 1)
can run on a store that already has history: a shared etcd, where each check gets a fresh key prefix but
revisions are global. Nothing else may write to the store meanwhile, so the shift is exact."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from apiserver.storage.interface import (
    CompactedError,
    FutureRevisionError,
    KeyValue,
    ListResult,
    RevisionConflictError,
    Storage,
    StorageEvent,
    Watch,
)


class RebasedStorage:
    """``inner`` with every revision shifted down by ``base[0]``, recorded at the first start (the list is
    shared by every reopening of one check's store)."""

    def __init__(self, inner: Storage, base: list[int]) -> None:
        self.inner = inner
        self._base = base

    @property
    def base(self) -> int:
        return self._base[0]

    def _kv(self, kv: KeyValue) -> KeyValue:
        return replace(
            kv,
            # 0: not given (a delete seen by a watch without previous values)
            create_revision=kv.create_revision - self.base if kv.create_revision else 0,
            mod_revision=kv.mod_revision - self.base,
        )

    def event(self, event: StorageEvent) -> StorageEvent:
        prev = None if event.prev is None else self._kv(event.prev)
        return StorageEvent(event.type, self._kv(event.kv), prev)

    def _in(self, revision: int) -> int:
        return revision + self.base if revision > 0 else revision

    @contextmanager
    def errors(self) -> Iterator[None]:
        """Shift the revisions that errors carry, too."""
        try:
            yield
        except RevisionConflictError as error:
            raise RevisionConflictError(
                error.key, error.expected - self.base, self._kv(error.current)
            ) from None
        except CompactedError as error:
            raise CompactedError(
                error.requested - self.base, error.compact_revision - self.base
            ) from None
        except FutureRevisionError as error:
            raise FutureRevisionError(
                error.requested - self.base, error.current - self.base
            ) from None

    async def start(self) -> None:
        await self.inner.start()
        if not self._base:
            self._base.append(await self.inner.current_revision())

    async def close(self) -> None:
        await self.inner.close()

    async def current_revision(self) -> int:
        return await self.inner.current_revision() - self.base

    async def get(self, key: str) -> KeyValue | None:
        kv = await self.inner.get(key)
        return None if kv is None else self._kv(kv)

    async def list(
        self, prefix: str, *, limit: int = 0, start_key: str | None = None, revision: int = 0
    ) -> ListResult:
        with self.errors():
            result = await self.inner.list(
                prefix, limit=limit, start_key=start_key, revision=self._in(revision)
            )
        return ListResult(
            [self._kv(kv) for kv in result.items], result.revision - self.base, result.remaining
        )

    async def create(self, key: str, value: bytes) -> KeyValue:
        return self._kv(await self.inner.create(key, value))

    async def update(
        self, key: str, value: bytes, expected_revision: int, *, create_revision: int = 0
    ) -> KeyValue:
        with self.errors():
            return self._kv(
                await self.inner.update(
                    key,
                    value,
                    self._in(expected_revision),
                    create_revision=self._in(create_revision),
                )
            )

    async def delete(self, key: str, expected_revision: int | None = None) -> KeyValue:
        expected = None if expected_revision is None else self._in(expected_revision)
        with self.errors():
            return self._kv(await self.inner.delete(key, expected))

    def watch(self, prefix: str, after_revision: int, *, with_prev: bool = True) -> Watch:
        inner = self.inner.watch(prefix, after_revision + self.base, with_prev=with_prev)
        return RebasedWatch(self, inner)

    async def compact(self, revision: int) -> None:
        with self.errors():
            await self.inner.compact(self._in(revision))


class RebasedWatch:
    def __init__(self, storage: RebasedStorage, inner: Watch) -> None:
        self._storage = storage
        self._inner = inner
        self._iterator = aiter(inner)

    def __aiter__(self) -> RebasedWatch:
        return self

    async def __anext__(self) -> StorageEvent:
        with self._storage.errors():
            return self._storage.event(await anext(self._iterator))

    async def close(self) -> None:
        await self._inner.close()
