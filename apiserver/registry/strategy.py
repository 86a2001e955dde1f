"""The per-kind seam of the generic Store (kube's RESTCreateStrategy / RESTUpdateStrategy /
RESTDeleteStrategy): what a kind does differently at fixed points of a write. The default does nothing, which
is right for every kind whose rules its schema says; built-in kinds whose rules a schema cannot express name
a subclass in their definition (``strategy: module:Class``), and the generated REST bindings wire it in.

Every hook runs on the internal object, after the generic preparation and before validation's verdict is
stored; a hook may change the object it is given and nothing else.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, ClassVar

from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.registry.deletion import GarbageCollectionPolicy
from apiserver.schema import Cause
from apiserver.schema.objectmeta import name_is_dns_subdomain

if TYPE_CHECKING:
    from apiserver.admission.interface import Attributes

Finish = Callable[[bool], Awaitable[None]]
"""kube's FinishFunc: told whether the write it began was stored (True) or not (False: undo what began)."""


async def finish_nothing(stored: bool) -> None:
    """The FinishFunc of a write that began nothing outside the object."""


class Strategy:
    """No-op by default: generated and custom kinds need nothing beyond their schema."""

    delete_returns_object: ClassVar[bool | None] = None
    """What a finished DELETE answers: the object (True), a Status (False), or kube's default for the kind
    (None: a Status for built-in kinds, the object for custom resources)."""

    garbage_collection_policy: ClassVar[GarbageCollectionPolicy] = (
        GarbageCollectionPolicy.DELETE_DEPENDENTS
    )
    """What a DELETE naming no propagation does to the object's dependents (kube's
    DefaultGarbageCollectionPolicy): deleted in the background unless the kind says otherwise."""

    name_rule = staticmethod(name_is_dns_subdomain)
    """kube's ValidateNameFunc of the kind: what is wrong with ``name`` (or, with ``prefix``, a
    generateName). A lowercase RFC 1123 subdomain unless the kind says otherwise (the RBAC kinds take
    any path segment, such as `system:discovery`); this very function, which ObjectMeta's validation
    checks without its calls for a name that passed before."""

    sets_generation: ClassVar[bool | None] = None
    """Whether the server keeps ``metadata.generation`` (1 on create, +1 on each change of the spec): kube's
    strategies set it per kind, the custom-resource strategy always and the built-in kinds' only for
    workloads (None: kube's default for the kind, custom resources yes, built-ins no)."""

    field_labels: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    """Fields a field selector may name beyond the definition's ``selectableFields``, each with the fields of
    the stored object that give its value, the first non-empty one (kube's field label conversion and the
    strategy's GetAttrs: a view stored as another resource, or a field derived from several)."""

    update_subresources: ClassVar[tuple[str, ...]] = ()
    """Subresources besides status and scale that take a PUT of the whole object and store what
    ``prepare_for_subresource_update`` keeps of it (kube's namespaces/finalize, the only way to change a
    namespace's ``spec.finalizers``); discovery lists them with the verb ``update``."""

    def __init__(self, server: object = None) -> None:
        """Strategies are built once per server, given the server's config (see ``rest.StrategyFactory``),
        which this default, as every kind that needs nothing of the server, ignores; a kind that does (its
        storage, the authorizer) takes it as the narrow Protocol of what it uses."""

    def default(self, obj: Object) -> None:
        """kube's scheme defaulting (``SetDefaults_<Kind>``) and the conversion to the internal version, which
        kube runs as it decodes a body: on every write's object as written, before the mutating admission and
        before field ownership is recorded, so that the writer owns what they set (a Service's
        ``internalTrafficPolicy``, a namespace's name label). It sees the body before any validation, so it
        must leave a value of the wrong type as it is for validation to refuse."""

    def prepare_for_create(self, obj: Object) -> None:
        """Runs once when an object is created."""

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        """Runs on every update, with the stored object as ``old``."""

    def prepare_for_subresource_update(self, subresource: str, obj: Object, old: Object) -> None:
        """Runs instead of ``prepare_for_update`` on an update through one of ``update_subresources``."""

    def validate(self, obj: Object) -> list[Cause]:
        """kube's RESTCreateStrategy.Validate: the kind's own rules on the object about to be created, after
        ``prepare_for_create``; any cause makes the write a 422 Invalid."""
        return []

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        """kube's RESTUpdateStrategy.ValidateUpdate: the kind's own rules on the object about to replace
        ``old``, after ``prepare_for_update``; any cause makes the write a 422 Invalid."""
        return []

    async def begin_create(self, obj: Object, dry_run: bool) -> Finish:
        """kube's Store.BeginCreate: runs after ``prepare_for_create`` and before validation, to take what
        the object needs outside itself (a Service's ClusterIP and node ports); the FinishFunc it returns
        gives it back when the create is not stored. A dry run only checks."""
        return finish_nothing

    async def begin_update(self, obj: Object, old: Object, dry_run: bool) -> Finish:
        """kube's Store.BeginUpdate: as ``begin_create``, for an update that passed validation."""
        return finish_nothing

    async def after_delete(self, obj: Object) -> None:
        """kube's Store.AfterDelete: runs once the object is gone from storage (release what it held)."""

    def canonicalize(self, obj: Object) -> None:
        """kube's Canonicalize: runs after validation passed, on create (once the name is final, generated
        or not) and on every update, to put the object in its normal form."""

    def finalized_later(self, obj: Object) -> bool:
        """Whether deletion must wait for something besides ``metadata.finalizers``."""
        return False

    def prepare_for_deletion(self, obj: Object) -> None:
        """Runs when a delete only marks the object (deletionTimestamp set) instead of removing it."""

    async def answer(self, obj: Object, attributes: Attributes) -> Object:
        """The response to a create of a kind that is answered, not stored (the access reviews)."""
        raise errors.method_not_allowed()


def overrides(strategy: Strategy, hook: str) -> bool:
    """Whether ``strategy`` does something of its own at ``hook`` (else the default's nothing, which a
    Store need not call on every write)."""
    return getattr(type(strategy), hook) is not getattr(Strategy, hook)
