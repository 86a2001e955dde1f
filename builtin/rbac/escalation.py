"""Escalation prevention (kube's pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased
and pkg/registry/rbac/validation ConfirmNoEscalation), as a validating admission plugin of the RBAC kinds: a
user may write a role only with rules they hold themselves, unless they may `escalate` it; and a binding only
to a role whose rules they hold, unless they may `bind` it. Members of `system:masters` (and so the server's
own writes) may do anything."""

from __future__ import annotations

from typing import Any, Protocol

from apiserver.admission.interface import Attributes, Operation
from apiserver.authentication.user import MASTERS_GROUP, UserInfo
from apiserver.authorization.authorizer import Attributes as AuthorizationAttributes
from apiserver.authorization.authorizer import Decision
from apiserver.machinery import errors
from apiserver.machinery.scheme import ResourceType
from builtin.rbac.authorizer import rbac_authorizer
from builtin.rbac.index import GROUP
from builtin.rbac.rules import Rule, compact, compile_rules, uncovered
from builtin.wants import WantsAuthorizer, WantsAuthorizerModes

ROLES = ("roles", "clusterroles")
FULL_AUTHORITY = (Rule(("*",), ("*",), ("*",)), Rule(("*",), non_resource_urls=("*",)))
BINDINGS = ("rolebindings", "clusterrolebindings")
# what the garbage collector changes (kube's IsOnlyMutatingGCFields), and what every write changes anyway
_GC_METADATA = ("ownerReferences", "finalizers", "managedFields", "resourceVersion", "generation")


class EscalationServer(WantsAuthorizer, WantsAuthorizerModes, Protocol):
    """The server's authorizer (may the user escalate or bind?) and its RBAC mode (does the user hold
    every rule?)."""


class EscalationPrevention:
    def __init__(self, context: EscalationServer) -> None:
        self.context = context

    def handles(self, operation: Operation) -> bool:
        return operation in (Operation.CREATE, Operation.UPDATE)

    def acts_on(self, resource: ResourceType, operation: Operation) -> bool:
        """Writes of the RBAC roles and bindings only."""
        return resource.group == GROUP and (resource.plural in ROLES or resource.plural in BINDINGS)

    async def validate(self, attributes: Attributes) -> None:
        resource = attributes.resource
        obj = attributes.obj
        if resource.group != GROUP or attributes.subresource or obj is None:
            return
        if resource.plural not in ROLES and resource.plural not in BINDINGS:
            return
        user = attributes.user
        if MASTERS_GROUP in user.groups:  # kube's EscalationAllowed
            return
        if attributes.old is not None and _only_gc_fields_changed(obj, attributes.old):
            return
        namespace = attributes.namespace
        if resource.plural in ROLES:
            if await self._may(user, "escalate", resource.plural, attributes.name, namespace):
                return
            granted: tuple[Rule, ...] | str = compile_rules(obj.get("rules"))
        else:
            ref = obj.get("roleRef") or {}
            kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
            role_plural = "clusterroles" if kind == "ClusterRole" else "roles"
            if await self._may(user, "bind", role_plural, name, namespace):
                return
            rbac = rbac_authorizer(self.context)
            granted = rbac.role_rules(kind, name, namespace) if rbac is not None else ()
        if isinstance(granted, str):
            raise _forbidden(attributes, granted)
        problem = self._escalation(user, namespace, granted)
        if problem:
            raise _forbidden(attributes, problem)
        if _sets_aggregation_rule(obj, attributes.old) and self._escalation(
            user, namespace, FULL_AUTHORITY
        ):
            # an aggregationRule can gather anything: it takes * on *.* (kube's clusterrole policybased)
            raise _forbidden(
                attributes, "must have cluster-admin privileges to use the aggregationRule"
            )

    async def _may(self, user: UserInfo, verb: str, plural: str, name: str, namespace: str) -> bool:
        """kube's RoleEscalationAuthorized / BindingAuthorized: asked of the server's whole authorizer."""
        asked = AuthorizationAttributes(
            user=user,
            verb=verb,
            resource_request=True,
            namespace=namespace,
            api_group=GROUP,
            api_version="*",
            resource=plural,
            name=name,
        )
        decision, _ = await self.context.authorizer.authorize(asked)
        return decision is Decision.ALLOW

    def _escalation(self, user: UserInfo, namespace: str, granted: tuple[Rule, ...]) -> str:
        """kube's ConfirmNoEscalation: what ``granted`` has that ``user`` does not hold in ``namespace``."""
        rbac = rbac_authorizer(self.context)
        owned, failures = rbac.policy_rules(user, namespace) if rbac is not None else ([], [])
        missing = uncovered(owned, granted)
        if not missing:
            return ""
        descriptions = sorted({rule.compact_string() for rule in compact(missing)})
        groups = " ".join(f'"{group}"' for group in user.groups)
        message = (
            f'user "{user.name}" (groups=[{groups}]) is attempting to grant RBAC permissions not'
            " currently held:\n" + "\n".join(descriptions)
        )
        if failures:
            message += f"; resolution errors: [{' '.join(failures)}]"
        return message


def _forbidden(attributes: Attributes, detail: str) -> errors.APIError:
    return errors.forbidden(attributes.resource.plural, GROUP, attributes.name, detail)


def _sets_aggregation_rule(obj: dict[str, Any], old: dict[str, Any] | None) -> bool:
    rule = obj.get("aggregationRule")
    return bool(rule) and (old is None or old.get("aggregationRule") != rule)


def _only_gc_fields_changed(obj: dict[str, Any], old: dict[str, Any]) -> bool:
    return _without_gc_fields(obj) == _without_gc_fields(old)


def _without_gc_fields(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _GC_METADATA}
    return {**obj, "metadata": metadata}
