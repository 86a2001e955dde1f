"""The strategies of the four RBAC kinds (kube's pkg/registry/rbac/<kind>/strategy.go and
pkg/apis/rbac/validation): names are path segments (`system:discovery`), rules need verbs and either
resources in API groups or non-resource URLs (cluster roles only), subjects are Users, Groups or
ServiceAccounts, and a binding's roleRef never changes. Subjects' and roleRefs' apiGroup are defaulted as
kube's v1 defaulters do."""

from __future__ import annotations

from typing import Any

from apiserver.machinery.names import is_dns1123_subdomain
from apiserver.machinery.objects import Object
from apiserver.registry.strategy import Strategy
from apiserver.schema import causes
from apiserver.schema.causes import Cause
from apiserver.schema.objectmeta import path_segment_name

GROUP = "rbac.authorization.k8s.io"
SUBJECT_KINDS = ("ServiceAccount", "User", "Group")
SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


class _RBACStrategy(Strategy):
    @staticmethod
    def name_rule(name: str, prefix: bool) -> list[str]:
        """kube's ValidateRBACName: any path segment."""
        return path_segment_name(name, prefix)


class RoleStrategy(_RBACStrategy):
    namespaced_rules = True

    def validate(self, obj: Object) -> list[Cause]:
        return [
            cause
            for index, rule in enumerate(_list(obj.get("rules")))
            for cause in _policy_rule(rule, self.namespaced_rules, f"rules[{index}]")
        ]

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return self.validate(obj)


class ClusterRoleStrategy(RoleStrategy):
    namespaced_rules = False

    def validate(self, obj: Object) -> list[Cause]:
        found = super().validate(obj)
        aggregation = obj.get("aggregationRule")
        if isinstance(aggregation, dict):
            selectors = _list(aggregation.get("clusterRoleSelectors"))
            if not selectors:
                found.append(
                    causes.required(
                        "aggregationRule.clusterRoleSelectors",
                        "at least one clusterRoleSelector required if aggregationRule is non-nil",
                    )
                )
            for index, selector in enumerate(selectors):
                found.extend(
                    _label_selector(selector, f"aggregationRule.clusterRoleSelectors[{index}]")
                )
        return found


class RoleBindingStrategy(_RBACStrategy):
    role_kinds: tuple[str, ...] = ("Role", "ClusterRole")
    namespaced_subjects = True

    def default(self, obj: Object) -> None:
        _default_binding(obj)

    def validate(self, obj: Object) -> list[Cause]:
        found = []
        ref = obj.get("roleRef") or {}
        if ref.get("apiGroup") != GROUP:
            found.append(causes.not_supported("roleRef.apiGroup", ref.get("apiGroup", ""), [GROUP]))
        if ref.get("kind") not in self.role_kinds:
            found.append(causes.not_supported("roleRef.kind", ref.get("kind", ""), self.role_kinds))
        name = ref.get("name") or ""
        if not name:
            found.append(causes.required("roleRef.name"))
        else:
            found.extend(
                causes.invalid("roleRef.name", name, message)
                for message in path_segment_name(name, False)
            )
        for index, subject in enumerate(_list(obj.get("subjects"))):
            found.extend(_subject(subject, self.namespaced_subjects, f"subjects[{index}]"))
        return found

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        found = self.validate(obj)
        if obj.get("roleRef") != old.get("roleRef"):
            found.append(
                Cause(
                    causes.INVALID,
                    f"Invalid value: {_go_role_ref(obj.get('roleRef'))}: cannot change roleRef",
                    "roleRef",
                )
            )
        return found


class ClusterRoleBindingStrategy(RoleBindingStrategy):
    role_kinds = ("ClusterRole",)
    namespaced_subjects = False


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _policy_rule(rule: Any, namespaced: bool, path: str) -> list[Cause]:
    """kube's ValidatePolicyRule."""
    if not isinstance(rule, dict):
        return []
    found = []
    if not rule.get("verbs"):
        found.append(causes.required(f"{path}.verbs", "verbs must contain at least one value"))
    urls = rule.get("nonResourceURLs")
    if urls:
        if namespaced:
            found.append(
                causes.invalid(
                    f"{path}.nonResourceURLs",
                    urls,
                    "namespaced rules cannot apply to non-resource URLs",
                )
            )
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            found.append(
                causes.invalid(
                    f"{path}.nonResourceURLs",
                    urls,
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
        return found
    if not rule.get("apiGroups"):
        found.append(
            causes.required(
                f"{path}.apiGroups", "resource rules must supply at least one api group"
            )
        )
    if not rule.get("resources"):
        found.append(
            causes.required(f"{path}.resources", "resource rules must supply at least one resource")
        )
    return found


def _subject(subject: Any, namespaced: bool, path: str) -> list[Cause]:
    """kube's ValidateRoleBindingSubject."""
    if not isinstance(subject, dict):
        return []
    found = []
    name = subject.get("name") or ""
    group = subject.get("apiGroup") or ""
    kind = subject.get("kind") or ""
    if not name:
        found.append(causes.required(f"{path}.name"))
    if kind == "ServiceAccount":
        if name:
            found.extend(
                causes.invalid(f"{path}.name", name, message)
                for message in is_dns1123_subdomain(name)
            )
        if group:
            found.append(causes.not_supported(f"{path}.apiGroup", group, [""]))
        if not namespaced and not subject.get("namespace"):
            found.append(causes.required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        if group != GROUP:
            found.append(causes.not_supported(f"{path}.apiGroup", group, [GROUP]))
    else:
        found.append(causes.not_supported(f"{path}.kind", kind, SUBJECT_KINDS))
    return found


def _label_selector(selector: Any, path: str) -> list[Cause]:
    """The parts of kube's ValidateLabelSelector a selector's schema does not already check."""
    if not isinstance(selector, dict):
        return []
    found = []
    for index, requirement in enumerate(_list(selector.get("matchExpressions"))):
        where = f"{path}.matchExpressions[{index}]"
        operator = requirement.get("operator") if isinstance(requirement, dict) else None
        values = requirement.get("values") if isinstance(requirement, dict) else None
        if operator in ("In", "NotIn") and not values:
            found.append(
                causes.required(
                    f"{where}.values", "must be specified when `operator` is 'In' or 'NotIn'"
                )
            )
        elif operator in ("Exists", "DoesNotExist") and values:
            found.append(
                causes.forbidden(
                    f"{where}.values",
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
        elif operator not in SELECTOR_OPERATORS:
            found.append(
                causes.invalid(f"{where}.operator", operator, "not a valid selector operator")
            )
    return found


def _default_binding(obj: Object) -> None:
    """kube's SetDefaults_RoleBinding and SetDefaults_Subject: the RBAC group for a roleRef and for User and
    Group subjects, none for a ServiceAccount."""
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = GROUP
    for subject in _list(obj.get("subjects")):
        if (
            isinstance(subject, dict)
            and not subject.get("apiGroup")
            and subject.get("kind") in ("User", "Group")
        ):
            subject["apiGroup"] = GROUP


def _go_role_ref(ref: Any) -> str:
    """A RoleRef as field.Invalid prints a struct (Go's %#v):
    `rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"view"}`."""
    ref = ref if isinstance(ref, dict) else {}
    fields = ", ".join(
        f"{label}:{causes.go_quote(str(ref.get(key) or ''))}"
        for label, key in (("APIGroup", "apiGroup"), ("Kind", "kind"), ("Name", "name"))
    )
    return f"rbac.RoleRef{{{fields}}}"
