"""RBAC's decisions remembered per policy revision. kube resolves a request's rules afresh every time
(plugin/pkg/auth/authorizer/rbac/rbac.go, VisitRulesFor); here the policy is compiled into an index that
changes only through its informers, so a decision holds until the index's revision moves, and the same
user asking the same thing again (a client's every GET) costs a dictionary lookup.

A decision is remembered by who asks (name and groups: what RBAC reads of a user) and what they ask, without
the object's name unless a rule that was consulted names objects (``resourceNames``): a user reading many
objects shares one entry, and a decision that the name can change is remembered by name too. The memo is
bounded: past ``limit`` entries it starts afresh, so that clients asking for ever new names or paths cannot
grow it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apiserver.authorization.authorizer import Attributes, Decision

Answer = tuple[Decision, str]
Resolved = tuple[Answer, bool]
"""A decision and whether it depended on the object's name (a rule with resourceNames was consulted)."""

LIMIT = 4096
_BY_NAME = object()
"""The entry of a key whose decisions depend on the object's name: look again with the name."""


class DecisionMemo:
    """``resolve(attributes)`` remembered while ``revision()`` stays the same."""

    def __init__(
        self,
        resolve: Callable[[Attributes], Resolved],
        revision: Callable[[], int],
        limit: int = LIMIT,
    ) -> None:
        self.resolve = resolve
        self.revision = revision
        self.limit = limit
        self._revision = revision()
        self._answers: dict[Any, Any] = {}

    def __len__(self) -> int:
        return len(self._answers)

    def decide(self, attributes: Attributes) -> Answer:
        revision = self.revision()
        if revision != self._revision:
            # a new table, not the old one cleared: a decision an admission check on a worker thread worked
            # out meanwhile goes to the table of the revision it started at, which nobody reads any more
            self._answers, self._revision = {}, revision
        answers = self._answers
        user = attributes.user
        # the path is what a non-resource request asks for; a resource request's path says nothing more
        key = (
            user.name, user.groups, attributes.verb, attributes.resource_request,
            attributes.namespace, attributes.api_group, attributes.resource, attributes.subresource,
            "" if attributes.resource_request else attributes.path,
        )  # fmt: skip
        found = answers.get(key)
        if found is _BY_NAME:
            named = (key, attributes.name)
            found = answers.get(named)
            if found is not None:
                return found  # type: ignore[no-any-return]
        elif found is not None:
            return found  # type: ignore[no-any-return]
        answer, by_name = self.resolve(attributes)
        if len(answers) >= self.limit:
            answers.clear()
        if by_name:
            answers[key] = _BY_NAME
            answers[(key, attributes.name)] = answer
        else:
            answers[key] = answer
        return answer
