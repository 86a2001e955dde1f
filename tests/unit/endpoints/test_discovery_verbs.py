"""Every shipped resource is discovered as kube-apiserver discovers it (verbs, short names, categories, scope,
kind, singular name, subresources and their verbs: tests/fixtures/discovery, kube's golden documents), and
answers the methods it lists and only those: a verb discovery does not list is a 405 MethodNotAllowed
Status, on a path that serves other methods (kube's installer registers no route for it); a listed one is
routed. (k8s.io/apiserver/pkg/endpoints/installer.go, go-restful's 405 as
k8s.io/apiserver/pkg/server/handler.go serviceErrorHandler turns it into a Status.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from generated.server import build_scheme

FIXTURES = Path(__file__).parents[2] / "fixtures" / "discovery"
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
ROUTE_NOT_FOUND = "the server could not find the requested resource"
MERGE = "application/merge-patch+json"
METHOD_NOT_ALLOWED = "the server does not allow this method on the requested resource"
NOT_SERVED = {
    ("", "v1", "services", "proxy"): "apiforge proxies to no Service backends",
}
"""Subresources kube serves that apiforge does not; each must still be missing (else drop it here)."""


def _load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


SERVED_BEYOND_KUBE = {
    # kept on purpose (tests/differential/divergences.yaml): kube 1.34 serves v1beta1 SelfSubjectReview only
    # when --runtime-config enables it, and kubectl 1.27's `auth whoami` asks for it; it is served as v1 is
    ("authentication.k8s.io", "v1beta1", "selfsubjectreviews"): (
        "authentication.k8s.io",
        "v1",
        "selfsubjectreviews",
    ),
}


def kube_resources() -> dict[tuple[str, str, str], dict[str, Any]]:
    """kube's aggregated entries by (group, version, resource), the core group's from its legacy list."""
    found = {}
    for group in _load("aggregated_v2.json")["items"]:
        for version in group["versions"]:
            for resource in version["resources"]:
                found[(group["metadata"]["name"], version["version"], resource["resource"])] = (
                    resource
                )
    return found


def served(api: httpx.Client) -> dict[tuple[str, str, str], dict[str, Any]]:
    """apiforge's aggregated entries of every resource it serves."""
    found = {}
    for root in ("/api", "/apis"):
        document = api.get(root, headers={"Accept": AGGREGATED}).json()
        for group in document["items"]:
            for version in group["versions"]:
                for resource in version["resources"]:
                    # kube's core group (of /api) has no name in its metadata
                    name = group["metadata"].get("name", "")
                    found[(name, version["version"], resource["resource"])] = resource
    return found


def _comparable(entry: dict[str, Any]) -> dict[str, Any]:
    """An aggregated entry with its lists in a fixed order (kube promises none for verbs)."""
    subresources = {
        sub["subresource"]: {"responseKind": sub["responseKind"], "verbs": sorted(sub["verbs"])}
        for sub in entry.get("subresources", [])
    }
    return {
        "responseKind": entry["responseKind"],
        "scope": entry["scope"],
        "singularResource": entry["singularResource"],
        "verbs": sorted(entry["verbs"]),
        "shortNames": entry.get("shortNames", []),
        "categories": sorted(entry.get("categories", [])),
        "subresources": subresources,
    }


def test_every_shipped_resource_is_discovered_as_kube_discovers_it(api: httpx.Client) -> None:
    kube = kube_resources()
    core = {r["name"]: r for r in _load("api__v1.json")["resources"]}
    ours = served(api)
    missing_subresources = set()
    compared = 0
    for (group, version, plural), entry in sorted(ours.items()):
        if (group, version, plural) not in BUILTIN:
            continue  # a kind of this repository's own definitions, not kube's
        key = SERVED_BEYOND_KUBE.get((group, version, plural), (group, version, plural))
        expected = _core_as_aggregated(core, plural) if group == "" else kube[key]
        mine, theirs = _comparable(entry), _comparable(expected)
        for sub in set(theirs["subresources"]) - set(mine["subresources"]):
            missing_subresources.add((group, version, plural, sub))
            del theirs["subresources"][sub]
        assert mine == theirs, (group, version, plural)
        compared += 1
    assert missing_subresources == set(NOT_SERVED)
    assert compared == len(BUILTIN)


