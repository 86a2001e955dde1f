"""Discovery and OpenAPI merged from the server's own and its backends' (kube-aggregator's discovery
aggregation and OpenAPI controllers), as pure functions over JSON: what a client sees at /apis, in
aggregated discovery and in /openapi/v3 and /openapi/v2 names the proxied group-versions beside the
local ones, so that `kubectl api-resources` and `kubectl explain` show both."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SUBRESOURCE_SEPARATOR = "/"


@dataclass(frozen=True, slots=True)
class RemoteVersion:
    """What the aggregator knows of one proxied group-version."""

    group: str
    version: str
    group_priority: int
    version_priority: int
    resources: tuple[dict[str, Any], ...]
    """The backend's APIResourceList ``resources``."""
    current: bool
    """Whether the backend answered its last check (kube's freshness Current, else Stale)."""


def _ordered(remotes: Sequence[RemoteVersion]) -> list[RemoteVersion]:
    """kube's order: groups by groupPriorityMinimum, versions by versionPriority, highest first."""
    return sorted(remotes, key=lambda r: (-r.group_priority, r.group, -r.version_priority))


def _version_entry(group: str, version: str) -> dict[str, str]:
    return {"groupVersion": f"{group}/{version}", "version": version}


def merge_group_list(local: dict[str, Any], remotes: Sequence[RemoteVersion]) -> dict[str, Any]:
    """/apis (APIGroupList): the remote versions added to their groups, new groups after the local ones."""
    groups: list[dict[str, Any]] = [dict(g) for g in local.get("groups") or ()]
    by_name = {g["name"]: g for g in groups}
    for remote in _ordered(remotes):
        entry = by_name.get(remote.group)
        if entry is None:
            entry = {"name": remote.group, "versions": [], "preferredVersion": None}
            by_name[remote.group] = entry
            groups.append(entry)
        versions = list(entry.get("versions") or ())
        if all(v.get("version") != remote.version for v in versions):
            versions.append(_version_entry(remote.group, remote.version))
        entry["versions"] = versions
        if entry.get("preferredVersion") is None:
            entry["preferredVersion"] = versions[0]
    return {**local, "groups": groups}


def group_document(
    group: str, local: dict[str, Any] | None, remotes: Sequence[RemoteVersion]
) -> dict[str, Any]:
    """/apis/<group> (APIGroup) of a group some of whose versions are proxied."""
    merged = merge_group_list(
        {"groups": [local] if local else []}, [r for r in remotes if r.group == group]
    )
    entry = next(g for g in merged["groups"] if g["name"] == group)
    return {"kind": "APIGroup", "apiVersion": "v1", **entry}


def _discovery_resources(resources: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """APIResourceList entries as aggregated discovery's APIResourceDiscovery (subresources folded in)."""
    main: dict[str, dict[str, Any]] = {}
    subresources: list[tuple[str, dict[str, Any]]] = []
    for resource in resources:
        name = str(resource.get("name", ""))
        kind = {
            "group": resource.get("group", ""),
            "version": resource.get("version", ""),
            "kind": resource.get("kind", ""),
        }
        if SUBRESOURCE_SEPARATOR in name:
            parent, _, subresource = name.partition(SUBRESOURCE_SEPARATOR)
            subresources.append(
                (
                    parent,
                    {
                        "subresource": subresource,
                        "responseKind": kind,
                        "verbs": resource.get("verbs", []),
                    },
                )
            )
            continue
        entry: dict[str, Any] = {
            "resource": name,
            "responseKind": kind,
            "scope": "Namespaced" if resource.get("namespaced") else "Cluster",
            "singularResource": resource.get("singularName", ""),
            "verbs": resource.get("verbs", []),
        }
        for key in ("shortNames", "categories"):
            if resource.get(key):
                entry[key] = resource[key]
        main[name] = entry
    for parent, entry in subresources:
        if parent in main:
            main[parent].setdefault("subresources", []).append(entry)
    return list(main.values())


def merge_aggregated(local: dict[str, Any], remotes: Sequence[RemoteVersion]) -> dict[str, Any]:
    """/apis as apidiscovery.k8s.io APIGroupDiscoveryList."""
    items: list[dict[str, Any]] = [dict(i) for i in local.get("items") or ()]
    by_name = {i["metadata"]["name"]: i for i in items}
    for remote in _ordered(remotes):
        item = by_name.get(remote.group)
        if item is None:
            item = {"metadata": {"name": remote.group}, "versions": []}
            by_name[remote.group] = item
            items.append(item)
        versions = [v for v in item.get("versions") or () if v.get("version") != remote.version]
        versions.append(
            {
                "version": remote.version,
                "freshness": "Current" if remote.current else "Stale",
                "resources": _discovery_resources(remote.resources),
            }
        )
        item["versions"] = versions
    return {**local, "items": items}


def merge_openapi_index(
    local: dict[str, Any], remote_paths: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """/openapi/v3: the backends' documents listed under their own hashed URLs (served by proxying)."""
    return {**local, "paths": {**(local.get("paths") or {}), **remote_paths}}


def merge_swagger(
    local: dict[str, Any], remotes: Sequence[tuple[str, dict[str, Any]]]
) -> dict[str, Any]:
    """/openapi/v2: each backend's paths under its group-version prefix, and the definitions the local
    document does not have (kube-aggregator's merge keeps the first of two same-named definitions)."""
    paths = dict(local.get("paths") or {})
    definitions = dict(local.get("definitions") or {})
    for prefix, document in remotes:
        for path, item in (document.get("paths") or {}).items():
            if path == prefix or path.startswith(prefix + "/"):
                paths[path] = item
        for name, definition in (document.get("definitions") or {}).items():
            definitions.setdefault(name, definition)
    return {**local, "paths": paths, "definitions": definitions}
