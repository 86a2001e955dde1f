"""Turn a URL path into what it addresses (kube's RequestInfoFactory, k8s.io/apiserver/pkg/endpoints/request).

`/api/v1/namespaces/{ns}/{plural}[/{name}[/{sub}]]`, `/apis/{g}/{v}/{plural}[/{name}[/{sub}]]` and the special
case of namespaces themselves: `/api/v1/namespaces/{name}[/status|/finalize]`.
"""

from __future__ import annotations

from dataclasses import dataclass

_NAMESPACE_SUBRESOURCES = ("status", "finalize")


@dataclass(frozen=True, slots=True)
class ResourcePath:
    group: str
    version: str
    plural: str
    namespace: str | None = None
    name: str = ""
    subresource: str = ""


def parse_resource_path(path: str) -> ResourcePath | None:
    """The resource a path names, or None when it is not a resource path (discovery, unknown, malformed)."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 3 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 4 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    namespace: str | None = None
    if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in _NAMESPACE_SUBRESOURCES:
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3:
        return None
    plural = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    return ResourcePath(group, version, plural, namespace, name, subresource)