def _core_as_aggregated(core: dict[str, dict[str, Any]], plural: str) -> dict[str, Any]:
    """kube's legacy core/v1 entry of ``plural`` (and its subresources) in the aggregated shape."""
    entry = core[plural]
    same = {"group": "", "version": "", "kind": entry["kind"]}
    subresources = []
    for name, sub in core.items():
        parent, _, subresource = name.partition("/")
        if parent == plural and subresource:
            kind = {
                "group": sub.get("group", ""),
                "version": sub.get("version", ""),
                "kind": sub["kind"],
            }
            subresources.append(
                {"subresource": subresource, "responseKind": kind if "group" in sub else same,
                 "verbs": sub["verbs"]}
            )  # fmt: skip
    aggregated = {
        "resource": plural,
        "responseKind": same,
        "scope": "Namespaced" if entry["namespaced"] else "Cluster",
        "singularResource": entry["singularName"],
        "verbs": entry["verbs"],
        "subresources": subresources,
    }
    for key in ("shortNames", "categories"):
        if key in entry:
            aggregated[key] = entry[key]
    return aggregated


def test_legacy_core_list_matches_kubes_for_the_shipped_resources(api: httpx.Client) -> None:
    kube = {r["name"]: r for r in _load("api__v1.json")["resources"]}
    ours = {r["name"]: r for r in api.get("/api/v1").json()["resources"]}
    for name, entry in ours.items():
        expected = dict(kube[name])
        assert sorted(entry.pop("verbs")) == sorted(expected.pop("verbs")), name
        assert entry == expected, name
    assert {name for name in kube if name not in ours} == {
        f"{plural}/{sub}" for group, _, plural, sub in NOT_SERVED if group == ""
    }


# -- the methods each verb is, and what is not listed -----------------------------------------------

ITEM = {"get": "GET", "update": "PUT", "patch": "PATCH", "delete": "DELETE"}
COLLECTION = {"list": "GET", "create": "POST", "deletecollection": "DELETE"}
SUBRESOURCE = {
    "get": "GET",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "create": "POST",
}


def _request(api: httpx.Client, method: str, url: str, watch: bool = False) -> httpx.Response:
    """``method`` on ``url`` as a dry run where it writes: routed or not, nothing changes."""
    params: dict[str, str] = {} if method == "GET" else {"dryRun": "All"}
    if watch:
        params = {"watch": "1", "timeoutSeconds": "1"}
    headers = {"Content-Type": "application/merge-patch+json"} if method == "PATCH" else {}
    body = b"{}" if method in ("POST", "PUT", "PATCH") else None
    with api.stream(method, url, params=params, headers=headers, content=body) as response:
        if response.status_code >= 400:
            response.read()
        return response


def _refused(response: httpx.Response) -> bool:
    """Whether the route is missing: 405, or the 404 of a path that serves nothing (not an object's)."""
    if response.status_code == 405:
        return True
    return response.status_code == 404 and response.json()["message"] == ROUTE_NOT_FOUND


def _paths(group: str, version: str, plural: str, namespaced: bool) -> tuple[str, str]:
    root = f"/apis/{group}/{version}" if group else f"/api/{version}"
    collection = f"{root}/namespaces/default/{plural}" if namespaced else f"{root}/{plural}"
    return collection, f"{collection}/identity-absent"


def shipped_resources() -> list[tuple[str, str, str, dict[str, Any]]]:
    kube = kube_resources()
    core = {r["name"]: r for r in _load("api__v1.json")["resources"]}
    resources = [
        (group, version, plural, entry)
        for (group, version, plural), entry in kube.items()
        if (group, version, plural) in SERVED
    ]
    resources += [
        ("", "v1", name, _core_as_aggregated(core, name)) for name in core if "/" not in name
    ]
    return sorted(resources, key=lambda r: r[:3])


SERVED = {
    (resource.group, version.name, resource.plural): resource.builtin
    for resource in build_scheme()
    if resource.standalone
    for version in resource.served_versions
}
BUILTIN = {key for key, builtin in SERVED.items() if builtin}
"""Every built-in resource apiforge serves: each must be in kube's discovery fixture."""


