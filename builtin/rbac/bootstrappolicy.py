"""The default RBAC policy (kube's plugin/pkg/auth/authorizer/rbac/bootstrappolicy, policy.go): the
ClusterRoles and ClusterRoleBindings every cluster starts with, their rules limited to the kinds this server
serves; and the roles the shipped custom kinds aggregate into admin, edit and view with, as a CRD author
labels them (one `apiforge:<group>:view` and one `apiforge:<group>:edit` ClusterRole per group)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from apiserver.machinery.scheme import ResourceType
from builtin.rbac.index import GROUP
from builtin.rbac.rules import READ, READ_WRITE, WRITE

AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
BOOTSTRAPPING = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"
MASTERS, AUTHENTICATED, UNAUTHENTICATED = (
    "system:masters",
    "system:authenticated",
    "system:unauthenticated",
)
DISCOVERY_URLS = (
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
)
PUBLIC_INFO_URLS = ("/healthz", "/livez", "/readyz", "/version", "/version/")
MONITORING = "system:monitoring"
MONITORING_URLS = (
    "/metrics",
    "/metrics/slis",
    "/livez",
    "/readyz",
    "/healthz",
    "/livez/*",
    "/readyz/*",
    "/healthz/*",
)
"""kube's system:monitoring role, bound to the group of that name (user.MonitoringGroup)."""
ISSUER_DISCOVERY_URLS = (
    "/.well-known/openid-configuration",
    "/.well-known/openid-configuration/",
    "/openid/v1/jwks",
    "/openid/v1/jwks/",
)
SERVICE_ACCOUNTS = "system:serviceaccounts"

Served = set[tuple[str, str]]
"""(group, plural) of every served resource."""


def _rule(
    verbs: Iterable[str], group: str, resources: Iterable[str], served: Served
) -> list[dict[str, Any]]:
    """A resource rule, keeping only the resources whose kind this server serves (none: no rule)."""
    kept = [r for r in resources if (group, r.split("/", 1)[0]) in served]
    return [{"verbs": list(verbs), "apiGroups": [group], "resources": kept}] if kept else []


def _urls(verbs: Iterable[str], urls: Iterable[str]) -> dict[str, Any]:
    return {"verbs": list(verbs), "nonResourceURLs": list(urls)}


def _role(
    name: str,
    rules: list[dict[str, Any]],
    labels: dict[str, str] | None = None,
    aggregate_from: str = "",
) -> dict[str, Any]:
    role: dict[str, Any] = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ClusterRole",
        "metadata": {
            "name": name,
            "labels": {**BOOTSTRAPPING, **(labels or {})},
            "annotations": {AUTOUPDATE: "true"},
        },
        "rules": rules,
    }
    if aggregate_from:
        role["aggregationRule"] = {
            "clusterRoleSelectors": [{"matchLabels": {AGGREGATE_TO + aggregate_from: "true"}}]
        }
    return role


def cluster_roles(served: Served, custom: Iterable[ResourceType]) -> list[dict[str, Any]]:
    """kube's ClusterRoles() for what is served, and the aggregated roles of the custom kinds."""
    core, authz, authn = "", "authorization.k8s.io", "authentication.k8s.io"
    to = {level: {AGGREGATE_TO + level: "true"} for level in ("admin", "edit", "view")}
    roles = [
        _role(
            "cluster-admin",
            [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, _urls(["*"], ["*"])],
        ),
        _role("system:discovery", [_urls(["get"], DISCOVERY_URLS)]),
        _role(
            "system:basic-user",
            _rule(
                ["create"], authz, ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], served
            )
            + _rule(["create"], authn, ["selfsubjectreviews"], served),
        ),
        _role("system:public-info-viewer", [_urls(["get"], PUBLIC_INFO_URLS)]),
        _role(MONITORING, [_urls(["get"], MONITORING_URLS)]),
        # for components that check others' tokens and rights (kube's system:auth-delegator, bound by
        # whoever needs it: kr8s's whoami, an aggregated server's delegated authentication)
        _role(
            "system:auth-delegator",
            _rule(["create"], authn, ["tokenreviews"], served)
            + _rule(["create"], authz, ["subjectaccessreviews"], served),
        ),
        _role("system:service-account-issuer-discovery", [_urls(["get"], ISSUER_DISCOVERY_URLS)]),
        _role("admin", [], aggregate_from="admin"),
        _role("edit", [], to["admin"], aggregate_from="edit"),
        _role("view", [], to["edit"], aggregate_from="view"),
        _role(
            "system:aggregate-to-admin",
            _rule(["create"], authz, ["localsubjectaccessreviews"], served)
            + _rule(READ_WRITE, GROUP, ["roles", "rolebindings"], served),
            to["admin"],
        ),
        _role(
            "system:aggregate-to-edit",
            _rule(READ, core, ["secrets"], served)
            + _rule(["impersonate"], core, ["serviceaccounts"], served)
            + _rule(
                WRITE,
                core,
                ["serviceaccounts", "services", "configmaps", "secrets", "events"],
                served,
            )
            + _rule(["create"], core, ["serviceaccounts/token"], served),
            to["edit"],
        ),
        _role(
            "system:aggregate-to-view",
            _rule(
                READ, core, ["serviceaccounts", "services", "services/status", "configmaps"], served
            )
            + _rule(READ, core, ["events", "namespaces/status"], served)
            + _rule(READ, core, ["namespaces"], served),
            to["view"],
        ),
    ]
    return roles + _custom_roles(custom, to)


def _custom_roles(
    custom: Iterable[ResourceType], to: dict[str, dict[str, str]]
) -> list[dict[str, Any]]:
    """Per group of custom kinds, a view role (read them, their status and scale) and an edit role (write
    them and their scale), labelled to aggregate into view and edit, and so into admin."""
    groups: dict[str, list[ResourceType]] = {}
    for resource in custom:
        groups.setdefault(resource.group, []).append(resource)
    roles = []
    for group, resources in sorted(groups.items()):
        readable, writable = [], []
        for resource in sorted(resources, key=lambda r: r.plural):
            version = resource.storage_version
            readable.append(resource.plural)
            writable.append(resource.plural)
            if version.status_subresource:
                readable.append(f"{resource.plural}/status")
            if version.scale is not None:
                readable.append(f"{resource.plural}/scale")
                writable.append(f"{resource.plural}/scale")
        read = {"verbs": list(READ), "apiGroups": [group], "resources": readable}
        write = {"verbs": list(WRITE), "apiGroups": [group], "resources": writable}
        roles.append(_role(f"apiforge:{group}:view", [read], to["view"]))
        roles.append(_role(f"apiforge:{group}:edit", [write], to["edit"]))
    return roles


def _binding(name: str, role: str, groups: Iterable[str]) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": name,
            "labels": dict(BOOTSTRAPPING),
            "annotations": {AUTOUPDATE: "true"},
        },
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "Group", "apiGroup": GROUP, "name": group} for group in groups],
    }


def cluster_role_bindings() -> list[dict[str, Any]]:
    """kube's ClusterRoleBindings() for the roles above."""
    return [
        _binding("cluster-admin", "cluster-admin", [MASTERS]),
        _binding("system:discovery", "system:discovery", [AUTHENTICATED]),
        _binding("system:basic-user", "system:basic-user", [AUTHENTICATED]),
        _binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            [AUTHENTICATED, UNAUTHENTICATED],
        ),
        _binding(MONITORING, MONITORING, [MONITORING]),
        _binding(
            "system:service-account-issuer-discovery",
            "system:service-account-issuer-discovery",
            [SERVICE_ACCOUNTS],
        ),
    ]
