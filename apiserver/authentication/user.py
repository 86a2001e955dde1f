"""The identity of a request's sender, as kube's ``user.Info`` holds it: authenticators produce it, the audit
log records it, authorization and admission decide on it, and the self-reviews report it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

ANONYMOUS_USER = "system:anonymous"
UNAUTHENTICATED_GROUP = "system:unauthenticated"
AUTHENTICATED_GROUP = "system:authenticated"
MASTERS_GROUP = "system:masters"


CREDENTIAL_ID: Final = "authentication.kubernetes.io/credential-id"
"""The extra that names the credential a user authenticated with (k8s.io/apiserver/pkg/authentication/user,
CredentialIDKey): a client certificate's fingerprint, a service-account token's JTI."""


@dataclass(frozen=True, slots=True)
class UserInfo:
    """A user: ``name`` unique among users, ``uid`` unique across time, ``groups`` and ``extra`` as the
    authenticator found them (extra values are lists, as in kube)."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        """The authentication.k8s.io/v1 ``UserInfo`` object (SelfSubjectReview, TokenReview, audit)."""
        info: dict[str, Any] = {"username": self.name}
        if self.uid:
            info["uid"] = self.uid
        if self.groups:
            info["groups"] = list(self.groups)
        if self.extra:
            info["extra"] = {key: list(values) for key, values in sorted(self.extra.items())}
        return info


ANONYMOUS = UserInfo(ANONYMOUS_USER, groups=(UNAUTHENTICATED_GROUP,))
UNSECURED = UserInfo("system:unsecured", groups=(MASTERS_GROUP, AUTHENTICATED_GROUP))
"""Who a request without credentials is on a server started with --insecure-serving (plain HTTP, loopback
only): kube's insecure port treated its requests so (pkg/kubeapiserver/server/insecure_handler.go), since
over plain HTTP no client certificate can say who the local administrator is."""
LOOPBACK = UserInfo("system:apiserver", groups=(MASTERS_GROUP, AUTHENTICATED_GROUP))
"""The server's own writes (bootstrap, controllers), as kube's loopback client is authenticated."""
