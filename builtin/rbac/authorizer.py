"""The RBAC authorizer (kube's plugin/pkg/auth/authorizer/rbac and its rule resolver,
pkg/registry/rbac/validation): a request is allowed when a rule of a role bound to its user, one of its
groups or its service account allows it, and otherwise gets no opinion (the next mode, or a 403).

It is built with the RBAC kinds (a controller the ClusterRole definition names) and provides the `RBAC` mode to the
server's `--authorization-mode` chain; the policy it reads is kept in memory by informers on the four kinds'
watch caches and indexed by subject (index.py), so no request scans every binding."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from apiserver.authentication.user import UserInfo
from apiserver.authorization.authorizer import Attributes, Decision, Rules
from builtin.rbac.decisions import DecisionMemo
from builtin.rbac.index import GROUP, PolicyIndex
from builtin.rbac.informer import Informer
from builtin.rbac.rules import Rule
from builtin.wants import WantsAuthorizerModes, WantsStores

MODE = "RBAC"


class RBACServer(WantsStores, WantsAuthorizerModes, Protocol):
    """What the authorizer uses of the server: the RBAC kinds' Stores, and the modes it provides RBAC in."""


class _KindHandler:
    """Applies one kind's informer events to the index."""

    def __init__(
        self,
        index: PolicyIndex,
        kind: str,
        put: Callable[[dict[str, Any]], None],
        remove: Callable[[dict[str, Any]], None],
    ) -> None:
        self.index = index
        self.kind = kind
        self.put = put
        self.remove = remove

    def replace(self, objects: list[dict[str, Any]]) -> None:
        self.index.clear(self.kind)
        for obj in objects:
            self.put(obj)

    def changed(self, event_type: str, obj: dict[str, Any]) -> None:
        (self.remove if event_type == "DELETED" else self.put)(obj)


class RBACAuthorizer:
    """An Authorizer (authorize, rules_for) and a Controller (start, stop: its informers)."""

    def __init__(self, context: RBACServer) -> None:
        self.index = index = PolicyIndex()
        kinds = (
            ("roles", "Role", index.set_role, index.delete_role),
            ("clusterroles", "ClusterRole", index.set_cluster_role, index.delete_cluster_role),
            ("rolebindings", "RoleBinding", index.set_binding, index.delete_binding),
            ("clusterrolebindings", "ClusterRoleBinding", index.set_binding, index.delete_binding),
        )
        self.informers = [
            Informer(context.store(GROUP, plural), _KindHandler(index, kind, put, remove))
            for plural, kind, put, remove in kinds
        ]
        self.decisions = DecisionMemo(self.resolve, self.revision)
        context.authorizer_modes[MODE] = self

    async def start(self) -> None:
        for informer in self.informers:
            await informer.start()

    async def stop(self) -> None:
        for informer in self.informers:
            await informer.stop()

    def revision(self) -> int:
        """The policy's revision (authorizer.Revisioned): decisions hold while it is current."""
        return self.index.revision

    async def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
        """kube's RBACAuthorizer.Authorize, remembered until the policy changes (decisions.py)."""
        return self.decisions.decide(attributes)

    def resolve(self, attributes: Attributes) -> tuple[tuple[Decision, str], bool]:
        """kube's RBACAuthorizer.Authorize: Allow with the binding that allowed it, else NoOpinion with the
        bindings that could not be resolved (`RBAC: clusterrole... "x" not found`); and whether a rule
        consulted names objects (so that another object's name may be decided otherwise)."""
        index = self.index
        failures = []
        by_name = False
        for binding in index.bindings_for(attributes.user, attributes.namespace):
            rules = index.role_rules(binding)
            if isinstance(rules, str):
                failures.append(rules)
                continue
            for rule in rules:
                by_name = by_name or bool(rule.resource_names)
                if rule.allows(attributes):
                    subject = binding.subject_of(attributes.user)
                    assert subject is not None  # the index found the binding by this user
                    return (
                        Decision.ALLOW,
                        f"RBAC: allowed by {binding.describe(subject)}",
                    ), by_name
        if not failures:
            return (Decision.NO_OPINION, ""), by_name
        return (Decision.NO_OPINION, f"RBAC: {_aggregate(failures)}"), by_name

    def policy_rules(self, user: UserInfo, namespace: str) -> tuple[list[Rule], list[str]]:
        """kube's RulesFor: every rule granted to ``user`` in ``namespace`` (cluster-wide ones included), and
        the bindings whose roles are missing."""
        rules: list[Rule] = []
        failures = []
        for binding in self.index.bindings_for(user, namespace):
            found = self.index.role_rules(binding)
            if isinstance(found, str):
                failures.append(found)
            else:
                rules.extend(found)
        return rules, failures

    def role_rules(self, kind: str, name: str, namespace: str) -> tuple[Rule, ...] | str:
        """kube's GetRoleReferenceRules: the rules a binding in ``namespace`` to ``kind``/``name`` grants."""
        if kind == "ClusterRole":
            rules = self.index.cluster_roles.get(name)
            return rules if rules is not None else f'clusterrole.{GROUP} "{name}" not found'
        rules = self.index.roles.get((namespace, name))
        return rules if rules is not None else f'role.{GROUP} "{name}" not found'

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        """SelfSubjectRulesReview's answer (kube's rbac RulesFor, resource and non-resource rules apart)."""
        rules, failures = self.policy_rules(user, namespace)
        resource_rules = []
        non_resource_rules = []
        for rule in rules:
            if rule.non_resource_urls:
                non_resource_rules.append(
                    {"verbs": list(rule.verbs), "nonResourceURLs": list(rule.non_resource_urls)}
                )
            else:
                resource_rules.append(
                    {
                        key: value
                        for key, value in rule.as_json().items()
                        if key != "nonResourceURLs"
                    }
                )
        return Rules(
            tuple(resource_rules),
            tuple(non_resource_rules),
            incomplete=bool(failures),
            evaluation_error=_aggregate(failures) if failures else "",
        )


def _aggregate(messages: list[str]) -> str:
    """apimachinery's utilerrors.NewAggregate(...).Error(): one message as is, several in brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def rbac_authorizer(context: WantsAuthorizerModes) -> RBACAuthorizer | None:
    """The server's RBAC authorizer, built with the RBAC kinds (None if they are not served)."""
    provided = context.authorizer_modes.get(MODE)
    return provided if isinstance(provided, RBACAuthorizer) else None
