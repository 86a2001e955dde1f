"""What the built-in kinds tell the runtime's generic code, which names no kind: the impersonation filter's
resource of service accounts and group of uids and extras, and the groups whose kinds check finalizer names as
kube's core validation does. Every server built with the built-in kinds is handed them in its
``kind_options``: `apiforge serve` through ``kind_facts`` (one of ``builtin.flags.KIND_FLAGS``, with no flag of
its own), apiforge.testing's app directly."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from apiserver.filters.impersonation import ImpersonationKinds
from apiserver.schema.kubefinalizers import KubeFinalizerGroups
from builtin.authentication.impersonation import IMPERSONATION_KINDS

__all__ = ["KIND_FACTS", "KUBE_FINALIZER_GROUPS", "kind_facts"]

KUBE_FINALIZER_GROUPS = KubeFinalizerGroups(
    frozenset(
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
)
"""kube's groups whose kinds validate metadata with pkg/apis/core/validation's ValidateObjectMeta (and so
validateKubeFinalizerName); apiextensions, apiregistration, admissionregistration and coordination call
apimachinery's ValidateObjectMeta directly."""

KIND_FACTS: Mapping[type, object] = {
    ImpersonationKinds: IMPERSONATION_KINDS,
    KubeFinalizerGroups: KUBE_FINALIZER_GROUPS,
}


def kind_facts(parsed: Callable[..., None]) -> Callable[..., None]:
    """Hands ``parsed`` ``KIND_FACTS`` in its ``kind_options`` (apiserver/server/options.py's KindFlags),
    whatever the command line says."""

    @functools.wraps(parsed)
    def with_kind_facts(*args: object, kind_options: dict[type, object], **kwargs: object) -> None:
        parsed(*args, kind_options={**kind_options, **KIND_FACTS}, **kwargs)

    return with_kind_facts
