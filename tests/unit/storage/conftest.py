"""Fixtures for the storage suite: ``open_store``, parametrized over backends, and async tests.

The conformance checks (apiserver.storage.testing) run against every backend, and against every backend read
through the watch cache (tests/watchcached.py). pytest-asyncio is not a dependency: ``async def`` tests in
this directory run in ``asyncio.run``.

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
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from apiserver.storage import EtcdStorage, Storage, open_storage
from apiserver.storage.testing import OpenStore, RebasedStorage
from tests.etcdproc import EtcdProcess, running_etcd
from tests.watchcached import WatchCachedStorage

BACKENDS = ["memory", "sqlite", "etcd"]
WATCH_CACHED = [f"{backend}+watchcache" for backend in BACKENDS]


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run ``async def`` tests in a fresh event loop; None lets pytest run the plain ones."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    parameters = inspect.signature(pyfuncitem.obj).parameters
    arguments = {name: pyfuncitem.funcargs[name] for name in parameters}
    asyncio.run(pyfuncitem.obj(**arguments))
    return True


@pytest.fixture(scope="session")
def etcd_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdProcess]:
    """One etcd for the whole session, started only if an etcd test runs."""
    yield from running_etcd(tmp_path_factory.mktemp("etcd"))


@pytest.fixture(params=BACKENDS + WATCH_CACHED)
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> OpenStore:
    kind, _, through = request.param.partition("+")
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
        store = WatchCachedStorage(storage()) if through else storage()
        await store.start()
        try:
            yield store
        finally:
            await store.close()

    return opened
