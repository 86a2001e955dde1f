"""The checked, normalized form of one resource definition: what `load` produces and `plan` consumes.

Both input formats (apiforge's compact YAML and an apiextensions.k8s.io/v1 CustomResourceDefinition) become this
one shape, so everything after loading has a single code path. Schemas are kept as plain OpenAPI v3 dicts in
CRD form (``openAPIV3Schema`` of the whole object, ``x-kubernetes-*`` extensions included), because the runtime
judges a generated kind and a CRD posted at run time by the same schema rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

# Printer columns and scale paths mean the same to the compiler and to the server: one type for both.
from apiserver.machinery.scheme import PrinterColumn
from apiserver.machinery.scheme import ScaleSpec as ScaleSubresource

__all__ = [
    "AdmissionHook",
    "Conversion",
    "CreateSubresource",
    "Definition",
    "DefinitionError",
    "DefinitionErrors",
    "FieldMove",
    "JsonPath",
    "PrinterColumn",
    "ProtobufTag",
    "ScaleSubresource",
    "ServerParts",
    "Version",
]

JsonPath = tuple[str | int, ...]
"""A field path inside a definition file, e.g. ("versions", "v1", "schema", "spec", "replicas")."""


class DefinitionError(Exception):
    """A definition is invalid; says where (file, line, field path) and what was expected."""

    def __init__(
        self, file: Path, line: int, field_path: str, message: str, *, cause_line: int | None = None
    ) -> None:
        self.file = file
        self.line = line
        self.field_path = field_path
        self.message = message
        self.cause_line = cause_line
        """The line of the error this one follows from (a misspelt keyword that made a field's mapping an
        object explains the errors on its other keys): reported right after that one, whatever its line."""
        super().__init__(str(self))

    def order(self) -> tuple[str, int, bool, int]:
        """Errors are reported by file and line, each consequence right after its cause: a user reads the
        most useful error first."""
        if self.cause_line is None:
            return str(self.file), self.line, False, self.line
        return str(self.file), self.cause_line, True, self.line

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        return (
            f"{where}: {self.field_path}: {self.message}"
            if self.field_path
            else f"{where}: {self.message}"
        )


class DefinitionErrors(Exception):
    """Every error found in one `make generate` run, reported together so a user fixes them in one pass."""

    def __init__(self, errors: list[DefinitionError]) -> None:
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))


@dataclass(frozen=True)
class FieldMove:
    """One declared conversion step: ``version_path`` in this version is ``hub_path`` in the hub version."""

    version_path: tuple[str, ...]
    hub_path: tuple[str, ...]


@dataclass(frozen=True)
class Conversion:
    """How a non-hub version converts to and from the hub: declared moves, then optional Python hooks.

    Hooks are "package.module:function" references taking and returning the object dict. ``to_hub`` runs after
    the moves (version → hub); ``from_hub`` runs before the inverse moves (hub → version).
    """

    moves: tuple[FieldMove, ...] = ()
    to_hub_hook: str = ""
    from_hub_hook: str = ""
    prune: bool = False
    """A CRD's conversion strategy None, as kube does it: only the apiVersion changes, and the target
    version's schema prunes what it does not declare (so conversion need not be total)."""


@dataclass(frozen=True)
class ProtobufTag:
    """A schema node's protobuf declaration (docs/definitions.md, "Protobuf field numbers").

    ``number`` is the field's number in its object's message (0 for a node that only says which shared message
    it stands for, such as the items of ``[]Condition``). ``pointer`` says the Go field is a pointer: written and
    kept when set, even to its zero value. ``omit_empty`` is the JSON tag's omitempty (None: omitted when zero
    unless the property is required, kube-openapi's rule). ``message`` names a shared meta/v1 message
    (``Condition``, ``Quantity``, ``MicroTime``) where the JSON schema alone cannot tell.
    """

    number: int = 0
    pointer: bool = False
    omit_empty: bool | None = None
    message: str = ""


@dataclass(frozen=True)
class Version:
    """One served or stored version of a resource."""

    name: str
    served: bool
    storage: bool
    schema: dict[str, Any]
    deprecated: bool = False
    deprecation_warning: str = ""
    status_subresource: bool = False
    scale_subresource: ScaleSubresource | None = None
    printer_columns: tuple[PrinterColumn, ...] = ()
    selectable_fields: tuple[str, ...] = ()
    conversion: Conversion = field(default_factory=Conversion)
    protobuf: dict[JsonPath, ProtobufTag] = field(default_factory=dict)
    """Protobuf declarations by schema node path (("properties", "spec"), ...); empty: no protobuf codec."""


