"""Periodic compaction, as kube-apiserver's compactor does for etcd: every interval, drop the history older
than the revision seen one interval earlier, so clients keep about one interval of history to resume watches
from, and the log does not grow forever. Older resourceVersions then get 410 Expired."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from apiserver.storage.interface import Storage, StorageError

log = logging.getLogger(__name__)


class Compactor:
    leader_only = True  # one replica compacts the storage they share

    def __init__(self, storage: Storage, interval_seconds: float) -> None:
        self.storage = storage
        self.interval = interval_seconds
        self.listeners: list[
            Callable[[int], None]
        ] = []  # told each compacted revision (watch caches)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self.interval > 0:
            self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        previous = 0  # the revision seen one interval ago (0: none yet)
        while True:
            try:
                current = await self.storage.current_revision()
            except StorageError as error:
                # storage unreachable for now: skip this round rather than end compaction for good
                log.warning("compaction skipped: %s", error)
            else:
                if previous > 0:
                    try:
                        await self.storage.compact(previous)
                    except StorageError as error:  # another replica compacted further: nothing lost
                        log.info("compaction at %d skipped: %s", previous, error)
                    for listener in self.listeners:
                        listener(previous)
                previous = current
            await asyncio.sleep(self.interval)
