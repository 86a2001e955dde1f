"""The extra check kube's own built-in kinds make of finalizer names: a name without a ``/`` must be one of the
standard finalizers (k8s.io/kubernetes/pkg/apis/core/validation/validation.go validateKubeFinalizerName, run by
that package's ValidateObjectMeta and ValidateObjectMetaUpdate). Which groups validate their metadata that way
is the kinds' to say (``KubeFinalizerGroups``, handed to the server by the layer that defines them); custom
resources, and kube's groups whose validation calls apimachinery's ValidateObjectMeta directly, accept any
qualified name such as ``no-slash``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from apiserver.schema import causes
from apiserver.schema.causes import Cause

STANDARD_FINALIZERS: Final = frozenset(("kubernetes", "orphan", "foregroundDeletion"))
"""k8s.io/kubernetes/pkg/apis/core/helper/helpers.go standardFinalizers."""


@dataclass(frozen=True, slots=True)
class KubeFinalizerGroups:
    """The groups whose built-in kinds validate metadata with pkg/apis/core/validation's ValidateObjectMeta."""

    groups: frozenset[str]


def kube_finalizer_causes(metadata: dict[str, Any]) -> list[Cause]:
    """``metadata.finalizers[i]: Invalid value: "x": name is neither a standard finalizer name nor is it
    fully qualified``, after the generic causes."""
    finalizers = metadata.get("finalizers")
    if not isinstance(finalizers, list):
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
