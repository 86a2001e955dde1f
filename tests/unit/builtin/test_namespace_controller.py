"""The namespace controller keeps finalizing deleted namespaces after its watch ends (the watch cache
restarting ends every watcher), by listing and watching again."""

from __future__ import annotations

import asyncio

import pytest

from apiserver.registry.store import ListOptions
from apiserver.server.app import APIServer
from apiserver.storage.memory import MemoryStorage
from builtin.core import namespace
from builtin.core.namespace import DefaultNamespaces, NamespaceController
from generated.server import OPENAPI_DIR, build_apis


def test_a_namespace_deleted_after_the_watch_ended_is_still_finalized(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(namespace, "RETRY_SECONDS", 0.01)

    async def body() -> None:
        storage = MemoryStorage()
        server = APIServer(build_apis(), storage, OPENAPI_DIR)  # not started: no watch caches
        [defaults] = [c for c in server.controllers if isinstance(c, DefaultNamespaces)]
        [lifecycle] = [c for c in server.controllers if isinstance(c, NamespaceController)]
        await defaults.start()
        await lifecycle.start()  # lists and watches
        await asyncio.sleep(0.05)  # listed and watching
        await storage.close()  # ends every watch, as a watch cache restart does
        await asyncio.sleep(0.05)
        _, deleted_now = await lifecycle.store.delete(None, "kube-node-lease")
        assert not deleted_now  # marked; the controller removes the finalizer, then it is gone
        for _ in range(100):
            remaining = await lifecycle.store.list(None, ListOptions())
            if "kube-node-lease" not in [ns["metadata"]["name"] for ns in remaining.items]:
                break
            await asyncio.sleep(0.01)
        else:
            pytest.fail("the namespace was never finalized")
        await lifecycle.stop()

    asyncio.run(asyncio.wait_for(body(), timeout=10))
