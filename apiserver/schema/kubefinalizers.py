"""The extra check kube's own built-in kinds make of finalizer names: a name without a ``/`` must be one of the
standard finalizers (k8s.io/kubernetes/pkg/apis/core/validation/validation.go validateKubeFinalizerName, run by
that package's ValidateObjectMeta and ValidateObjectMetaUpdate). Custom resources, and the groups whose
validation calls apimachinery's ValidateObjectMeta directly (apiextensions, apiregistration,
admissionregistration, coordination), accept any qualified name such as ``no-slash``."""

from __future__ import annotations

from typing import Any, Final

from apiserver.schema import causes
from apiserver.schema.causes import Cause

STANDARD_FINALIZERS: Final = frozenset(("kubernetes", "orphan", "foregroundDeletion"))
"""k8s.io/kubernetes/pkg/apis/core/helper/helpers.go standardFinalizers."""

CORE_VALIDATED_GROUPS: Final = frozenset(
    (
        "",
        "apps",
        "autoscaling",
        "batch",
        "certificates.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "internal.apiserver.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "resource.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
        "storagemigration.k8s.io",
    )
)
"""kube's groups whose kinds validate metadata with pkg/apis/core/validation's ValidateObjectMeta."""


def kube_finalizer_causes(metadata: dict[str, Any], group: str) -> list[Cause]:
    """``metadata.finalizers[i]: Invalid value: "x": name is neither a standard finalizer name nor is it
    fully qualified`` for a built-in kind of one of CORE_VALIDATED_GROUPS, after the generic causes."""
    finalizers = metadata.get("finalizers")
    if group not in CORE_VALIDATED_GROUPS or not isinstance(finalizers, list):
        return []
    return [
        causes.invalid(
            f"metadata.finalizers[{index}]",
            name,
            "name is neither a standard finalizer name nor is it fully qualified",
        )
        for index, name in enumerate(finalizers)
        if isinstance(name, str) and "/" not in name and name not in STANDARD_FINALIZERS
    ]
