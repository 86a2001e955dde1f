"""authorization.k8s.io/v1 SelfSubjectAccessReview and SelfSubjectRulesReview (`kubectl auth can-i`), answered
by the server's authorizer for the request's user and never stored, so a review and the request it describes
always get the same verdict (kube's pkg/registry/authorization/selfsubject{access,rules}review)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from apiserver.admission.interface import Attributes
from apiserver.authentication.user import UserInfo
from apiserver.authorization.authorizer import Attributes as AuthorizationAttributes
from apiserver.authorization.authorizer import Authorizer, Decision
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.registry.strategy import Strategy
from builtin.wants import WantsAuthorizer

_ONE_OF = "exactly one of nonResourceAttributes or resourceAttributes must be specified"
_BOTH = 'Invalid value: "object": cannot be specified in combination with resourceAttributes'


class AuthorizingStrategy(Strategy):
    """A review answered by the server's authorizer, the one every request is authorized by."""

    def __init__(self, server: WantsAuthorizer) -> None:
        super().__init__()
        self.server = server


class SelfSubjectAccessReviewStrategy(AuthorizingStrategy):
    async def answer(self, obj: Object, attributes: Attributes) -> Object:
        spec = obj.get("spec") or {}
        validate_spec("SelfSubjectAccessReview", spec)
        return await answer_access_review(self.server.authorizer, obj, asked(spec, attributes.user))


def asked(spec: dict[str, Any], user: UserInfo) -> AuthorizationAttributes:
    """What an access review's spec asks, for ``user`` (kube's ResourceAttributesFrom and
    NonResourceAttributesFrom)."""
    resource = spec.get("resourceAttributes")
    if resource is not None:
        return AuthorizationAttributes(
            user=user,
            verb=str(resource.get("verb") or ""),
            resource_request=True,
            namespace=str(resource.get("namespace") or ""),
            api_group=str(resource.get("group") or ""),
            api_version=str(resource.get("version") or ""),
            resource=str(resource.get("resource") or ""),
            subresource=str(resource.get("subresource") or ""),
            name=str(resource.get("name") or ""),
        )
    non_resource = spec.get("nonResourceAttributes") or {}
    return AuthorizationAttributes(
        user=user,
        verb=str(non_resource.get("verb") or ""),
        resource_request=False,
        path=str(non_resource.get("path") or ""),
    )


async def answer_access_review(
    authorizer: Authorizer, obj: Object, attributes: AuthorizationAttributes
) -> Object:
    """The review with its status: the authorizer's decision on ``attributes`` and its reason. kube answers
    with the request's object (no creationTimestamp: nothing sets one), its spec through the Go types, whose
    attribute fields are all omitempty (an empty group is not echoed)."""
    decision, reason = await authorizer.authorize(attributes)
    status: dict[str, Any] = {"allowed": decision is Decision.ALLOW}
    if decision is Decision.DENY:
        status["denied"] = True
    if reason:
        status["reason"] = reason
    spec = obj.get("spec") or {}
    for key in ("resourceAttributes", "nonResourceAttributes"):
        if isinstance(spec.get(key), dict):
            spec[key] = {
                name: value for name, value in spec[key].items() if value not in ("", None)
            }
    obj["status"] = status
    return obj


class SelfSubjectRulesReviewStrategy(AuthorizingStrategy):
    async def answer(self, obj: Object, attributes: Attributes) -> Object:
        """A new review holding only the rules (kube's selfsubjectrulesreview REST builds its answer afresh:
        empty metadata and spec)."""
        namespace = str((obj.get("spec") or {}).get("namespace") or "")
        rules = await self.server.authorizer.rules_for(attributes.user, namespace)
        status: dict[str, Any] = {
            "resourceRules": list(rules.resource_rules),
            "nonResourceRules": list(rules.non_resource_rules),
            "incomplete": rules.incomplete,
        }
        if rules.evaluation_error:
            status["evaluationError"] = rules.evaluation_error
        return {
            "kind": obj.get("kind"),
            "apiVersion": obj.get("apiVersion"),
            "metadata": {},
            "spec": {},
            "status": status,
        }


def validate_spec(kind: str, spec: dict[str, Any], more: Sequence[errors.StatusCause] = ()) -> None:
    """kube's Validate{Self,}SubjectAccessReviewSpec: exactly one kind of attributes (and what ``more``
    the caller found)."""
    found = list(more)
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource is not None and non_resource is not None:
        found.insert(
            0, errors.StatusCause("FieldValueInvalid", _BOTH, "spec.nonResourceAttributes")
        )
    elif resource is None and non_resource is None:
        message = f'Invalid value: "null": {_ONE_OF}'
        found.insert(0, errors.StatusCause("FieldValueInvalid", message, "spec.resourceAttributes"))
    if found:
        raise errors.invalid(kind, "authorization.k8s.io", "", found)
