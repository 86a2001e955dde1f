"""Discovery as kube serves it, in process: legacy (/api, /apis, group and group-version documents) and
aggregated (apidiscovery.k8s.io v2 and v2beta1 chosen by Accept), checked against kube's own golden discovery
documents (kube's api/discovery/, vendored in tests/fixtures/kubernetes/discovery)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.serverproc import FIXTURES
from tests.shipped import assert_status

KUBE = FIXTURES / "kubernetes" / "discovery"
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v={};as=APIGroupDiscoveryList"
# what kubectl 1.30-1.33 send on /api and /apis (API-CONVENTIONS.md §3.2)
KUBECTL_ACCEPT = f"{AGGREGATED.format('v2')},{AGGREGATED.format('v2beta1')},application/json"


def kube(name: str) -> Any:
    return json.loads((KUBE / name).read_text())


def kube_core_resources() -> dict[str, dict[str, Any]]:
    """kube's core/v1 APIResourceList entries by name (storageVersionHash included: apiforge computes it
    as kube does, from the storage version's group, version and kind)."""
    return {e["name"]: e for e in kube("api__v1.json")["resources"]}


def test_legacy_api_versions_has_kubes_shape(api: httpx.Client) -> None:
    document = api.get("/api").json()
    assert set(document) == set(kube("api.json"))
    assert document["kind"] == "APIVersions" and document["versions"] == ["v1"]
    assert api.get("/api/").json() == document  # kr8s asks with a trailing slash (§1)


def test_group_list_names_every_served_group_but_core(api: httpx.Client) -> None:
    document = api.get("/apis").json()
    assert document["kind"] == "APIGroupList"
    reference_group = kube("apis.json")["groups"][0]
    groups = {g["name"]: g for g in document["groups"]}
    assert "" not in groups
    for group in groups.values():
        assert set(group) == set(reference_group)
    assert groups["stable.example.com"]["preferredVersion"] == {
        "groupVersion": "stable.example.com/v1",
        "version": "v1",
    }
    # versions in priority order (kube: GA before beta), the preferred first
    assert [v["version"] for v in groups["stable.example.com"]["versions"]] == ["v1", "v1beta1"]


def test_group_document_has_kubes_shape(api: httpx.Client) -> None:
    document = api.get("/apis/stable.example.com").json()
    assert set(document) == set(kube("apis__apps.json"))
    assert (document["kind"], document["apiVersion"], document["name"]) == (
        "APIGroup",
        "v1",
        "stable.example.com",
    )


@pytest.mark.parametrize(
    "name",
    ["configmaps", "events", "secrets", "services", "services/status", "namespaces/status"],
)
def test_core_resources_are_listed_as_kube_lists_them(api: httpx.Client, name: str) -> None:
    """The built-in core kinds are kube's own: their entries must be kube's, field for field."""
    ours = {r["name"]: r for r in api.get("/api/v1").json()["resources"]}
    assert ours[name] == kube_core_resources()[name]


def test_namespaces_are_listed_as_kube_lists_them(api: httpx.Client) -> None:
    ours = {r["name"]: r for r in api.get("/api/v1").json()["resources"]}
    reference = kube_core_resources()
    assert ours["namespaces"] == reference["namespaces"]
    assert ours["namespaces/finalize"] == reference["namespaces/finalize"]


def test_core_resources_come_in_kubes_order(api: httpx.Client) -> None:
    """kube registers a group's paths sorted (APIInstaller.Install): namespaces/finalize before
    namespaces/status. Compared over the resources both serve."""
    ours = [r["name"] for r in api.get("/api/v1").json()["resources"]]
    theirs = [e["name"] for e in kube("api__v1.json")["resources"]]
    assert ours == [name for name in theirs if name in ours]


def test_custom_resource_entries_and_subresources(api: httpx.Client) -> None:
    resources = {r["name"]: r for r in api.get("/apis/stable.example.com/v1").json()["resources"]}
    crontabs = resources["crontabs"]
    assert (crontabs["kind"], crontabs["singularName"], crontabs["namespaced"]) == (
        "CronTab",
        "crontab",
        True,
    )
    assert crontabs["shortNames"] == ["ct"]
    # kopf patches /status only when it is listed (§3.1); scale names autoscaling/v1 Scale
    assert resources["crontabs/status"]["verbs"] == ["get", "patch", "update"]
    scale = resources["crontabs/scale"]
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")
    clusters = api.get("/apis/platform.example.com/v1alpha1").json()["resources"]
    assert {r["name"]: r["namespaced"] for r in clusters}["computeclusters"] is False


@pytest.mark.parametrize(
    "path",
    ["/apis/stable.example.com/v9", "/apis/nosuch.example.com", "/apis/nosuch.example.com/v1"],
)
def test_an_unknown_group_or_version_is_404(api: httpx.Client, path: str) -> None:
    """Clients read a 404 as "not served" (§3.1)."""
    assert_status(api.get(path), 404, "NotFound")


