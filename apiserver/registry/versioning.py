"""Conversion out of the hub: an internal object as the version a client speaks (reads, and the stored object
that an update is judged against in the version of the request)."""

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
