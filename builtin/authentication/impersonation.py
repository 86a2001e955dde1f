"""What the built-in kinds tell the impersonation filter, which names no kind: a `system:serviceaccount:<ns>:<name>`
user is impersonated as core's serviceaccounts, a uid and each extra value as the authentication group's
`uids` and `userextras` (kube's WithImpersonation takes them from k8s.io/api: corev1's ServiceAccount,
authenticationv1.SchemeGroupVersion; staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go).

They hold whether or not a server serves those kinds, as kube's generic filter asks the same of an
aggregated server that serves neither: impersonating a service account never needs the account to exist.
Every server built with the built-in kinds is handed them (builtin/kindfacts.py): `apiforge serve` through ``kind_facts``
(one of ``builtin.flags.KIND_FLAGS``, with no flag of its own), apiforge.testing's app directly."""

from __future__ import annotations

from apiserver.filters.impersonation import ImpersonationKinds

__all__ = ["IMPERSONATION_KINDS"]

IMPERSONATION_KINDS = ImpersonationKinds(
    service_accounts="serviceaccounts", user_attributes_group="authentication.k8s.io"
)