@pytest.mark.parametrize("path", ["/api", "/apis", "/api/v1", "/apis/stable.example.com"])
def test_discovery_is_read_only(api: httpx.Client, path: str) -> None:
    """kube registers discovery as GET routes: other methods are go-restful's 405, answered as a Status."""
    status = assert_status(api.post(path, json={}), 405, "MethodNotAllowed")
    assert status["message"] == "the server does not allow this method on the requested resource"


@pytest.mark.parametrize("version", ["v2", "v2beta1"])
def test_aggregated_discovery_is_chosen_by_accept(api: httpx.Client, version: str) -> None:
    """kubectl 1.30+ offer v2 first, 1.27-1.29 only v2beta1; client-go reads the format from the
    Content-Type's parameters alone (§3.2)."""
    accept = f"{AGGREGATED.format(version)},application/json"
    response = api.get("/apis", headers={"accept": accept})
    assert response.headers["content-type"] == AGGREGATED.format(version)
    document = response.json()
    assert (document["kind"], document["apiVersion"], document["metadata"]) == (
        "APIGroupDiscoveryList",
        f"apidiscovery.k8s.io/{version}",
        {},
    )
    groups = {item["metadata"]["name"]: item for item in document["items"]}
    assert [v["version"] for v in groups["stable.example.com"]["versions"]] == ["v1", "v1beta1"]
    assert all(v["freshness"] == "Current" for v in groups["stable.example.com"]["versions"])


def test_kubectl_accept_gets_v2(api: httpx.Client) -> None:
    response = api.get("/apis", headers={"accept": KUBECTL_ACCEPT})
    assert response.headers["content-type"] == AGGREGATED.format("v2")


def test_plain_json_gets_the_legacy_documents(api: httpx.Client) -> None:
    assert api.get("/apis", headers={"accept": "application/json"}).json()["kind"] == "APIGroupList"
    assert api.get("/api", headers={"accept": "*/*"}).json()["kind"] == "APIVersions"


def test_aggregated_documents_have_kubes_shape(api: httpx.Client) -> None:
    """Every level of apiforge's aggregated document carries the fields kube's golden v2 document uses
    there: all that every kube entry has, and nothing no kube entry has."""
    reference = kube("aggregated_v2.json")
    ours = api.get("/apis", headers={"accept": KUBECTL_ACCEPT}).json()
    assert set(ours) == set(reference)
    kube_versions = [v for item in reference["items"] for v in item["versions"]]
    kube_resources = [r for v in kube_versions for r in v["resources"]]
    kube_subresources = [s for r in kube_resources for s in r.get("subresources", [])]
    resource_keys = [set(r) for r in kube_resources]
    subresource_keys = set().union(*(set(s) for s in kube_subresources))
    for item in ours["items"]:
        assert set(item) == set(reference["items"][0])
        for version in item["versions"]:
            assert set(version) == set(kube_versions[0])
            for resource in version["resources"]:
                assert set.intersection(*resource_keys) <= set(resource)
                assert set(resource) <= set.union(*resource_keys)
                for sub in resource.get("subresources", []):
                    assert set(sub) <= subresource_keys


def test_aggregated_resource_matches_kubes_for_a_scaled_kind(api: httpx.Client) -> None:
    """A CronTab with status and scale is described as kube describes a Deployment: responseKind with an
    empty group and version, the same verbs, scale as autoscaling/v1 Scale."""
    deployment = next(
        r
        for item in kube("aggregated_v2.json")["items"]
        if item["metadata"]["name"] == "apps"
        for r in item["versions"][0]["resources"]
        if r["resource"] == "deployments"
    )
    document = api.get("/apis", headers={"accept": KUBECTL_ACCEPT}).json()
    stable = next(i for i in document["items"] if i["metadata"]["name"] == "stable.example.com")
    crontabs = next(r for r in stable["versions"][0]["resources"] if r["resource"] == "crontabs")
    assert crontabs["responseKind"] == {"group": "", "version": "", "kind": "CronTab"}
    assert crontabs["scope"] == deployment["scope"] == "Namespaced"
    assert crontabs["verbs"] == deployment["verbs"]
    ours = {s["subresource"]: s for s in crontabs["subresources"]}
    theirs = {s["subresource"]: s for s in deployment["subresources"]}
    assert set(ours) == set(theirs) == {"scale", "status"}
    assert ours["scale"] == theirs["scale"]  # autoscaling/v1 Scale, get/patch/update
    assert ours["status"]["verbs"] == theirs["status"]["verbs"]
    assert ours["status"]["responseKind"] == {"group": "", "version": "", "kind": "CronTab"}


def test_aggregated_core_group_is_the_unnamed_group(api: httpx.Client) -> None:
    document = api.get("/api", headers={"accept": KUBECTL_ACCEPT}).json()
    # kube omits the empty name: the core group's metadata is {}
    assert [item["metadata"] for item in document["items"]] == [{}]
    core = {r["resource"]: r for r in document["items"][0]["versions"][0]["resources"]}
    assert core["namespaces"]["scope"] == "Cluster" and core["configmaps"]["scope"] == "Namespaced"
    # the same resources as the legacy list, without its subresource entries
    legacy = {r["name"] for r in api.get("/api/v1").json()["resources"] if "/" not in r["name"]}
    assert set(core) == legacy
