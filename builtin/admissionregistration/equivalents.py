"""The resource and version a webhook or policy sees a write in, and the other names of the same objects
(kube's EquivalentResourceMapper): every served version of the written resource, and of each resource that
stores the same objects (events.k8s.io events are core events under another group). Under ``matchPolicy:
Equivalent`` a rule naming any of them selects the write, and the object is converted to the one matched."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from apiserver.machinery.convert import deep_copy
from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import ResourceType, VersionType


@dataclass(frozen=True, slots=True)
class Matched:
    """A resource in one of its versions: what a rule matched (kube's matched GroupVersionResource and
    GroupVersionKind)."""

    resource: ResourceType
    version: VersionType

    def view(
        self,
        obj: Object | None,
        source: ResourceType,
        version: VersionType | None,
        copy: bool = True,
    ) -> Object | None:
        """``obj`` (of ``source``, in ``version``, or its internal form when None) in this resource and
        version: a copy the caller may change, or (``copy`` False, for readers only) perhaps ``obj``."""
        if obj is None:
            return None
        obj = deep_copy(obj) if copy else obj
        internal = obj if version is None else version.to_internal(obj)
        if source is not self.resource:  # another group's view of the same objects
            internal = _internal_of(self.resource, _shared(source, internal))
        return self.version.from_internal(internal)

    def back(self, obj: Object, target: ResourceType, version: VersionType) -> Object:
        """``obj`` (in this resource and version) in ``target``'s ``version``."""
        internal = self.version.to_internal(obj)
        if target is not self.resource:
            internal = _internal_of(target, _shared(self.resource, internal))
        return version.from_internal(internal)


def _storage_key(resource: ResourceType) -> tuple[str, str]:
    return resource.stored_as or (resource.group, resource.plural)


def _shared(resource: ResourceType, internal: Object) -> Object:
    """The internal form of ``resource`` as the stored form of the resource that stores its objects."""
    return internal if resource.stored_as else resource.storage_version.from_internal(internal)


def _internal_of(resource: ResourceType, shared: Object) -> Object:
    return shared if resource.stored_as else resource.storage_version.to_internal(shared)


def equivalents(resource: ResourceType, known: Iterable[ResourceType]) -> list[Matched]:
    """The written resource's other served versions first, then every served version of the resources
    that store the same objects (``known``: every resource the server has)."""
    found = [Matched(resource, v) for v in resource.served_versions]
    key = _storage_key(resource)
    for other in known:
        if _storage_key(other) == key and (other.group, other.plural) != (
            resource.group,
            resource.plural,
        ):
            found.extend(Matched(other, v) for v in other.served_versions)
    return found
