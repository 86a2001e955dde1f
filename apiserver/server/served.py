"""The resources a running server serves, changeable while it serves (kube's apiextensions server adds and
removes CRD handlers live; the aggregator adds remote group-versions).

One seam: ``install`` and ``uninstall`` change the Scheme and the Stores (with their watch caches) together,
``publish_openapi`` adds or replaces one owner's OpenAPI documents, and every change is announced to the
``listeners`` (discovery is rebuilt by one). Routing reads the Scheme and the Stores on every request, so a
resource is served from the moment ``install`` returns and not a moment before its Store is ready.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

from apiserver.admission.chain import AdmissionChain
from apiserver.endpoints.openapi import OpenAPIDocuments
from apiserver.machinery.scheme import ResourceType, Scheme
from apiserver.registry.cacher import WatchCache
from apiserver.registry.keys import key_prefix
from apiserver.registry.rest import DEFAULT_OPTIONS, RESTOptions
from apiserver.registry.store import Store
from apiserver.server.compactor import Compactor
from apiserver.storage.interface import Storage

log = logging.getLogger(__name__)

Listener = Callable[[], None]


class Wiring(Protocol):
    """What installing a resource uses of the server's config, which it also hands the resource's strategy
    maker (``RESTOptions.new_strategy``): the storage and the Stores by (group, plural)."""

    @property
    def storage(self) -> Storage: ...

    @property
    def stores(self) -> dict[tuple[str, str], Store]: ...


class ServedResources:
    """The live registry of served resources and OpenAPI documents, with change listeners."""

    def __init__(
        self,
        scheme: Scheme,
        context: Wiring,
        admission: AdmissionChain,
        compactor: Compactor,
        openapi: OpenAPIDocuments,
        rest: dict[tuple[str, str], RESTOptions] | None = None,
    ) -> None:
        self.scheme = scheme
        self.context = context
        self.admission = admission
        self.compactor = compactor
        self.openapi = openapi
        self.rest = rest if rest is not None else {}
        """Each resource's storage wiring, shared with routing and discovery."""
        self.listeners: list[Listener] = []
        self.installed: set[tuple[str, str]] = set()
        """The (group, plural) of resources installed here; the generated ones cannot be replaced."""
        self._batching = 0
        self._pending = False

    def _changed(self) -> None:
        if self._batching:
            self._pending = True
            return
        for listener in self.listeners:
            listener()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Announce the changes made inside once, at the end: fifty CRDs applied together rebuild
        discovery once rather than twice each (a rebuild encodes every group's documents)."""
        self._batching += 1
        try:
            yield
        finally:
            self._batching -= 1
            if not self._batching and self._pending:
                self._pending = False
                self._changed()

    async def install(self, resource: ResourceType, options: RESTOptions = DEFAULT_OPTIONS) -> None:
        """Serve ``resource`` (or its new shape, when one of its group and plural is served) stored as
        ``options`` say: the Store and its watch cache first, then the Scheme, so that no request finds the
        kind without its Store."""
        key = (resource.group, resource.plural)
        if self.scheme.resource(*key) is not None and key not in self.installed:
            raise ValueError(f"{resource.group_resource} is served already")
        current = self.context.stores.get(key)
        if current is not None and key in self.installed:
            # a changed definition: the same stored objects, so the running watch cache is kept
            current.reshape(resource)
            self.scheme.replace(resource)
            self._changed()
            return
        strategy = options.new_strategy(self.context)
        self.rest[key] = options
        store = Store(resource, self.context.storage, strategy, admission=self.admission)
        if resource.persisted:
            store.cache = WatchCache(self.context.storage, key_prefix(resource))
            await store.cache.start()
            self.compactor.listeners.append(store.cache.forget_before)
        self.context.stores[key] = store
        self.scheme.add(resource)
        self.installed.add(key)
        self._changed()

    async def uninstall(self, group: str, plural: str) -> None:
        """Stop serving a resource: out of the Scheme first (requests get 404), then its Store goes."""
        if (group, plural) not in self.installed:
            return
        self.installed.discard((group, plural))
        self.scheme.remove(group, plural)
        store = self.context.stores.pop((group, plural), None)
        self.rest.pop((group, plural), None)
        self._changed()
        if store is not None and store.cache is not None:
            self.compactor.listeners.remove(store.cache.forget_before)
            await store.cache.stop()

    def publish_openapi(
        self, owner: str, v3: Mapping[str, dict[str, Any]], v2: Mapping[str, Any]
    ) -> None:
        """Replace what ``owner`` contributes to /openapi/v3 (documents by path, ``apis/<g>/<v>``) and
        /openapi/v2 (a Swagger document whose paths and definitions join the served one)."""
        self.openapi.publish(owner, v3, v2)
        self._changed()
