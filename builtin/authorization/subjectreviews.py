"""authorization.k8s.io/v1 SubjectAccessReview and LocalSubjectAccessReview: may this user (not the
requester: the one the spec names) do this? Answered by the server's authorizer and never stored, as kube's
pkg/registry/authorization/{subjectaccessreview,localsubjectaccessreview}; who may ask is the requester's
`create` on the review, which the filter chain has authorized already."""

from __future__ import annotations

from typing import Any

from apiserver.admission.interface import Attributes
from apiserver.authentication.user import UserInfo
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from builtin.authorization.reviews import (
    AuthorizingStrategy,
    answer_access_review,
    asked,
    validate_spec,
)

_NO_USER = 'Invalid value: "": at least one of user or group must be specified'


def _subject(spec: dict[str, Any]) -> UserInfo:
    """The user the spec describes (kube's AuthorizationAttributesFrom: no group is added)."""
    extra = spec.get("extra") or {}
    return UserInfo(
        name=str(spec.get("user") or ""),
        uid=str(spec.get("uid") or ""),
        groups=tuple(str(group) for group in spec.get("groups") or ()),
        extra={str(key): tuple(str(v) for v in values or ()) for key, values in extra.items()},
    )


def _user_causes(spec: dict[str, Any]) -> list[errors.StatusCause]:
    if spec.get("user") or spec.get("groups"):
        return []
    return [errors.StatusCause("FieldValueInvalid", _NO_USER, "spec.user")]


class SubjectAccessReviewStrategy(AuthorizingStrategy):
    async def answer(self, obj: Object, attributes: Attributes) -> Object:
        spec = obj.get("spec") or {}
        validate_spec("SubjectAccessReview", spec, _user_causes(spec))
        return await answer_access_review(self.server.authorizer, obj, asked(spec, _subject(spec)))


class LocalSubjectAccessReviewStrategy(AuthorizingStrategy):
    """A SubjectAccessReview confined to the namespace it is posted in (so that a namespace admin may be
    allowed to ask it): resource attributes only, in that namespace."""

    async def answer(self, obj: Object, attributes: Attributes) -> Object:
        spec = obj.get("spec") or {}
        more = _user_causes(spec)
        if spec.get("nonResourceAttributes") is not None and spec.get("resourceAttributes") is None:
            more.append(
                errors.StatusCause(
                    "FieldValueInvalid",
                    'Invalid value: "": disallowed on this kind of request',
                    "spec.nonResourceAttributes",
                )
            )
        validate_spec("LocalSubjectAccessReview", spec, more)
        resource = spec.get("resourceAttributes") or {}
        if (resource.get("namespace") or "") != attributes.namespace:
            raise errors.bad_request(
                f"spec.resourceAttributes.namespace must match namespace: {attributes.namespace}"
            )
        return await answer_access_review(self.server.authorizer, obj, asked(spec, _subject(spec)))
