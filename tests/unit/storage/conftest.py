"""Fixtures for the storage suite: ``open_store``, parametrized over backends, and async tests.

The conformance suite runs every test against every backend; an etcd backend joins by adding a
parameter. pytest-asyncio is not a dependency: ``async def`` tests in this directory run in
``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest

from apiserver.storage import Storage, open_storage

BACKENDS = ["memory", "sqlite"]


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


@pytest.fixture(params=BACKENDS)
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> OpenStore:
    kind: str = request.param

    @asynccontextmanager
    async def opened() -> AsyncIterator[Storage]:
        storage = open_storage(kind, tmp_path)
        await storage.start()
        try:
            yield storage
        finally:
            await storage.close()

    return opened
