"""Which writes a webhook's ``rules`` select (kube's webhook/predicates/rules.Matcher): every rule field is a
list where ``*`` matches anything; a resource is ``plural``, ``plural/subresource``, ``*`` (every resource,
no subresource), ``*/sub``, ``plural/*`` or ``*/*``; scope is Cluster, Namespaced or ``*``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from apiserver.admission.interface import Attributes
from apiserver.machinery.scheme import VersionType


def _listed(values: Any, value: str) -> bool:
    return isinstance(values, list) and any(v == "*" or v == value for v in values)


def _resource_listed(resources: Any, plural: str, subresource: str) -> bool:
    if not isinstance(resources, list):
        return False
    for entry in resources:
        if not isinstance(entry, str):
            continue
        if entry == "*/*":
            return True
        name, _, sub = entry.partition("/")
        if (name == "*" or name == plural) and (sub == subresource or (sub == "*" and subresource)):
            return True
    return False


def _scoped(scope: Any, namespace: str) -> bool:
    if scope == "Cluster":
        return not namespace
    if scope == "Namespaced":
        return bool(namespace)
    return True  # "*" (the default)


def rule_matches(rule: Any, attributes: Attributes, version: str) -> bool:
    """``rule`` selects the write with its resource seen in ``version``."""
    if not isinstance(rule, dict):
        return False
    resource = attributes.resource
    return (
        _listed(rule.get("operations"), attributes.operation.value)
        and _listed(rule.get("apiGroups"), resource.group)
        and _listed(rule.get("apiVersions"), version)
        and _resource_listed(rule.get("resources"), resource.plural, attributes.subresource)
        and _scoped(rule.get("scope", "*"), attributes.namespace)
    )


def matched_version(
    rules: Iterable[Any], attributes: Attributes, requested: VersionType, equivalent: bool
) -> VersionType | None:
    """The version a webhook is sent the object in: the one written, when a rule selects it; with
    ``matchPolicy: Equivalent``, else the first served version of the same resource a rule selects (kube
    converts the object to it); None when no rule selects the write."""
    rules = list(rules)
    candidates = [requested]
    if equivalent:
        candidates.extend(
            v for v in attributes.resource.served_versions if v.name != requested.name
        )
    for version in candidates:
        if any(rule_matches(rule, attributes, version.name) for rule in rules):
            return version
    return None
