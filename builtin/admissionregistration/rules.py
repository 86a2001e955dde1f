"""Whether one rule of a webhook or policy selects a write (kube's webhook/predicates/rules.Matcher,
staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules/rules.go): every field is a list
where ``*`` matches anything; a resource is ``plural``, ``plural/subresource``, ``*`` (every resource, no
subresource), ``*/sub``, ``plural/*`` (the resource and all its subresources) or ``*/*``; scope is
``Cluster``, ``Namespaced`` or ``*`` (the default), a Namespace being cluster-scoped."""

from __future__ import annotations

from typing import Any

from apiserver.admission.interface import Attributes

NAMESPACES = ("", "v1", "namespaces")
"""The Namespace resource: cluster-scoped, though kube's request for one carries its name as namespace."""
CONFIGURATION_KINDS = frozenset(
    {
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
    }
)


def exempt(attributes: Attributes) -> bool:
    """Writes of admission configuration are never judged by it, so that none can lock itself in place
    (kube's IsExemptAdmissionConfigurationResource)."""
    resource = attributes.resource
    return resource.group == "admissionregistration.k8s.io" and resource.kind in CONFIGURATION_KINDS


def _listed(values: Any, value: str) -> bool:
    return isinstance(values, list) and any(v == "*" or v == value for v in values)


def _resource_listed(resources: Any, plural: str, subresource: str) -> bool:
    if not isinstance(resources, list):
        return False
    for entry in resources:
        if not isinstance(entry, str):
            continue
        name, _, sub = entry.partition("/")
        if (name == "*" or name == plural) and (sub == "*" or sub == subresource):
            return True
    return False


def _scoped(scope: Any, gvr: tuple[str, str, str], namespace: str) -> bool:
    if scope is None or scope == "*":
        return True
    if scope == "Namespaced":
        return gvr != NAMESPACES and bool(namespace)
    if scope == "Cluster":
        return gvr == NAMESPACES or not namespace
    return False


def rule_matches(rule: Any, attributes: Attributes, gvr: tuple[str, str, str]) -> bool:
    """``rule`` selects the write, its resource named ``gvr`` (group, version, plural): the written one or
    an equivalent."""
    if not isinstance(rule, dict):
        return False
    group, version, plural = gvr
    return (
        _scoped(rule.get("scope"), gvr, attributes.namespace)
        and _listed(rule.get("operations"), attributes.operation.value)
        and _listed(rule.get("apiGroups"), group)
        and _listed(rule.get("apiVersions"), version)
        and _resource_listed(rule.get("resources"), plural, attributes.subresource)
    )
