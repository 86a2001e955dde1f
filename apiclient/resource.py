"""Typed clients for one kind: what a generated ``client.py`` binds a model to, sync (``Resource``) and
asyncio (``AsyncResource``). Every call takes and returns the kind's pydantic model (or the wire dictionary
where a patch is partial); lists page through continue tokens; a watch yields typed events and bookmarks.
Both describe each call with ``apiclient.requests.Requests`` and differ only in how they send it."""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Iterator
from typing import Any, Generic

from pydantic import BaseModel

from apiclient.connection import AsyncConnection, Connection
from apiclient.requests import Kind, Page, PatchType, Request, Requests, T, WatchEvent


class Resource(Generic[T]):
    """The verbs of one kind over a connection."""

    def __init__(self, connection: Connection, kind: Kind[T]) -> None:
        self.connection = connection
        self.kind = kind
        self.requests = Requests(kind)

    def get(self, name: str, namespace: str | None = None) -> T:
        return self.requests.decode(self.connection.send(self.requests.get(name, namespace)))

    def list(
        self,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
    ) -> builtins.list[T]:
        """Every object, page after page of ``limit`` (kube's continue tokens) when a limit is given."""
        return list(
            self.iterate(
                namespace, label_selector=label_selector, field_selector=field_selector, limit=limit
            )
        )

    def list_page(
        self,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> Page[T]:
        """One page, with the list's resourceVersion (to watch from) and the next page's token."""
        request = self.requests.list(
            namespace, label_selector, field_selector, limit, continue_token
        )
        return self.requests.page(self.connection.send(request))

    def iterate(
        self,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
    ) -> Iterator[T]:
        """The objects one page at a time, following ``metadata.continue``."""
        token: str | None = None
        while True:
            page = self.list_page(
                namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                limit=limit,
                continue_token=token,
            )
            yield from page.items
            if not (token := page.continue_token):
                return

    def create(
        self,
        obj: T,
        namespace: str | None = None,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> T:
        return self._send(self.requests.create(obj, namespace, dry_run, field_manager))

    def update(self, obj: T, *, dry_run: bool = False, field_manager: str | None = None) -> T:
        """PUT the object (conditioned on its resourceVersion, if it has one)."""
        return self._send(self.requests.put(obj, "", dry_run, field_manager))

    def update_status(
        self, obj: T, *, dry_run: bool = False, field_manager: str | None = None
    ) -> T:
        """PUT the object's status subresource."""
        return self._send(self.requests.put(obj, "status", dry_run, field_manager))

    def patch(
        self,
        name: str,
        patch: dict[str, Any] | builtins.list[dict[str, Any]],
        namespace: str | None = None,
        *,
        type: PatchType = "merge",
        subresource: str = "",
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> T:
        """A JSON patch (a list of operations), a merge patch, or a strategic merge patch (where the kind
        serves it)."""
        return self._send(
            self.requests.patch(name, patch, namespace, type, subresource, dry_run, field_manager)
        )

    def apply(
        self,
        obj: BaseModel | dict[str, Any],
        *,
        field_manager: str,
        namespace: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        subresource: str = "",
    ) -> T:
        """Server-side apply of what ``field_manager`` wants the object (or its ``subresource``) to hold: a
        model with only those fields set, what ``extract`` returned, or a dictionary."""
        return self._send(
            self.requests.apply(obj, field_manager, namespace, force, dry_run, subresource)
        )

    def delete(
        self,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        preconditions: dict[str, str] | None = None,
        dry_run: bool = False,
    ) -> None:
        """Delete (with ``Background``, ``Foreground`` or ``Orphan`` propagation, and uid or
        resourceVersion preconditions)."""
        self.connection.send(
            self.requests.delete(name, namespace, propagation_policy, preconditions, dry_run)
        )

    def delete_collection(
        self, namespace: str | None = None, *, label_selector: str | None = None
    ) -> None:
        self.connection.send(self.requests.delete_collection(namespace, label_selector))

    def watch(
        self,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = None,
        bookmarks: bool = True,
    ) -> Iterator[WatchEvent[T]]:
        """The events after ``resource_version`` (or the current objects as ADDED first, without one) until
        the server ends the watch; an ERROR event (410 Expired after a compaction) raises its Status."""
        request = self.requests.watch(
            namespace, resource_version, label_selector, field_selector, timeout_seconds, bookmarks
        )
        with self.connection.stream(request) as lines:
            for line in lines:
                yield self.requests.event(line)

    def _send(self, request: Request) -> T:
        return self.requests.decode(self.connection.send(request))


class AsyncResource(Generic[T]):
    """The verbs of one kind over an ``AsyncConnection``: the same calls as ``Resource``, awaited; ``iterate``
    and ``watch`` are async iterators."""

    def __init__(self, connection: AsyncConnection, kind: Kind[T]) -> None:
        self.connection = connection
        self.kind = kind
        self.requests = Requests(kind)

    async def get(self, name: str, namespace: str | None = None) -> T:
        return await self._send(self.requests.get(name, namespace))

    async def list(
        self,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
    ) -> builtins.list[T]:
        """Every object, page after page of ``limit`` (kube's continue tokens) when a limit is given."""
        iterator = self.iterate(
            namespace, label_selector=label_selector, field_selector=field_selector, limit=limit
        )
        return [item async for item in iterator]

    async def list_page(
        self,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> Page[T]:
        """One page, with the list's resourceVersion (to watch from) and the next page's token."""
        request = self.requests.list(
            namespace, label_selector, field_selector, limit, continue_token
        )
        return self.requests.page(await self.connection.send(request))

    async def iterate(
        self,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[T]:
        """The objects one page at a time, following ``metadata.continue``."""
        token: str | None = None
        while True:
            page = await self.list_page(
                namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                limit=limit,
                continue_token=token,
            )
            for item in page.items:
                yield item
            if not (token := page.continue_token):
                return

    async def create(
        self,
        obj: T,
        namespace: str | None = None,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> T:
        return await self._send(self.requests.create(obj, namespace, dry_run, field_manager))

    async def update(self, obj: T, *, dry_run: bool = False, field_manager: str | None = None) -> T:
        return await self._send(self.requests.put(obj, "", dry_run, field_manager))

    async def update_status(
        self, obj: T, *, dry_run: bool = False, field_manager: str | None = None
    ) -> T:
        return await self._send(self.requests.put(obj, "status", dry_run, field_manager))

    async def patch(
        self,
        name: str,
        patch: dict[str, Any] | builtins.list[dict[str, Any]],
        namespace: str | None = None,
        *,
        type: PatchType = "merge",
        subresource: str = "",
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> T:
        return await self._send(
            self.requests.patch(name, patch, namespace, type, subresource, dry_run, field_manager)
        )

    async def apply(
        self,
        obj: BaseModel | dict[str, Any],
        *,
        field_manager: str,
        namespace: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        subresource: str = "",
    ) -> T:
        return await self._send(
            self.requests.apply(obj, field_manager, namespace, force, dry_run, subresource)
        )

    async def delete(
        self,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        preconditions: dict[str, str] | None = None,
        dry_run: bool = False,
    ) -> None:
        await self.connection.send(
            self.requests.delete(name, namespace, propagation_policy, preconditions, dry_run)
        )

    async def delete_collection(
        self, namespace: str | None = None, *, label_selector: str | None = None
    ) -> None:
        await self.connection.send(self.requests.delete_collection(namespace, label_selector))

    async def watch(
        self,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = None,
        bookmarks: bool = True,
    ) -> AsyncIterator[WatchEvent[T]]:
        """The events after ``resource_version`` until the server ends the watch; an ERROR event (410
        Expired after a compaction) raises its Status."""
        request = self.requests.watch(
            namespace, resource_version, label_selector, field_selector, timeout_seconds, bookmarks
        )
        async with self.connection.stream(request) as lines:
            async for line in lines:
                yield self.requests.event(line)

    async def _send(self, request: Request) -> T:
        return self.requests.decode(await self.connection.send(request))
