"""Protobuf messages of the self-review kinds, until their definitions declare field numbers (issue 10): kubectl
1.32+ posts them as protobuf. Numbers from k8s.io/api authorization/v1 and authentication/v1 generated.proto."""

from __future__ import annotations

from apiserver.encoding.protobuf import Field, ListOf, MapOf, Message
from apiserver.encoding.protobuf_meta import METADATA, KindCodec

_SELECTOR_REQUIREMENT = Message(  # FieldSelectorRequirement and meta/v1 LabelSelectorRequirement
    "SelectorRequirement",
    (
        Field(1, "key", omitempty=False),
        Field(2, "operator", omitempty=False),
        Field(3, "values", repeated=True),
    ),
)
_SELECTOR_ATTRIBUTES = Message(  # FieldSelectorAttributes and LabelSelectorAttributes
    "SelectorAttributes",
    (Field(1, "rawSelector"), Field(2, "requirements", _SELECTOR_REQUIREMENT, repeated=True)),
)
_RESOURCE_ATTRIBUTES = Message(
    "ResourceAttributes",
    (
        Field(1, "namespace"),
        Field(2, "verb"),
        Field(3, "group"),
        Field(4, "version"),
        Field(5, "resource"),
        Field(6, "subresource"),
        Field(7, "name"),
        Field(8, "fieldSelector", _SELECTOR_ATTRIBUTES, pointer=True),
        Field(9, "labelSelector", _SELECTOR_ATTRIBUTES, pointer=True),
    ),
)
_SELF_SUBJECT_ACCESS_REVIEW = Message(
    "SelfSubjectAccessReview",
    (
        METADATA,
        Field(
            2,
            "spec",
            Message(
                "SelfSubjectAccessReviewSpec",
                (
                    Field(1, "resourceAttributes", _RESOURCE_ATTRIBUTES, pointer=True),
                    Field(
                        2,
                        "nonResourceAttributes",
                        Message("NonResourceAttributes", (Field(1, "path"), Field(2, "verb"))),
                        pointer=True,
                    ),
                ),
            ),
        ),
        Field(
            3,
            "status",
            Message(
                "SubjectAccessReviewStatus",
                (
                    Field(1, "allowed", "bool", omitempty=False),
                    Field(4, "denied", "bool"),
                    Field(2, "reason"),
                    Field(3, "evaluationError"),
                ),
            ),
        ),
    ),
)
_RESOURCE_RULE = Message(
    "ResourceRule",
    (
        Field(1, "verbs", repeated=True, omitempty=False),
        Field(2, "apiGroups", repeated=True),
        Field(3, "resources", repeated=True),
        Field(4, "resourceNames", repeated=True),
    ),
)
_NON_RESOURCE_RULE = Message(
    "NonResourceRule",
    (
        Field(1, "verbs", repeated=True, omitempty=False),
        Field(2, "nonResourceURLs", repeated=True),
    ),
)
_SELF_SUBJECT_RULES_REVIEW = Message(
    "SelfSubjectRulesReview",
    (
        METADATA,
        Field(2, "spec", Message("SelfSubjectRulesReviewSpec", (Field(1, "namespace"),))),
        Field(
            3,
            "status",
            Message(
                "SubjectRulesReviewStatus",
                (
                    Field(1, "resourceRules", _RESOURCE_RULE, repeated=True, omitempty=False),
                    Field(
                        2, "nonResourceRules", _NON_RESOURCE_RULE, repeated=True, omitempty=False
                    ),
                    Field(3, "incomplete", "bool", omitempty=False),
                    Field(4, "evaluationError"),
                ),
            ),
        ),
    ),
)
_USER_INFO = Message(
    "UserInfo",
    (
        Field(1, "username"),
        Field(2, "uid"),
        Field(3, "groups", repeated=True),
        Field(4, "extra", MapOf(ListOf("string"))),
    ),
)
_SELF_SUBJECT_REVIEW = Message(
    "SelfSubjectReview",
    (
        METADATA,
        Field(2, "status", Message("SelfSubjectReviewStatus", (Field(1, "userInfo", _USER_INFO),))),
    ),
)

REVIEW_CODECS: dict[str, KindCodec] = {
    "SelfSubjectAccessReview": KindCodec(_SELF_SUBJECT_ACCESS_REVIEW),
    "SelfSubjectRulesReview": KindCodec(_SELF_SUBJECT_RULES_REVIEW),
    "SelfSubjectReview": KindCodec(_SELF_SUBJECT_REVIEW),
}
