"""The authorization seam (k8s.io/apiserver pkg/authorization/authorizer): a request's attributes go in, a
decision comes out. The filter chain asks it for every request; the self-reviews (`kubectl auth can-i`) ask it
for hypothetical ones, so both always agree."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from apiserver.authentication.user import UserInfo


class Decision(enum.Enum):
    ALLOW = "Allow"
    DENY = "Deny"
    NO_OPINION = "NoOpinion"


class Attributes(NamedTuple):
    """What a request asks to do: a resource request (verb on group/version/resource/subresource, in a
    namespace, by name) or a non-resource one (verb on a path), by a user. A named tuple, immutable like a
    frozen dataclass but built in a fifth of its time: the filter chain builds one for every request."""

    user: UserInfo
    verb: str
    resource_request: bool
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""


@dataclass(frozen=True, slots=True)
class Rules:
    """What a user may do in a namespace, as SelfSubjectRulesReview reports it (``status`` fields)."""

    resource_rules: tuple[dict[str, Any], ...] = ()
    non_resource_rules: tuple[dict[str, Any], ...] = ()
    incomplete: bool = False
    evaluation_error: str = field(default="")


class Authorizer(Protocol):
    async def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
        """The decision and its reason (shown in a 403's message and in the reviews)."""
        ...

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        """Everything ``user`` may do in ``namespace`` (kube's RuleResolver)."""
        ...


class Revisioned(Protocol):
    """An authorizer whose decisions depend only on the request's attributes and on state it can number:
    ``revision()`` changes whenever any decision could, and is None while none may be relied on (a webhook
    member of a union). The filter chain replays an answer only while the revision it was authorized at is
    current (endpoints/replay.py); an authorizer without the method is asked every time."""

    def revision(self) -> object | None: ...


class AlwaysAllow:
    """`--authorization-mode=AlwaysAllow`: every request is allowed (kube's alwaysAllowAuthorizer)."""

    async def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
        return Decision.ALLOW, ""

    def revision(self) -> object | None:
        return 0

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        return Rules(
            resource_rules=({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},),
            non_resource_rules=({"verbs": ["*"], "nonResourceURLs": ["*"]},),
        )
