"""What is routed for a resource, the one source of truth of both discovery's ``verbs`` and the handler's
refusals, as kube's API installer registers routes from what a storage implements
(k8s.io/apiserver/pkg/endpoints/installer.go): a verb that is not routed is not listed, and its method
answers 405 MethodNotAllowed on a path that serves other methods, 404 on a path that serves none (a
create-only resource has no item path)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from apiserver.machinery import errors
from apiserver.machinery.scheme import ResourceType, VersionType
from apiserver.registry.rest import RESTOptions

ITEM_VERBS = {"GET": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
"""The verb of each method on an object's path (and on a subresource's, with POST a create)."""
COLLECTION_VERBS = {"GET": "list", "POST": "create", "DELETE": "deletecollection"}
"""The verb of each method on the collection's path (GET with ``watch`` is a watch)."""
_SUBRESOURCE_VERBS = {**ITEM_VERBS, "POST": "create"}
UPDATE_VERBS = ("get", "patch", "update")
"""The verbs of the status and scale subresources (kube's StatusREST and ScaleREST)."""


@dataclass(frozen=True, slots=True)
class Subresource:
    """A subresource as routed and listed: its verbs, and the kind its bodies are (group, version, kind),
    or None when they are the resource's own."""

    name: str
    verbs: tuple[str, ...]
    body: tuple[str, str, str] | None = None


def subresources(
    resource: ResourceType, version: VersionType, options: RESTOptions
) -> list[Subresource]:
    """The subresources ``version`` of ``resource`` serves, in discovery's order: status and scale as its
    versions declare them, the create and update subresources as its storage wiring (``options``) does.
    kube's own kinds list them by name (APIInstaller.Install registers its paths sorted, k8s.io/apiserver/
    pkg/endpoints/installer.go); custom resources status, then scale (apiextensions' DiscoveryController)."""
    routed = []
    if version.status_subresource:
        routed.append(Subresource("status", UPDATE_VERBS))
    if version.scale is not None:
        routed.append(Subresource("scale", UPDATE_VERBS, ("autoscaling", "v1", "Scale")))
    routed.extend(
        Subresource(sub.name, ("create",), (sub.group, sub.version, sub.kind))
        for sub in options.create_subresources
    )
    routed.extend(Subresource(name, ("update",)) for name in options.update_subresources)
    if resource.builtin:
        routed.sort(key=lambda sub: sub.name)
    return routed


def subresource_verb(
    resource: ResourceType, version: VersionType, options: RESTOptions, name: str, method: str
) -> str:
    """The verb of ``method`` on the subresource ``name``: 404 when it is not served, 405 when the
    method is not routed there."""
    routed = next(
        (sub for sub in subresources(resource, version, options) if sub.name == name), None
    )
    if routed is None:
        raise errors.resource_not_found()
    verb = _SUBRESOURCE_VERBS.get(method, "")
    if verb not in routed.verbs:
        raise errors.method_not_allowed()
    return verb


def check_routed(resource: ResourceType, named: bool, method: str, watch: bool) -> None:
    """Refuse a method that ``resource``'s verbs do not route on the collection (``named`` False) or an
    object's path: 405, or 404 when the path serves no method at all."""
    refusal = _routing_refusal(resource.verbs, named, method, watch)
    if refusal is not None:
        raise refusal()


@functools.lru_cache(maxsize=512)
def _routing_refusal(
    verbs: tuple[str, ...], named: bool, method: str, watch: bool
) -> Callable[[], errors.APIError] | None:
    """What refuses ``method`` where ``verbs`` are routed (None: nothing), found once per combination: every
    request asks, and kinds share a few sets of verbs."""
    table = ITEM_VERBS if named else COLLECTION_VERBS
    served = {verb for verb in table.values() if verb in verbs}
    if not named and "watch" in verbs:
        served.add("list")  # the collection's GET serves watches
    if not served:
        return errors.resource_not_found
    verb = table.get(method, "")
    if not named and verb == "list" and watch:
        verb = "watch"
    if verb not in verbs:
        return errors.method_not_allowed
    return None
