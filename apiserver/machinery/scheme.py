"""The Scheme: the kinds the server knows, by name, with their versions, schemas and conversions (kube's
runtime.Scheme), and nothing of how they are stored or served.

Generated code and CustomResourceDefinitions posted at run time describe each resource as a ``ResourceType``
and register it here; discovery, OpenAPI, routing and the generic registry read its types from it, while the
storage wiring (strategies, create subresources) comes to the registry as ``registry.rest.RESTOptions``.
Objects travel as plain dicts: a version's ``to_internal``/``from_internal`` convert between that version's
wire form and the internal (hub) form that the registry works on.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from apiserver.machinery.objects import Object

if TYPE_CHECKING:
    from apiserver.encoding.protobuf_meta import KindCodec

Converter = Callable[[Object], Object]
AsyncConverter = Callable[[list[Object], str], Awaitable[list[Object]]]
"""Objects to one apiVersion by a call out of the process (a CRD's conversion webhook): awaited, never run on
the event loop's time."""


class ServerConverter(Protocol):
    """An AsyncConverter built for one server (a generated kind's conversion webhook client): closed when the
    server stops."""

    async def __call__(self, objects: list[Object], api_version: str) -> list[Object]: ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class PrinterColumn:
    """A Table column computed from a JSONPath (CRD additionalPrinterColumns semantics), or, for a built-in
    kind whose kube printer computes what no JSONPath can (``80/TCP,443/TCP``), by the function ``cell``
    names (``package.module:name``, called with the object and the time of the request)."""

    name: str
    type: str
    json_path: str
    format: str = ""
    description: str = ""
    priority: int = 0
    cell: str = ""


@dataclass(frozen=True, slots=True)
class ScaleSpec:
    """Where the scale subresource finds replicas and the label selector, as dotted paths."""

    spec_replicas_path: str
    status_replicas_path: str
    label_selector_path: str = ""


def _identity(obj: Object) -> Object:
    return obj


@dataclass(frozen=True, slots=True)
class VersionType:
    """One version of a resource as the server sees it: schema rules and the conversion functions."""

    name: str
    served: bool
    storage: bool
    schema: dict[str, Any]
    deprecated: bool = False
    deprecation_warning: str = ""
    status_subresource: bool = False
    scale: ScaleSpec | None = None
    printer_columns: tuple[PrinterColumn, ...] = ()
    selectable_fields: tuple[str, ...] = ()
    strategic_merge_patch: bool = (
        False  # compiled kinds, as kube's built-in types; never custom resources
    )
    to_internal: Converter = _identity
    from_internal: Converter = _identity
    defaulter: Callable[[Object], None] | None = None
    validator: Callable[[Object], list[Any]] | None = None
    model_ref: str = ""
    """The version's generated pydantic model (``package.module:Name``), imported when ``model`` is first
    read: the server never reads it, and importing every group's models would cost a new process tens of
    milliseconds at start (a test fixture's first server, `apiforge serve`)."""
    protobuf: KindCodec | None = (
        None  # built-in kinds: the messages of the numbers their definition declares
    )

    @property
    def model(self) -> type | None:
        """The model ``model_ref`` names (None without one)."""
        if not self.model_ref:
            return None
        module, _, name = self.model_ref.partition(":")
        model: type = getattr(importlib.import_module(module), name)
        return model


ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ResourceType:
    """One resource (a kind with its plural) in all of its versions."""

    group: str
    kind: str
    plural: str
    singular: str
    list_kind: str
    namespaced: bool
    versions: tuple[VersionType, ...]
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    persisted: bool = True
    """False for kinds that are answered, not stored (the access reviews): no name needed."""
    builtin: bool = False
    """A kind kube-apiserver itself defines (in Go): a body may omit apiVersion/kind, a value of the wrong
    JSON type is a 400 (the Go decoder's) rather than a 422, and a finished DELETE answers with a Status."""
    standalone: bool = True
    """False for a kind that only travels as another resource's subresource body: no path, no discovery."""
    stored_as: tuple[str, str] | None = None
    """(group, plural) of another resource whose objects these are, another view of them (kube's storage
    resource: events.k8s.io events are stored once, as core events under /registry/events). The internal
    form is then that resource's storage version: every version of this one converts to and from it, and
    the registry keeps the objects under that resource's keys (registry.keys)."""
    go_types: tuple[tuple[str, str], ...] = ()
    """A built-in kind's Go struct names by field path (``spec.ports[]``, ``ServicePort``), its definition's
    ``openapiTypes``: the Go decoder's errors name them."""
    converter: AsyncConverter | None = None
    """A CRD with conversion strategy Webhook: converts between versions (the versions' ``to_internal`` and
    ``from_internal`` are then the identity); see registry.versioning.converted."""
    _by_version: dict[str, VersionType] = field(init=False, repr=False, compare=False)
    _storage: VersionType | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_version", {v.name: v for v in self.versions})
        # looked up several times by every write: found once
        object.__setattr__(self, "_storage", next((v for v in self.versions if v.storage), None))

    def version(self, name: str) -> VersionType | None:
        return self._by_version.get(name)

    @property
    def storage_version(self) -> VersionType:
        if self._storage is None:  # no version is stored: StopIteration, as ever
            return next(v for v in self.versions if v.storage)
        return self._storage

    @property
    def served_versions(self) -> tuple[VersionType, ...]:
        return tuple(v for v in self.versions if v.served)

    @property
    def group_resource(self) -> str:
        """``crontabs.stable.example.com`` (or ``namespaces`` for core), as Kubernetes names it in messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def api_version(self, version: str) -> str:
        return f"{self.group}/{version}" if self.group else version

    def wire_is_internal(self, version: VersionType) -> bool:
        """Whether ``version``'s wire form is the internal (stored) form, so stored JSON can be sent as is:
        the storage version's, unless the objects are another resource's (``stored_as``) or a conversion
        webhook converts them (stored bytes may be another version)."""
        return version.storage and self.stored_as is None and self.converter is None


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Kubernetes version ordering: GA > beta > alpha, higher numbers first, others last alphabetically."""
    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not match:
        return (3, 0, 0, version)
    major = int(match.group(1))
    stage = {"": 0, "beta": 1, "alpha": 2}[match.group(2) or ""]
    minor = int(match.group(3) or 0)
    return (stage, -major, -minor, version)


class Scheme:
    """All resources, indexed the ways the server looks them up."""

    def __init__(self) -> None:
        self._resources: dict[tuple[str, str], ResourceType] = {}
        self._kinds: set[tuple[str, str]] = set()  # (group, kind): a kind has one resource

    def add(self, resource: ResourceType) -> None:
        key = (resource.group, resource.plural)
        if key in self._resources or (resource.group, resource.kind) in self._kinds:
            raise ValueError(f"resource {resource.group_resource} registered twice")
        self._resources[key] = resource
        self._kinds.add((resource.group, resource.kind))

    def remove(self, group: str, plural: str) -> None:
        """Stop knowing a resource (a CustomResourceDefinition deleted while serving)."""
        resource = self._resources.pop((group, plural))
        self._kinds.discard((resource.group, resource.kind))

    def replace(self, resource: ResourceType) -> None:
        """A registered resource's new shape (an updated CustomResourceDefinition): same group and plural."""
        self.remove(resource.group, resource.plural)
        self.add(resource)

    def __iter__(self) -> Iterator[ResourceType]:
        return iter(sorted(self._resources.values(), key=lambda r: (r.group, r.plural)))

    def resource(self, group: str, plural: str) -> ResourceType | None:
        return self._resources.get((group, plural))

    def kind(self, group: str, kind: str) -> ResourceType | None:
        """The resource of a kind (a subresource's body is named by its kind)."""
        for resource in self._resources.values():
            if (resource.group, resource.kind) == (group, kind):
                return resource
        return None

    def served(
        self, group: str, version: str, plural: str
    ) -> tuple[ResourceType, VersionType] | None:
        resource = self._resources.get((group, plural))
        if resource is None or not resource.standalone:
            return None
        served = resource.version(version)
        if served is None or not served.served:
            return None
        return resource, served

    def groups(self) -> dict[str, list[str]]:
        """Each group's served versions, most preferred first (the core group is "")."""
        versions: dict[str, set[str]] = {}
        for resource in self._resources.values():
            for v in resource.served_versions:
                versions.setdefault(resource.group, set()).add(v.name)
        return {g: sorted(vs, key=version_priority) for g, vs in sorted(versions.items())}

    def resources_in(self, group: str, version: str) -> list[tuple[ResourceType, VersionType]]:
        found = []
        for resource in self:
            if resource.group == group and resource.standalone:
                served = resource.version(version)
                if served is not None and served.served:
                    found.append((resource, served))
        return found
