"""Conversion out of the hub: an internal object as the version a client speaks (reads, and the stored object
that an update is judged against in the version of the request). A resource with an async ``converter`` (a
CRD's conversion webhook) is converted by ``converted`` first, awaited where the objects are at hand (one
call per object, list page or batch of watch events); ``to_version`` then only sets apiVersion and kind."""

from __future__ import annotations

from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import ResourceType, VersionType


def to_version(obj: Object, resource: ResourceType, version: VersionType) -> Object:
    """An internal object in the requested version, with apiVersion and kind set.

    A non-storage version's defaults are applied on the way out too, as kube does for CRDs read from etcd.
    """
    out = version.from_internal(obj)
    if version.defaulter is not None and not version.storage:
        version.defaulter(out)
    out["apiVersion"] = resource.api_version(version.name)
    out["kind"] = resource.kind
    return out


async def converted(
    objects: list[Object], resource: ResourceType, version: VersionType
) -> list[Object]:
    """``objects`` (internal, or of any version) in ``version`` by the resource's converter, when it has one
    and they need it; as they are otherwise (``to_version`` converts them)."""
    if resource.converter is None or not objects:
        return objects
    return await resource.converter(objects, resource.api_version(version.name))


async def to_hub(obj: Object, resource: ResourceType) -> Object:
    """A written object (in its request's version) in the storage version, by the converter if any."""
    if resource.converter is None:
        return obj
    (hub,) = await converted([obj], resource, resource.storage_version)
    return hub
