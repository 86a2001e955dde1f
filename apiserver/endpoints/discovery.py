"""Legacy discovery documents (/api, /apis, /api/v1, /apis/<g>[/<v>]), built once from the Scheme.

Clients decide what they may do from these: `verbs` drives which requests they try, `shortNames` and
`categories` drive `kubectl get ct` and `kubectl get all`, and kopf patches `/status` only because the
`<plural>/status` entry is listed (API-CONVENTIONS.md §3.1).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

from apiserver.endpoints.routes import subresources
from apiserver.machinery.scheme import ResourceType, Scheme, VersionType
from apiserver.registry.rest import DEFAULT_OPTIONS, RESTOptions


def storage_version_hash(scheme: Scheme, resource: ResourceType) -> str:
    """kube's discovery.StorageVersionHash: the first 8 bytes of sha256("<group>/<version>/<kind>") of the
    kind the objects are stored as, base64 (staging/src/k8s.io/apiserver/pkg/endpoints/discovery/
    storageversionhash.go); a resource stored as another's (events.k8s.io Events) shares that one's."""
    stored = scheme.resource(*resource.stored_as) if resource.stored_as else None
    stored = stored or resource
    gvk = f"{stored.group}/{stored.storage_version.name}/{stored.kind}"
    return base64.b64encode(hashlib.sha256(gvk.encode()).digest()[:8]).decode()


def resource_entries(
    resource: ResourceType, version: VersionType, options: RESTOptions, version_hash: str = ""
) -> list[dict[str, Any]]:
    """The resource's entry and one per subresource, with the verbs routed (endpoints.routes)."""
    entry: dict[str, Any] = {
        "name": resource.plural,
        "singularName": resource.singular,
        "namespaced": resource.namespaced,
        "kind": resource.kind,
        "verbs": list(resource.verbs),
    }
    if resource.short_names:
        entry["shortNames"] = list(resource.short_names)
    if resource.categories:
        entry["categories"] = list(resource.categories)
    if version_hash and resource.persisted:
        entry["storageVersionHash"] = version_hash
    entries = [entry]
    for sub in subresources(resource, version, options):
        listed: dict[str, Any] = {
            "name": f"{resource.plural}/{sub.name}",
            "singularName": "",
            "namespaced": resource.namespaced,
        }
        if sub.body is not None:
            listed["group"], listed["version"], _ = sub.body
        entries.append(
            {**listed, "kind": sub.body[2] if sub.body else resource.kind, "verbs": list(sub.verbs)}
        )
    return entries


def _group_entry(group: str, versions: list[str]) -> dict[str, Any]:
    listed = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": listed, "preferredVersion": listed[0]}


def _aggregated_resource(
    resource: ResourceType, version: VersionType, options: RESTOptions
) -> dict[str, Any]:
    """One resource in aggregated discovery (apidiscovery.k8s.io/v2 APIResourceDiscovery)."""
    same_version = {"group": "", "version": "", "kind": resource.kind}
    entry: dict[str, Any] = {
        "resource": resource.plural,
        "responseKind": same_version,
        "scope": "Namespaced" if resource.namespaced else "Cluster",
        "singularResource": resource.singular,
        "verbs": list(resource.verbs),
    }
    if resource.short_names:
        entry["shortNames"] = list(resource.short_names)
    if resource.categories:
        entry["categories"] = list(resource.categories)
    listed = [
        {
            "subresource": sub.name,
            "responseKind": (
                dict(zip(("group", "version", "kind"), sub.body, strict=True))
                if sub.body is not None
                else same_version
            ),
            "verbs": list(sub.verbs),
        }
        for sub in subresources(resource, version, options)
    ]
    if listed:
        entry["subresources"] = listed
    return entry


AGGREGATED_TYPES = {
    "v2": b"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
    "v2beta1": b"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
}


def aggregated_version(accept: str) -> str | None:
    """The aggregated discovery version the client asks for first, if any (client-go judges the answer by
    these Content-Type parameters only, in any order)."""
    for media_range in accept.split(","):
        parameters = {
            key.strip(): value.strip()
            for key, _, value in (part.partition("=") for part in media_range.split(";")[1:])
        }
        if (
            parameters.get("g") == "apidiscovery.k8s.io"
            and parameters.get("as") == "APIGroupDiscoveryList"
        ):
            version = parameters.get("v", "")
            if version in AGGREGATED_TYPES:
                return version
    return None


class Discovery:
    """Every discovery document, pre-encoded: discovery is requested often and never changes while serving."""

    def __init__(
        self, scheme: Scheme, rest: Mapping[tuple[str, str], RESTOptions] | None = None
    ) -> None:
        """``rest``: the storage wiring of the resources that have one (their create and update
        subresources are listed)."""
        rest = rest or {}

        def options(resource: ResourceType) -> RESTOptions:
            return rest.get((resource.group, resource.plural), DEFAULT_OPTIONS)

        self.documents: dict[str, bytes] = {}
        self.aggregated: dict[tuple[str, str], bytes] = {}
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
                    for entry in resource_entries(
                        resource, served, options(resource), storage_version_hash(scheme, resource)
                    )
                ]
                path = f"/apis/{group_version}" if group else f"/api/{version}"
                # kube's legacy /api/v1 list names no apiVersion, a group's does
                type_meta = {"kind": "APIResourceList", **({"apiVersion": "v1"} if group else {})}
                self.documents[path] = orjson.dumps(
                    {**type_meta, "groupVersion": group_version, "resources": resources}
                )

        for prefix, selected in (
            ("/api", {"": groups.get("", [])}),
            ("/apis", {g: v for g, v in groups.items() if g}),
        ):
            for version in AGGREGATED_TYPES:
                self.aggregated[(prefix, version)] = orjson.dumps(
                    {
                        "kind": "APIGroupDiscoveryList",
                        "apiVersion": f"apidiscovery.k8s.io/{version}",
                        "metadata": {},
                        "items": [
                            {
                                "metadata": {"name": group} if group else {},
                                "versions": [
                                    {
                                        "version": served,
                                        "freshness": "Current",
                                        "resources": [
                                            _aggregated_resource(
                                                resource, version_type, options(resource)
                                            )
                                            for resource, version_type in scheme.resources_in(
                                                group, served
                                            )
                                        ],
                                    }
                                    for served in served_versions
                                ],
                            }
                            for group, served_versions in selected.items()
                        ],
                    }
                )

    def document(self, path: str) -> bytes | None:
        return self.documents.get(path.rstrip("/") or path)

    def aggregated_document(self, path: str, version: str) -> bytes | None:
        return self.aggregated.get((path.rstrip("/") or path, version))
