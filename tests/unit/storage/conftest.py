"""Fixtures for the storage suite: ``open_store``, parametrized over backends, and async tests.

The conformance suite runs every test against every backend. pytest-asyncio is not a dependency:
``async def`` tests in this directory run in ``asyncio.run``.

The etcd backend runs against one real etcd per session (starting one per test would cost more
than the tests). The suite states exact revisions (the first write is 1), so each test sees etcd
through ``RebasedStorage``: its own key prefix, and every revision shifted by the one etcd was at
when the test began. Nothing else writes to that etcd meanwhile, so the shift is exact. Compaction
is etcd-wide, but a test compacts only revisions at or below its own latest one, which every later
test's base is past.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from apiserver.storage import (
    CompactedError,
    EtcdStorage,
    FutureRevisionError,
    KeyValue,
    ListResult,
    RevisionConflictError,
    Storage,
    StorageEvent,
    Watch,
    open_storage,
)
from tests.etcdproc import EtcdProcess, running_etcd

BACKENDS = ["memory", "sqlite", "etcd"]


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run ``async def`` tests in a fresh event loop; None lets pytest run the plain ones."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    parameters = inspect.signature(pyfuncitem.obj).parameters
    arguments = {name: pyfuncitem.funcargs[name] for name in parameters}
    asyncio.run(pyfuncitem.obj(**arguments))
    return True


OpenStore = Callable[[], AbstractAsyncContextManager[Storage]]
"""Opens (starts) a backend for the length of an ``async with``; enter it again to reopen."""


@pytest.fixture(scope="session")
def etcd_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdProcess]:
    """One etcd for the whole session, started only if an etcd test runs."""
    yield from running_etcd(tmp_path_factory.mktemp("etcd"))


@pytest.fixture(params=BACKENDS)
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> OpenStore:
    kind: str = request.param
    if kind == "etcd":
        server: EtcdProcess = request.getfixturevalue("etcd_server")
        # a fixed-length prefix: no test's prefix starts with another's (see EtcdStorage)
        prefix = f"/conformance/{uuid.uuid4().hex}"
        base: list[int] = []  # etcd's revision when the test first opened the store

        def storage() -> Storage:
            return RebasedStorage(EtcdStorage(server.endpoints, prefix), base)

    else:

        def storage() -> Storage:
            return open_storage(kind, tmp_path)

    @asynccontextmanager
    async def opened() -> AsyncIterator[Storage]:
        store = storage()
        await store.start()
        try:
            yield store
        finally:
            await store.close()

    return opened


# -------------------------------------------------------------------------------- etcd, rebased


class RebasedStorage:
    """``inner`` with every revision shifted down by ``base[0]`` (recorded at the first start)."""

    def __init__(self, inner: EtcdStorage, base: list[int]) -> None:
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

    def _event(self, event: StorageEvent) -> StorageEvent:
        prev = None if event.prev is None else self._kv(event.prev)
        return StorageEvent(event.type, self._kv(event.kv), prev)

    def _in(self, revision: int) -> int:
        return revision + self.base if revision > 0 else revision

    @contextmanager
    def _errors(self) -> Iterator[None]:
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
        with self._errors():
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
        with self._errors():
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
        with self._errors():
            return self._kv(await self.inner.delete(key, expected))

    def watch(self, prefix: str, after_revision: int, *, with_prev: bool = True) -> Watch:
        inner = self.inner.watch(prefix, after_revision + self.base, with_prev=with_prev)
        return RebasedWatch(self, inner)

    async def compact(self, revision: int) -> None:
        with self._errors():
            await self.inner.compact(self._in(revision))


class RebasedWatch:
    def __init__(self, storage: RebasedStorage, inner: Watch) -> None:
        self._storage = storage
        self._inner = inner
        self._iterator = aiter(inner)

    def __aiter__(self) -> RebasedWatch:
        return self

    async def __anext__(self) -> StorageEvent:
        with self._storage._errors():
            return self._storage._event(await anext(self._iterator))

    async def close(self) -> None:
        await self._inner.close()