@pytest.mark.parametrize(
    ("group", "version", "plural", "entry"),
    shipped_resources(),
    ids=[f"{g or 'core'}/{v}/{p}" for g, v, p, _ in shipped_resources()],
)
def test_every_listed_verb_is_routed_and_every_other_is_refused(
    api: httpx.Client, group: str, version: str, plural: str, entry: dict[str, Any]
) -> None:
    namespaced = entry["scope"] == "Namespaced"
    collection, item = _paths(group, version, plural, namespaced)
    verbs = set(entry["verbs"])
    item_served = bool(verbs & set(ITEM))
    for verb, method in ITEM.items():
        response = _request(api, method, item)
        if verb in verbs:
            assert not _refused(response), (verb, response.text)
        elif item_served:
            _assert_method_not_allowed(response)
        else:  # kube's installer registers no object path for a create-only resource
            assert response.status_code == 404 and response.json()["message"] == ROUTE_NOT_FOUND
    for verb, method in COLLECTION.items():
        response = _request(api, method, collection)
        if verb in verbs:
            assert not _refused(response), (verb, response.text)
        else:
            _assert_method_not_allowed(response)
    watched = _request(api, "GET", collection, watch=True)
    if "watch" in verbs:
        assert watched.status_code == 200
    else:
        _assert_method_not_allowed(watched)
    for sub in entry.get("subresources", []):
        if (group, version, plural, sub["subresource"]) in NOT_SERVED:
            continue
        for verb, method in SUBRESOURCE.items():
            response = _request(api, method, f"{item}/{sub['subresource']}")
            if verb in sub["verbs"] and sub["subresource"] == "token":
                # issued only with a signing key, which the in-process server has none of
                # (tests/unit/builtin/test_serviceaccount.py serves it with one)
                continue
            if verb in sub["verbs"]:
                assert not _refused(response), (sub["subresource"], verb, response.text)
            else:
                _assert_method_not_allowed(response)


def _assert_method_not_allowed(response: httpx.Response) -> None:
    assert response.status_code == 405, response.text
    status = response.json()
    assert (status["kind"], status["reason"], status["message"]) == (
        "Status",
        "MethodNotAllowed",
        METHOD_NOT_ALLOWED,
    )


def test_deleting_the_namespace_collection_is_405_and_deletes_nothing(api: httpx.Client) -> None:
    created = api.post("/api/v1/namespaces", json={"metadata": {"name": "kept-by-405"}})
    assert created.status_code == 201, created.text
    _assert_method_not_allowed(api.delete("/api/v1/namespaces"))
    kept = api.get("/api/v1/namespaces/kept-by-405").json()
    assert kept["status"]["phase"] == "Active"
    assert "deletionTimestamp" not in kept["metadata"]


def test_namespace_finalizers_change_only_through_finalize(api: httpx.Client) -> None:
    """kube's namespaceStrategy keeps ``spec.finalizers`` on an update or patch; a PUT to namespaces/finalize
    (FinalizeREST, pkg/registry/core/namespace/storage) sets them, and clearing them on a namespace being
    deleted finishes its deletion."""
    url = "/api/v1/namespaces/finalized-by-put"
    finalizers = {"spec": {"finalizers": ["example.com/hold"]}}
    created = api.post(
        "/api/v1/namespaces", json={"metadata": {"name": "finalized-by-put"}, **finalizers}
    )
    assert created.json()["spec"]["finalizers"] == ["example.com/hold", "kubernetes"]
    patched = api.patch(url, json={"spec": {"finalizers": []}}, headers={"Content-Type": MERGE})
    assert patched.json()["spec"]["finalizers"] == ["example.com/hold", "kubernetes"]
    body = api.get(url).json()
    body["spec"]["finalizers"] = ["example.com/hold"]
    finalized = api.put(f"{url}/finalize", json=body)
    assert finalized.status_code == 200, finalized.text
    assert finalized.json()["spec"]["finalizers"] == ["example.com/hold"]
    assert finalized.json()["status"] == {"phase": "Active"}
    assert api.delete(url).json()["status"]["phase"] == "Terminating"
    body = api.get(url).json()
    body["spec"]["finalizers"] = []
    del body["metadata"]["resourceVersion"]  # the namespace controller may write it meanwhile
    assert api.put(f"{url}/finalize", json=body).status_code == 200
    assert api.get(url).status_code == 404
