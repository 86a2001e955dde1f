"""authorization.k8s.io/v1 SelfSubjectAccessReview and SelfSubjectRulesReview (`kubectl auth can-i`), answered
by the server's authorizer for the request's user and never stored, so a review and the request it describes
always get the same verdict (kube's pkg/registry/authorization/selfsubject{access,rules}review)."""

from __future__ import annotations

from typing import Any

from apiserver.admission.interface import Attributes
from apiserver.authorization.authorizer import Attributes as AuthorizationAttributes
from apiserver.authorization.authorizer import Decision
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.registry.meta import now_rfc3339
from apiserver.registry.strategy import Strategy

_ONE_OF = "exactly one of nonResourceAttributes or resourceAttributes must be specified"
_BOTH = 'Invalid value: "object": cannot be specified in combination with resourceAttributes'


class SelfSubjectAccessReviewStrategy(Strategy):
    async def answer(self, obj: Object, attributes: Attributes) -> Object:
        spec = obj.get("spec") or {}
        resource = spec.get("resourceAttributes")
        non_resource = spec.get("nonResourceAttributes")
        _validate_spec(resource, non_resource)
        if resource is not None:
            asked = AuthorizationAttributes(
                user=attributes.user,
                verb=str(resource.get("verb") or ""),
                resource_request=True,
                namespace=str(resource.get("namespace") or ""),
                api_group=str(resource.get("group") or ""),
                api_version=str(resource.get("version") or ""),
                resource=str(resource.get("resource") or ""),
                subresource=str(resource.get("subresource") or ""),
                name=str(resource.get("name") or ""),
            )
        else:
            asked = AuthorizationAttributes(
                user=attributes.user,
                verb=str((non_resource or {}).get("verb") or ""),
                resource_request=False,
                path=str((non_resource or {}).get("path") or ""),
            )
        decision, reason = await self.context.authorizer.authorize(asked)
        status: dict[str, Any] = {"allowed": decision is Decision.ALLOW}
        if decision is Decision.DENY:
            status["denied"] = True
        if reason:
            status["reason"] = reason
        obj.setdefault("metadata", {}).setdefault("creationTimestamp", now_rfc3339())
        obj["status"] = status
        return obj


class SelfSubjectRulesReviewStrategy(Strategy):
    async def answer(self, obj: Object, attributes: Attributes) -> Object:
        namespace = str((obj.get("spec") or {}).get("namespace") or "")
        rules = await self.context.authorizer.rules_for(attributes.user, namespace)
        status: dict[str, Any] = {
            "resourceRules": list(rules.resource_rules),
            "nonResourceRules": list(rules.non_resource_rules),
            "incomplete": rules.incomplete,
        }
        if rules.evaluation_error:
            status["evaluationError"] = rules.evaluation_error
        obj.setdefault("metadata", {}).setdefault("creationTimestamp", now_rfc3339())
        obj["status"] = status
        return obj


def _validate_spec(resource: Any, non_resource: Any) -> None:
    """kube's ValidateSelfSubjectAccessReviewSpec: exactly one kind of attributes."""
    if resource is not None and non_resource is not None:
        field, message = "spec.nonResourceAttributes", _BOTH
    elif resource is None and non_resource is None:
        field, message = "spec.resourceAttributes", f'Invalid value: "null": {_ONE_OF}'
    else:
        return
    raise errors.invalid(
        "SelfSubjectAccessReview",
        "authorization.k8s.io",
        "",
        [errors.StatusCause("FieldValueInvalid", message, field)],
    )
