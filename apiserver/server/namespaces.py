"""Namespaces: the defaults created at start (kube's bootstrap controller), the admission check that content
is created only in an existing, active namespace, and the namespace controller that empties a deleted
namespace and then removes it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from apiserver.machinery import errors
from apiserver.machinery.scheme import ResourceType
from apiserver.registry.store import ListOptions, Store
from apiserver.registry.strategy import NamespaceStrategy
from apiserver.storage.interface import Storage, StorageError

log = logging.getLogger(__name__)

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# kube's NamespaceLifecycle admission refuses to delete these: the server and its clients rely on them
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
FINALIZER = "kubernetes"
RETRY_SECONDS = 1.0


class NamespaceStore(Store):
    """The namespaces' Store: deleting an immortal namespace is 403, as kube's NamespaceLifecycle admits it."""

    async def delete(
        self,
        namespace: str | None,
        name: str,
        *,
        uid_precondition: str = "",
        version_precondition: str = "",
        dry_run: bool = False,
    ) -> tuple[dict[str, Any], bool]:
        if name in IMMORTAL_NAMESPACES:
            raise errors.APIError(
                403,
                "Forbidden",
                f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                name=name,
                kind="namespaces",
            )
        return await super().delete(
            namespace,
            name,
            uid_precondition=uid_precondition,
            version_precondition=version_precondition,
            dry_run=dry_run,
        )


class NamespaceLifecycle:
    def __init__(self, resource: ResourceType, storage: Storage) -> None:
        self.store = NamespaceStore(resource, storage, strategy=NamespaceStrategy())
        self.contents: list[Store] = []
        self._controller: asyncio.Task[None] | None = None
        self._finalizing: dict[str, asyncio.Task[None]] = {}

    async def bootstrap(self) -> None:
        for name in DEFAULT_NAMESPACES:
            try:
                await self.store.create(
                    None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
                )
            except errors.APIError as error:
                if error.reason != "AlreadyExists":
                    raise

    async def require_active(self, namespace: str, resource: ResourceType, name: str) -> None:
        """404 for a missing namespace, 403 for a terminating one, as kube's NamespaceLifecycle admission.

        Like that admission plugin, it looks in the cache first (no storage round trip per create) and reads
        storage only when the cache does not have the namespace.
        """
        cache = self.store.cache
        cached = cache.objects.get(self.store.resource.key(None, namespace)) if cache else None
        current = (
            cache.rendered(cached, self.store.decode)[0]
            if cache is not None and cached is not None
            else await self.store.get(None, namespace)
        )
        if current["metadata"].get("deletionTimestamp"):
            raise errors.APIError(
                403,
                "Forbidden",
                f'{resource.group_resource} "{name}" is forbidden: unable to create new content in namespace '
                f"{namespace} because it is being terminated",
                name=name,
                group=resource.group,
                kind=resource.plural,
            )

    # -- the namespace controller -------------------------------------------------------------------

    def start(self, contents: list[Store]) -> None:
        """Watch namespaces; finalize every one that is (or becomes) marked for deletion."""
        self.contents = [store for store in contents if store.resource.namespaced]
        self._controller = asyncio.create_task(self._run())

    async def stop(self) -> None:
        tasks = [t for t in (self._controller, *self._finalizing.values()) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        """List, then watch from the list's revision, and start over whenever the watch ends (as an
        informer does): the watch cache ends its watchers when it restarts, and a storage watch can fail."""
        while True:
            try:
                page = await self.store.list(None, ListOptions())
                for namespace in page.items:
                    self._consider(namespace)
                async for event in self.store.watch(None, page.revision, None):
                    if event.type != "DELETED":
                        self._consider(event.object)
            except (errors.APIError, StorageError) as error:
                log.warning("the namespace controller lists again after: %s", error)
            await asyncio.sleep(RETRY_SECONDS)

    def _consider(self, namespace: dict[str, object]) -> None:
        metadata = namespace["metadata"]
        assert isinstance(metadata, dict)
        name = str(metadata["name"])
        if metadata.get("deletionTimestamp") and name not in self._finalizing:
            self._finalizing[name] = asyncio.create_task(self._finalize(name))

    async def _finalize(self, namespace: str) -> None:
        try:
            while await self._delete_contents(namespace):
                await asyncio.sleep(
                    RETRY_SECONDS
                )  # objects with finalizers are waiting for their owners

            def clear_finalizer(current: dict[str, object]) -> dict[str, object]:
                spec = current.setdefault("spec", {})
                assert isinstance(spec, dict)
                spec["finalizers"] = [f for f in spec.get("finalizers") or [] if f != FINALIZER]
                return current

            await self.store.update(None, namespace, clear_finalizer)
        except errors.APIError as error:
            if error.code != 404:
                log.warning("finalizing namespace %s: %s", namespace, error)
        finally:
            self._finalizing.pop(namespace, None)

    async def _delete_contents(self, namespace: str) -> int:
        """Delete everything in the namespace; returns how many objects are still there."""
        remaining = 0
        for store in self.contents:
            for obj in (await store.list(namespace, ListOptions())).items:
                try:
                    _, gone = await store.delete(namespace, obj["metadata"]["name"])
                except errors.APIError as error:
                    if error.code == 404:
                        continue
                    raise
                remaining += 0 if gone else 1
        return remaining
