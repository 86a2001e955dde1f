"""How generated things are named: Python packages per group, OpenAPI component names, model class names."""

from __future__ import annotations

import re

CORE_PACKAGE = "core"


def group_package(group: str) -> str:
    """The Python package of a group: "" → core, stable.example.com → stable_example_com."""
    if not group:
        return CORE_PACKAGE
    return re.sub(r"[^0-9a-zA-Z_]", "_", group)


def reversed_group(group: str) -> str:
    """kube-openapi's component prefix: stable.example.com → com.example.stable; core → io.k8s.api.core."""
    if not group:
        return "io.k8s.api.core"
    return ".".join(reversed(group.split(".")))


# kube-openapi names a built-in type after its Go package: k8s.io/api/<the group's first label>, but for the
# two groups served by their own servers' packages.
_BUILTIN_PACKAGES = {
    "apiextensions.k8s.io": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions",
    "apiregistration.k8s.io": "io.k8s.kube-aggregator.pkg.apis.apiregistration",
}


def component_name(group: str, version: str, kind: str, builtin: bool = False) -> str:
    """The OpenAPI component of a kind, as kube-apiserver names it: by reversed group for CRDs
    (com.example.stable.v1.CronTab), by Go package for built-ins (io.k8s.api.rbac.v1.Role)."""
    if builtin and group:
        prefix = _BUILTIN_PACKAGES.get(group, f"io.k8s.api.{group.split('.')[0]}")
        return f"{prefix}.{version}.{kind}"
    return f"{reversed_group(group)}.{version}.{kind}"


def pascal(name: str) -> str:
    """A field name as part of a class name: cronSpec → CronSpec, label-selector → LabelSelector."""
    parts = re.split(r"[^0-9a-zA-Z]+", name)
    return "".join(p[:1].upper() + p[1:] for p in parts if p)


def api_path_prefix(group: str, version: str) -> str:
    """/api/v1 for core, /apis/<group>/<version> otherwise."""
    return f"/api/{version}" if not group else f"/apis/{group}/{version}"


def openapi_path_key(group: str, version: str) -> str:
    """The key of a group-version in the /openapi/v3 index: api/v1, apis/<g>/<v>."""
    return api_path_prefix(group, version).lstrip("/")
