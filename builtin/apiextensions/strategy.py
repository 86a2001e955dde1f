"""The CustomResourceDefinition strategy (kube's pkg/registry/customresourcedefinition strategy.go and
etcd.go): kube's defaults, the rules `apiforge generate` applies to a CRD file (judge.py), the fields an
update may not change, and the customresourcecleanup finalizer a delete adds, so that the custom resources
go before their definition does."""

from __future__ import annotations

from typing import Any, ClassVar

from apiserver.machinery.objects import Object
from apiserver.registry.strategy import Strategy
from apiserver.schema import Cause, causes
from builtin.apiextensions.judge import judge
from builtin.apiextensions.naming import requested_names
from generator.api_approval import ANNOTATION, ApprovalState, approval_state

__all__ = ["FINALIZER", "CustomResourceDefinitionStrategy"]

FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


def _set_defaults(crd: Object) -> None:
    """kube's SetDefaults_CustomResourceDefinition(Spec): singular, listKind, conversion strategy None."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    if isinstance(spec.get("names"), dict) and isinstance(spec["names"].get("kind"), str):
        defaulted = requested_names(crd)
        spec["names"].setdefault("singular", defaulted["singular"])
        spec["names"].setdefault("listKind", defaulted["listKind"])
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}


def _immutable(field: str, new: Any, old: Any) -> list[Cause]:
    return [] if new == old else [causes.invalid(field, new, "field is immutable")]


def _initial_status(crd: Object) -> dict[str, Any]:
    """kube's PrepareForCreate: a new status holding only the storage version in storedVersions (the
    controllers fill in the rest); serialized, as by kube, with empty acceptedNames and null conditions, so
    that the create's answer already has the status clients read (the `kubernetes` client's typed CRD)."""
    versions = (crd.get("spec") or {}).get("versions")
    storage = [
        v["name"]
        for v in (versions if isinstance(versions, list) else [])
        if isinstance(v, dict) and v.get("storage") is True and isinstance(v.get("name"), str)
    ]
    return {
        "conditions": None,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": storage[:1],
    }


APPROVAL_FIELD = f"metadata.annotations[{ANNOTATION}]"


def _approval_unchanged(obj: Object, old: Object) -> bool:
    def state(crd: Object) -> ApprovalState:
        return approval_state((crd.get("metadata") or {}).get("annotations"))

    return state(obj) == state(old)


class CustomResourceDefinitionStrategy(Strategy):
    """What kube does to a CRD beyond its schema."""

    sets_generation: ClassVar[bool | None] = True
    """kube's CRD strategy keeps metadata.generation (the controller serves each generation once)."""

    def default(self, obj: Object) -> None:
        _set_defaults(obj)

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = _initial_status(obj)

    def validate(self, obj: Object) -> list[Cause]:
        return judge(obj)[1]

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
        found = judge(obj)[1]
        if _approval_unchanged(obj, old):
            # kube's validateAPIApproval: an update that leaves the approval state as it was never fails on
            # it (a controller updating the spec of a CRD stored before the rule)
            found = [c for c in found if c.field != APPROVAL_FIELD]
        # kube: spec.scope is immutable once a version has been stored; the group is the name's suffix
        found += _immutable("spec.scope", spec.get("scope"), old_spec.get("scope"))
        served = {v.get("name") for v in spec.get("versions") or [] if isinstance(v, dict)}
        stored = (obj.get("status") or {}).get("storedVersions") or []
        for index, version in enumerate(stored):
            if version not in served:
                found.append(
                    causes.invalid(
                        f"status.storedVersions[{index}]", version, "must appear in spec.versions"
                    )
                )
        return found

    def finalized_later(self, obj: Object) -> bool:
        # the first delete marks the CRD and adds the cleanup finalizer (kube's REST.Delete)
        return not (obj.get("metadata") or {}).get("deletionTimestamp")

    def prepare_for_deletion(self, obj: Object) -> None:
        finalizers = obj["metadata"].setdefault("finalizers", [])
        if FINALIZER not in finalizers:
            finalizers.append(FINALIZER)
