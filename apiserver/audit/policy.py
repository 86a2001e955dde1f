"""What to record of a request (kube's audit policy evaluator, k8s.io/apiserver pkg/audit/policy/checker.go):
a level, the stages to leave out and whether managed fields are left out of the recorded objects. The first
rule of an audit.k8s.io/v1 Policy that matches the request decides; a request no rule matches is not
recorded."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from apiserver.audit.event import Level, Stage
from apiserver.authorization.authorizer import Attributes


@dataclass(frozen=True, slots=True)
class AuditConfig:
    level: Level
    omit_stages: frozenset[Stage] = frozenset()
    omit_managed_fields: bool = False


class Policy(Protocol):
    def evaluate(self, attributes: Attributes) -> AuditConfig:
        """How to audit the request ``attributes`` describe (kube's PolicyRuleEvaluator)."""
        ...


class MetadataPolicy:
    """Every request at the Metadata level, every stage: what `--audit-log-path` records without
    `--audit-policy-file` (kube-apiserver would record nothing; apiforge kept its earlier behaviour)."""

    CONFIG = AuditConfig(Level.METADATA)

    def evaluate(self, attributes: Attributes) -> AuditConfig:
        return self.CONFIG


@dataclass(frozen=True, slots=True)
class GroupResources:
    """audit.k8s.io/v1 GroupResources: resources of one API group ("" the core group), by name or not."""

    group: str = ""
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PolicyRule:
    """audit.k8s.io/v1 PolicyRule: every non-empty selector must match; empty ones match everything."""

    level: Level
    users: frozenset[str] = frozenset()
    user_groups: frozenset[str] = frozenset()
    verbs: frozenset[str] = frozenset()
    resources: tuple[GroupResources, ...] = ()
    namespaces: frozenset[str] = frozenset()
    non_resource_urls: tuple[str, ...] = ()
    omit_stages: frozenset[Stage] = frozenset()
    omit_managed_fields: bool | None = None
    """None: the policy's own setting applies."""

    def matches(self, attributes: Attributes) -> bool:
        """kube's ruleMatches."""
        user = attributes.user
        if self.users and user.name not in self.users:
            return False
        if self.user_groups and not any(group in self.user_groups for group in user.groups):
            return False
        if self.verbs and attributes.verb not in self.verbs:
            return False
        if self.namespaces or self.resources:
            return self._matches_resource(attributes)
        if self.non_resource_urls:
            return not attributes.resource_request and any(
                _path_matches(attributes.path, spec) for spec in self.non_resource_urls
            )
        return True

    def _matches_resource(self, attributes: Attributes) -> bool:
        """kube's ruleMatchesResource: a cluster-scoped request's namespace is ""."""
        if not attributes.resource_request:
            return False
        if self.namespaces and attributes.namespace not in self.namespaces:
            return False
        if not self.resources:
            return True
        resource, subresource = attributes.resource, attributes.subresource
        combined = f"{resource}/{subresource}" if subresource else resource
        for selector in self.resources:
            if selector.group != attributes.api_group:
                continue
            if not selector.resources:
                return True
            if selector.resource_names and attributes.name not in selector.resource_names:
                continue
            for spec in selector.resources:
                if _resource_matches(spec, resource, subresource, combined):
                    return True
        return False


def _resource_matches(spec: str, resource: str, subresource: str, combined: str) -> bool:
    """``spec`` is "*", "resource", "resource/subresource", "*/subresource" or "resource/*". The strip
    calls trim character sets, as kube's strings.TrimLeft(res, "*/") and TrimRight(res, "/*") do."""
    if spec in ("*", combined):
        return True
    if subresource and spec.startswith("*/") and subresource == spec.lstrip("*/"):
        return True
    return spec.endswith("/*") and resource == spec.rstrip("/*")


def _path_matches(path: str, spec: str) -> bool:
    """kube's pathMatches: "*", the path itself, or a prefix ending in "*"."""
    if spec in ("*", path):
        return True
    return spec.endswith("*") and path.startswith(spec.rstrip("*"))


class RulePolicy:
    """An audit.k8s.io/v1 Policy: the policy-wide omitStages join every rule's (kube's
    NewPolicyRuleEvaluator); a request no rule matches gets level None."""

    def __init__(
        self,
        rules: tuple[PolicyRule, ...],
        omit_stages: frozenset[Stage] = frozenset(),
        omit_managed_fields: bool = False,
    ) -> None:
        self.rules = rules
        self._configs = tuple(
            AuditConfig(
                rule.level,
                rule.omit_stages | omit_stages,
                omit_managed_fields
                if rule.omit_managed_fields is None
                else rule.omit_managed_fields,
            )
            for rule in rules
        )
        self._default = AuditConfig(Level.NONE, omit_stages, omit_managed_fields)

    def evaluate(self, attributes: Attributes) -> AuditConfig:
        for rule, config in zip(self.rules, self._configs, strict=True):
            if rule.matches(attributes):
                return config
        return self._default
