"""The compactor keeps compacting after storage was unreachable for a round, and stops cleanly."""

from __future__ import annotations

import asyncio

from apiserver.server.compactor import Compactor
from apiserver.storage.interface import StorageUnavailableError
from apiserver.storage.memory import MemoryStorage


class FlakyStorage(MemoryStorage):
    """Memory storage whose first ``failing_reads`` revision reads fail, as an unreachable etcd's would."""

    def __init__(self, failing_reads: int) -> None:
        super().__init__()
        self.failing_reads = failing_reads
        self.compacted: list[int] = []

    async def current_revision(self) -> int:
        if self.failing_reads:
            self.failing_reads -= 1
            raise StorageUnavailableError("storage is unavailable")
        return await super().current_revision()

    async def compact(self, revision: int) -> None:
        self.compacted.append(revision)
        await super().compact(revision)


def test_compaction_goes_on_after_storage_was_unreachable() -> None:
    async def body() -> None:
        storage = FlakyStorage(failing_reads=2)
        await storage.create("/registry/things/a", b"1")
        compactor = Compactor(storage, interval_seconds=0.01)
        await compactor.start()
        for _ in range(100):
            if storage.compacted:
                break
            await asyncio.sleep(0.01)
        await compactor.stop()
        assert storage.compacted and storage.compacted[0] == 1

    asyncio.run(asyncio.wait_for(body(), timeout=10))
