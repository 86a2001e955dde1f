"""The routing of every request under a resource path to its verb's handler (kube's installer.go registers a
handler per verb and subresource). Generic: all per-kind behaviour comes from the Scheme's ResourceType."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import NamedTuple

from apiserver.endpoints.decode import Target
from apiserver.endpoints.handlers.create import BoundCreater, create, create_subresource
from apiserver.endpoints.handlers.delete import delete, delete_collection
from apiserver.endpoints.handlers.get import get, list_objects, watch
from apiserver.endpoints.handlers.patch import patch
from apiserver.endpoints.handlers.response import check_acceptable, send_object
from apiserver.endpoints.handlers.scale import scale
from apiserver.endpoints.handlers.update import update
from apiserver.endpoints.http import Request, Send
from apiserver.endpoints.routes import check_routed, subresource_verb
from apiserver.endpoints.routing import ResourcePath
from apiserver.machinery import errors
from apiserver.machinery.scheme import Scheme
from apiserver.metrics.registry import Metrics
from apiserver.registry.rest import DEFAULT_OPTIONS, RESTOptions
from apiserver.registry.store import Store


class Resolved(NamedTuple):
    """A resource path as the handlers serve it: its resource's wiring, store and target."""

    path: ResourcePath
    options: RESTOptions
    store: Store
    target: Target


class ResourceHandler:
    """Answers every request under a resource path."""

    def __init__(
        self,
        scheme: Scheme,
        stores: dict[tuple[str, str], Store],
        creaters: Mapping[tuple[str, str, str], BoundCreater] | None = None,
        metrics: Metrics | None = None,
        rest: Mapping[tuple[str, str], RESTOptions] | None = None,
    ) -> None:
        self.scheme = scheme
        self.stores = stores
        self.rest = rest if rest is not None else {}
        """Each resource's storage wiring, where it has one (what subresources it serves)."""
        self.creaters = creaters or {}
        """The create subresources by (group, plural, subresource)."""
        self.metrics = metrics if metrics is not None else Metrics()

    def resolve(self, path: ResourcePath) -> Resolved:
        """What a resource path addresses (404 when nothing here serves it): the same for every request
        to the path while the served resources stay the same, so the server keeps it per path."""
        served = self.scheme.served(path.group, path.version, path.plural)
        if served is None:
            raise errors.resource_not_found()
        resource, version = served
        if path.namespace is not None and not resource.namespaced:
            raise errors.resource_not_found()
        namespace = path.namespace if resource.namespaced else None
        options = self.rest.get((resource.group, resource.plural), DEFAULT_OPTIONS)
        store = self.stores[(resource.group, resource.plural)]
        return Resolved(path, options, store, Target(resource, version, namespace, path.name))

    def handle(self, request: Request, send: Send, resolved: Resolved) -> Awaitable[None]:
        """The verb's handler, called once the request is routed and acceptable: a plain call handing back
        what to await (the server's ``serve_local`` awaits it where errors are answered)."""
        path, store, target = resolved.path, resolved.store, resolved.target
        resource, version = target.resource, target.version
        if path.subresource:
            subresource_verb(resource, version, resolved.options, path.subresource, request.method)
        else:
            check_routed(resource, bool(path.name), request.method, request.flag("watch"))
        check_acceptable(request, target)
        if version.deprecated:
            request.warnings.append(
                version.deprecation_warning
                or f"{resource.api_version(version.name)} {resource.kind} is deprecated"
            )
        method = request.method
        if path.subresource:
            return self._subresource(request, send, store, target, path.subresource)
        if not path.name:
            if method == "GET":
                if request.flag("watch"):
                    return watch(request, send, store, target, self.metrics)
                return list_objects(request, send, store, target)
            if method == "POST":
                return create(request, send, store, target)
            if method == "DELETE":
                # kube serves deletecollection only where create is: on the namespaced path of a
                # namespaced kind, and not behind a trailing slash (both 405 there)
                if (resource.namespaced and target.namespace is None) or request.path.endswith("/"):
                    raise errors.method_not_allowed()
                return delete_collection(request, send, store, target)
            raise errors.method_not_allowed()
        if method == "GET":
            return get(request, send, store, target)
        if method == "PUT":
            return update(request, send, store, target)
        if method == "PATCH":
            return patch(request, send, store, target, "")
        if method == "DELETE":
            return delete(request, send, store, target)
        raise errors.method_not_allowed()

    async def _subresource(
        self, request: Request, send: Send, store: Store, target: Target, name: str
    ) -> None:
        """A subresource's method, routed (routes.subresource_verb has refused the others)."""
        creater = self.creaters.get((target.resource.group, target.resource.plural, name))
        if creater is not None:
            await create_subresource(request, send, target, name, creater)
        elif name == "scale":
            await scale(request, send, store, target)
        elif request.method == "GET":  # the status subresource, the only one with a GET
            obj = await store.get(target.namespace, target.name)
            await send_object(request, send, 200, obj, target)
        elif request.method == "PUT":  # status, or one of the strategy's update_subresources
            await update(request, send, store, target, name)
        else:
            await patch(request, send, store, target, "status")
