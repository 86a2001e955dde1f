"""Legacy discovery documents (/api, /apis, /api/v1, /apis/<g>[/<v>]), built once from the Scheme.

Clients decide what they may do from these: `verbs` drives which requests they try, `shortNames` and
`categories` drive `kubectl get ct` and `kubectl get all`, and kopf patches `/status` only because the
`<plural>/status` entry is listed (API-CONVENTIONS.md §3.1).
"""

from __future__ import annotations

from typing import Any

import orjson

from apiserver.scheme import ResourceType, Scheme, VersionType

RESOURCE_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
SUBRESOURCE_VERBS = ["get", "patch", "update"]


def resource_entries(resource: ResourceType, version: VersionType) -> list[dict[str, Any]]:
    entry: dict[str, Any] = {
        "name": resource.plural,
        "singularName": resource.singular,
        "namespaced": resource.namespaced,
        "kind": resource.kind,
        "verbs": RESOURCE_VERBS,
    }
    if resource.short_names:
        entry["shortNames"] = list(resource.short_names)
    if resource.categories:
        entry["categories"] = list(resource.categories)
    entries = [entry]
    if version.status_subresource:
        entries.append(
            {
                "name": f"{resource.plural}/status",
                "singularName": "",
                "namespaced": resource.namespaced,
                "kind": resource.kind,
                "verbs": SUBRESOURCE_VERBS,
            }
        )
    if version.scale is not None:
        entries.append(
            {
                "name": f"{resource.plural}/scale",
                "singularName": "",
                "namespaced": resource.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": SUBRESOURCE_VERBS,
            }
        )
    return entries


def _group_entry(group: str, versions: list[str]) -> dict[str, Any]:
    listed = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": listed, "preferredVersion": listed[0]}


class Discovery:
    """Every discovery document, pre-encoded: discovery is requested often and never changes while serving."""

    def __init__(self, scheme: Scheme) -> None:
        self.documents: dict[str, bytes] = {}
        groups = scheme.groups()
        self.documents["/api"] = orjson.dumps(
            {
                "kind": "APIVersions",
                "versions": groups.get("", []),
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
            }
        )
        named = [_group_entry(g, vs) for g, vs in groups.items() if g]
        self.documents["/apis"] = orjson.dumps(
            {"kind": "APIGroupList", "apiVersion": "v1", "groups": named}
        )
        for entry in named:
            self.documents[f"/apis/{entry['name']}"] = orjson.dumps(
                {"kind": "APIGroup", "apiVersion": "v1", **entry}
            )
        for group, versions in groups.items():
            for version in versions:
                group_version = f"{group}/{version}" if group else version
                resources = [
                    entry
                    for resource, served in scheme.resources_in(group, version)
                    for entry in resource_entries(resource, served)
                ]
                path = f"/apis/{group_version}" if group else f"/api/{version}"
                self.documents[path] = orjson.dumps(
                    {
                        "kind": "APIResourceList",
                        "apiVersion": "v1",
                        "groupVersion": group_version,
                        "resources": resources,
                    }
                )

    def document(self, path: str) -> bytes | None:
        return self.documents.get(path.rstrip("/") or path)
