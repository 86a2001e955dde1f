"""An informer over one Store: list, then watch from the list's revision, and start over whenever the watch
ends (client-go's reflector), handing every object to a handler. The RBAC authorizer's indexes and the
aggregation controller follow their kinds with it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Protocol

from apiserver.machinery import errors
from apiserver.registry.store import ListOptions, Store
from apiserver.storage.interface import StorageError

log = logging.getLogger(__name__)
RETRY_SECONDS = 1.0


class Handler(Protocol):
    def replace(self, objects: list[dict[str, Any]]) -> None:
        """Everything there is (after a list): forget what came before."""
        ...

    def changed(self, event_type: str, obj: dict[str, Any]) -> None:
        """One watch event: ADDED, MODIFIED or DELETED."""
        ...


class Informer:
    def __init__(self, store: Store, handler: Handler) -> None:
        self.store = store
        self.handler = handler
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Lists once before returning, so that what is stored is known before the server serves."""
        revision = await self._list()
        self._task = asyncio.create_task(self._run(revision))

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _list(self) -> int:
        page = await self.store.list(None, ListOptions())
        self.handler.replace(page.items)
        return page.revision

    async def _run(self, revision: int) -> None:
        while True:
            try:
                async for event in self.store.watch(None, revision, None):
                    if event.type in ("ADDED", "MODIFIED", "DELETED"):
                        self.handler.changed(event.type, event.object)
            except (errors.APIError, StorageError) as error:
                log.warning(
                    "the %s informer lists again after: %s", self.store.resource.plural, error
                )
            await asyncio.sleep(RETRY_SECONDS)
            try:
                revision = await self._list()
            except (errors.APIError, StorageError) as error:
                log.warning(
                    "the %s informer cannot list yet: %s", self.store.resource.plural, error
                )