@dataclass(frozen=True)
class CreateSubresource:
    """A subresource that takes a POST of another kind and answers with it (kube's rest.NamedCreater:
    ``serviceaccounts/token`` takes and answers an authentication.k8s.io/v1 TokenRequest): its ``name``, the
    body's ``group``, ``version`` and ``kind`` (a definition of its own), and the ``handler`` class that
    answers it ("package.module:Name")."""

    name: str
    group: str
    version: str
    kind: str
    handler: str


@dataclass(frozen=True)
class StoredAs:
    """``storedAs: {group: core, version: v1, resource: events}``: the resource, and its storage version, that
    holds this kind's objects."""

    group: str  # "" for core
    version: str
    resource: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


@dataclass(frozen=True)
class AdmissionHook:
    """An in-process admission hook (``admissionHooks:``): a "package.module:function" that judges the
    kind's writes with a webhook's attributes. ``settings`` is the entry as the runtime takes it (name,
    type, rules, failurePolicy...), as sorted JSON (a frozen, comparable value)."""

    name: str
    function: str
    settings: str


@dataclass(frozen=True)
class ServerParts:
    """What a built-in kind brings to the server beyond its schema, as kube keeps it in
    pkg/registry/<group>/<kind>: Python classes named by "package.module:Name" references (a strategy, admission
    plugins, controllers), the verbs it serves, and whether it is a Go-typed built-in or stored at all."""

    builtin: bool = False
    stored: bool = True
    verbs: tuple[str, ...] = ()  # () = every verb
    strategy: str = ""
    admission: tuple[str, ...] = ()
    controllers: tuple[str, ...] = ()
    authenticators: tuple[str, ...] = ()
    """Token authenticators the kind brings (the service-account token authenticator)."""
    standalone: bool = True
    """False for a kind that is only another resource's subresource body (TokenRequest): registered for
    decoding, validation and encoding, but served at no path of its own and absent from discovery."""
    create_subresources: tuple[CreateSubresource, ...] = ()
    openapi_types: tuple[tuple[str, str], ...] = ()
    """Sub-schemas published as named OpenAPI components, as kube-openapi publishes Go structs: (field path,
    type name) pairs such as ("spec.ports[]", "ServicePort")."""
    go_types: tuple[tuple[str, str], ...] = ()
    """The Go types of a built-in kind's fields that are named types of a string (``spec.type``,
    ``ServiceType``): the Go decoder's errors name them, kube-openapi does not publish them."""
    admission_hooks: tuple[AdmissionHook, ...] = ()
    stored_as: StoredAs | None = None
    """Another resource whose objects these are (kube's storage resource: events.k8s.io events are core
    events): its storage version is this kind's hub, reached through the toHub/fromHub hooks."""

    @property
    def has_parts(self) -> bool:
        """Whether the kind brings anything to the server itself (not to its own storage): admission
        plugins or hooks, controllers, token authenticators."""
        return bool(
            self.admission or self.admission_hooks or self.controllers or self.authenticators
        )


@dataclass(frozen=True)
class Definition:
    """One resource, fully normalized: every derived name filled in, versions in declaration order."""

    source: Path
    group: str
    kind: str
    plural: str
    singular: str
    list_kind: str
    scope: Literal["Namespaced", "Cluster"]
    versions: tuple[Version, ...]
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    server: ServerParts = field(default_factory=lambda: ServerParts())
    custom_resource: bool = False
    """Read from a CustomResourceDefinition: served as kube serves custom resources, whose handler refuses
    strategic merge patch (a compact-format kind is compiled like a built-in type and takes it)."""
    conversion_webhook: dict[str, Any] | None = None
    """A CRD whose ``conversion.strategy`` is Webhook: its ``conversion.webhook`` (``clientConfig``,
    ``conversionReviewVersions``). Its versions then convert by calling that webhook, generated or not."""

    @property
    def storage_version(self) -> Version:
        return next(v for v in self.versions if v.storage)

    @property
    def namespaced(self) -> bool:
        return self.scope == "Namespaced"
