"""`--authorization-mode` as a chain (k8s.io/apiserver pkg/authorization/union and kube-apiserver's
pkg/kubeapiserver/authorizer): the members of ``system:masters`` are allowed everything first (kube's
privileged-groups authorizer), then each mode is asked in order; the first Allow or Deny decides, NoOpinion
passes to the next, and a request nobody allows is refused with the reasons gathered on the way."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from apiserver.authentication.user import MASTERS_GROUP, UserInfo
from apiserver.authorization.authorizer import AlwaysAllow, Attributes, Authorizer, Decision, Rules

ALWAYS_ALLOW = "AlwaysAllow"
WEBHOOK_MODE = "Webhook"
"""The delegated SubjectAccessReviews of --authorization-kubeconfig (kube's Webhook mode, for an extension
server)."""


class PrivilegedGroups:
    """kube's authorizerfactory.NewPrivilegedGroups(system:masters): the server's own loopback user and the
    admin kubeconfig's user may do anything, whatever the policy objects say (so a broken policy cannot lock
    the administrator out)."""

    def __init__(self, groups: Sequence[str] = (MASTERS_GROUP,)) -> None:
        self.groups = frozenset(groups)

    async def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
        if not self.groups.isdisjoint(attributes.user.groups):
            return Decision.ALLOW, ""
        return Decision.NO_OPINION, ""

    def revision(self) -> object | None:
        return 0

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        if self.groups.intersection(user.groups):
            return await AlwaysAllow().rules_for(user, namespace)
        return Rules()


class UnionAuthorizer:
    """The first Allow or Deny of ``authorizers`` in order (union.New); the rules of all of them, as kube's
    unionAuthzRulesHandler concatenates them."""

    def __init__(self, authorizers: Sequence[Authorizer]) -> None:
        self.authorizers = tuple(authorizers)
        self._revisions = tuple(getattr(member, "revision", None) for member in self.authorizers)

    def revision(self) -> object | None:
        """Every member's (authorizer.Revisioned); None when one has none to give."""
        if None in self._revisions:
            return None
        revisions = [revision() for revision in self._revisions]  # type: ignore[misc]
        return None if None in revisions else tuple(revisions)

    async def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
        reasons = None  # made only for a request nobody decides (an allowed one needs none)
        for authorizer in self.authorizers:
            decision, reason = await authorizer.authorize(attributes)
            if decision is not Decision.NO_OPINION:
                return decision, reason
            if reason:
                reasons = [*(reasons or ()), reason]
        return Decision.NO_OPINION, "\n".join(reasons or ())

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        resource_rules: list[dict[str, object]] = []
        non_resource_rules: list[dict[str, object]] = []
        incomplete = False
        failures = []
        for authorizer in self.authorizers:
            rules = await authorizer.rules_for(user, namespace)
            resource_rules.extend(rules.resource_rules)
            non_resource_rules.extend(rules.non_resource_rules)
            incomplete = incomplete or rules.incomplete
            if rules.evaluation_error:
                failures.append(rules.evaluation_error)
        return Rules(
            tuple(resource_rules), tuple(non_resource_rules), incomplete, ", ".join(failures)
        )


def authorizer_for_modes(modes: Sequence[str], provided: Mapping[str, Authorizer]) -> Authorizer:
    """The chain of ``modes`` (validated names), each served by the authorizer a part of the server
    ``provided`` under its name (the RBAC authorizer comes with the RBAC kinds) or, for AlwaysAllow, by the
    runtime itself. A mode nobody provides is a start-up error, never a silent allow. AlwaysAllow first
    decides everything alone: no other authorizer is asked on the hot path."""
    if modes and modes[0] == ALWAYS_ALLOW:
        return AlwaysAllow()
    chain: list[Authorizer] = [PrivilegedGroups()]
    for mode in modes:
        if mode == ALWAYS_ALLOW:
            chain.append(AlwaysAllow())
        elif mode in provided:
            chain.append(provided[mode])
        else:
            raise ValueError(f'authorization mode "{mode}" is not provided by any served kind')
    return UnionAuthorizer(chain)
