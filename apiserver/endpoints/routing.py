"""Turn a request into what it addresses (kube's RequestInfoFactory, k8s.io/apiserver/pkg/endpoints/request).

`/api/v1/namespaces/{ns}/{plural}[/{name}[/{sub}]]`, `/apis/{g}/{v}/{plural}[/{name}[/{sub}]]` and the special
case of namespaces themselves: `/api/v1/namespaces/{name}[/status|/finalize]`.

Two views come from one split of the path: ``RequestInfo``, what the filter chain (authorization, audit, limits)
knows of any request, and ``ResourcePath``, what the resource handler serves. Sharing the split is what makes
the request that was authorized the one that is served.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from apiserver.endpoints.http import parse_query
from apiserver.machinery.errors import APIError
from apiserver.machinery.selectors import field_selector_terms

_NAMESPACE_SUBRESOURCES = frozenset(("status", "finalize"))
_PATH_VERBS = frozenset(("proxy", "watch"))
"""kube's specialVerbs: the deprecated `/api/v1/watch/...` and `/api/v1/proxy/...` forms name their verb."""
_METHOD_VERBS = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}


class ResourcePath(NamedTuple):
    """The resource a request's path names (named tuples here, not frozen dataclasses: one of each is built
    for every request, and a frozen dataclass takes five times as long to build)."""

    group: str
    version: str
    plural: str
    namespace: str | None = None
    name: str = ""
    subresource: str = ""


class RequestInfo(NamedTuple):
    """A request as kube's RequestInfo describes it. ``verb`` is the Kubernetes verb of a resource request
    (get, list, watch, create, update, patch, delete, deletecollection) and the lowercase HTTP method of any
    other request; ``namespace`` of `/api/v1/namespaces/{name}` is that namespace's name, as in kube."""

    path: str
    verb: str
    is_resource_request: bool = False
    api_prefix: str = ""
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""


def _split(path: str) -> tuple[str, str, str, list[str]] | None:
    """(prefix, group, version, the parts after the version) of an API path, or None for any other path.
    Empty segments are dropped (`//`, a trailing `/`)."""
    parts = path.strip("/").split("/")
    if "" in parts:
        parts = [part for part in parts if part]
    if len(parts) < 3:
        return None
    prefix = parts[0]
    if prefix == "api":
        return prefix, "", parts[1], parts[2:]
    if prefix == "apis" and len(parts) >= 4:
        return prefix, parts[1], parts[2], parts[3:]
    return None


@lru_cache(maxsize=4096)
def parse_resource_path(path: str) -> ResourcePath | None:
    """The resource a path names, or None when it is not a resource path (discovery, unknown, malformed);
    remembered, as a client asks for the same few paths over and over."""
    split = _split(path)
    if split is None:
        return None
    _, group, version, rest = split
    namespace: str | None = None
    if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in _NAMESPACE_SUBRESOURCES:
        namespace, rest = rest[1], rest[2:]
    size = len(rest)
    if size > 3:
        return None
    return ResourcePath(
        group,
        version,
        rest[0],
        namespace,
        rest[1] if size > 1 else "",
        rest[2] if size > 2 else "",
    )


def request_info(method: str, path: str, query_string: bytes) -> RequestInfo:
    """kube's NewRequestInfo. A GET of a collection is a list, or a watch when ``watch`` is true (read as the
    handler reads it), and names the object its field selector pins with ``metadata.name=``; a DELETE of
    a collection is a deletecollection."""
    split = _split(path)
    if split is None:
        return RequestInfo(path, method.lower())
    prefix, group, version, rest = split
    if rest[0] in _PATH_VERBS:
        verb, rest = rest[0], rest[1:]
    else:
        verb = _METHOD_VERBS.get(method, "")
    namespace = ""
    size = len(rest)
    if size > 1 and rest[0] == "namespaces":
        namespace = rest[1]
        # namespaces/{ns}/{resource}..., unless it is the namespace's own status or finalize
        if size > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
            size -= 2
    resource = rest[0] if size else ""
    name = rest[1] if size > 1 else ""
    subresource = rest[2] if size > 2 and verb != "proxy" else ""
    if not name:
        if verb == "get":
            query = parse_query(query_string)
            verb = "watch" if query.get("watch", "").lower() in ("true", "1") else "list"
            name = _selected_name(query.get("fieldSelector", ""))
        elif verb == "delete":
            verb = "deletecollection"
    return RequestInfo(
        path, verb, True, prefix, group, version, namespace, resource, subresource, name
    )


def _selected_name(field_selector: str) -> str:
    """The name a field selector requires exactly (kube's RequiresExactMatch("metadata.name")) when it is a
    valid path segment; "" for none, and for a selector that does not parse (kube's request info then
    names nothing either)."""
    try:
        terms = field_selector_terms(field_selector)
    except APIError:
        return ""
    for field, operator, name in terms:
        if field == "metadata.name" and operator != "!=":
            valid = name not in (".", "..") and "/" not in name and "%" not in name
            return name if valid else ""
    return ""
