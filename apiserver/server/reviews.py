"""The self-review kinds `kubectl auth can-i` and `auth whoami` post: created, answered, never stored.

SelfSubjectAccessReview and SelfSubjectRulesReview (authorization.k8s.io/v1) and SelfSubjectReview
(authentication.k8s.io/v1) are answered by the current authorizer, which allows everything until
authentication and RBAC exist (API-CONVENTIONS.md §10).
"""

from __future__ import annotations

from typing import Any

from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import ResourceType, VersionType
from apiserver.registry.meta import now_rfc3339
from apiserver.registry.store import Store
from apiserver.server.review_protobuf import REVIEW_CODECS

ANONYMOUS_ADMIN = {"username": "admin", "groups": ["system:masters", "system:authenticated"]}
_OPEN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}


def _review(group: str, kind: str) -> ResourceType:
    plural = kind.lower() + "s"
    return ResourceType(
        group=group,
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        list_kind=f"{kind}List",
        namespaced=False,
        versions=(
            VersionType(
                name="v1",
                served=True,
                storage=True,
                schema=_OPEN_SCHEMA,
                protobuf=REVIEW_CODECS.get(kind),
            ),
        ),
        verbs=("create",),
        persisted=False,
    )


REVIEW_RESOURCES = (
    _review("authorization.k8s.io", "SelfSubjectAccessReview"),
    _review("authorization.k8s.io", "SelfSubjectRulesReview"),
    _review("authentication.k8s.io", "SelfSubjectReview"),
    _review("authentication.k8s.io", "TokenReview"),
)


class ReviewStore(Store):
    """A Store whose only verb is create, and whose create answers instead of storing."""

    async def create(self, namespace: str | None, obj: Object, *, dry_run: bool = False) -> Object:
        metadata = obj.setdefault("metadata", {})
        metadata.setdefault("creationTimestamp", now_rfc3339())
        kind = self.resource.kind
        if kind == "SelfSubjectAccessReview":
            obj["status"] = {
                "allowed": True,
                "reason": "the AlwaysAllow authorizer allows every request",
            }
        elif kind == "SelfSubjectRulesReview":
            obj["status"] = {
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                "incomplete": False,
            }
        elif kind == "TokenReview":
            # every token is the admin's until authentication lands (kr8s whoami posts one)
            obj["status"] = {"authenticated": True, "user": ANONYMOUS_ADMIN, "audiences": []}
        else:
            obj["status"] = {"userInfo": ANONYMOUS_ADMIN}
        return obj
