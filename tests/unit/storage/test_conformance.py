"""The storage contract (apiserver.storage.testing) run against every backend, and against every backend
read through the watch cache (``open_store`` in conftest); and what only the embedded backends promise."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from apiserver.storage import MemoryStorage, SQLiteStorage, Storage, WatchOverflowError
from apiserver.storage.testing import CHECKS, Check, Events, OpenStore

PREFIX = "/registry/widgets/"


@pytest.mark.parametrize("check", CHECKS.values(), ids=CHECKS.keys())
async def test_storage_contract(check: Check, open_store: OpenStore) -> None:
    await check(open_store)


def test_every_check_runs_and_can_fail() -> None:
    """A check that never runs a store proves nothing: each one opens the store it is given."""
    opened: list[str] = []

    def refusing() -> object:
        raise RuntimeError("opened")

    for name, check in CHECKS.items():
        with pytest.raises(RuntimeError, match="opened"):
            asyncio.run(check(refusing))  # type: ignore[arg-type]
        opened.append(name)
    assert len(opened) == len(CHECKS) >= 20


EMBEDDED: dict[str, Callable[[Path], Storage]] = {
    "memory": lambda _: MemoryStorage(watch_capacity=5),
    "sqlite": lambda data_dir: SQLiteStorage(data_dir / "state.db", watch_capacity=5),
}


@pytest.mark.parametrize("kind", EMBEDDED)
async def test_a_watcher_that_falls_too_far_behind_is_ended(kind: str, tmp_path: Path) -> None:
    storage = EMBEDDED[kind](tmp_path)
    await storage.start()
    try:
        laggard = Events(storage.watch(PREFIX, after_revision=0))
        reader = Events(storage.watch(PREFIX, after_revision=0))
        for i in range(10):
            await storage.create(f"{PREFIX}k{i}", b"")
            await reader.take(1)
        with pytest.raises(WatchOverflowError) as raised:
            await laggard.take(1)
        assert raised.value.last_revision == 0
        await laggard.close()
        await reader.close()
    finally:
        await storage.close()
