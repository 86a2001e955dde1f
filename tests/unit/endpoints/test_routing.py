"""Routing, in process: which paths name what (kube's RequestInfo: namespaced and cluster-scoped collections
and objects, the all-namespaces list, subresources), and the answers to paths and methods nothing serves, in
kube's words (API-CONVENTIONS.md §1, §2 and §9): a Status 404 NotFound or 405 MethodNotAllowed under /api and
/apis, a plain-text 404 elsewhere."""

from __future__ import annotations

import httpx
import pytest

from tests.shipped import CLUSTERS, CONFIGMAPS, CRONTABS, assert_status, compute_cluster, crontab

NOT_FOUND = "the server could not find the requested resource"
NOT_ALLOWED = "the server does not allow this method on the requested resource"


@pytest.fixture(scope="module", autouse=True)
def objects(api: httpx.Client) -> None:
    assert api.post(CRONTABS, json=crontab("routed")).status_code == 201
    other = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "elsewhere"}}
    assert api.post("/api/v1/namespaces", json=other).status_code == 201
    elsewhere = "/apis/stable.example.com/v1/namespaces/elsewhere/crontabs"
    assert api.post(elsewhere, json=crontab("away")).status_code == 201
    assert api.post(CLUSTERS, json=compute_cluster("c1")).status_code == 201
    configmap = {"metadata": {"name": "settings"}}
    assert api.post(CONFIGMAPS, json=configmap).status_code == 201


def test_version_and_health(api: httpx.Client) -> None:
    version = api.get("/version").json()
    assert {"major", "minor", "gitVersion", "gitCommit", "gitTreeState", "buildDate", "goVersion",
            "compiler", "platform"} <= set(version)  # fmt: skip
    assert api.get("/version/").json() == version  # kr8s asks with a trailing slash
    for path in ("/healthz", "/livez", "/readyz"):
        response = api.get(path)
        assert response.status_code == 200 and response.text == "ok"
        assert response.headers["content-type"].startswith("text/plain")


def test_namespaced_collection_and_object(api: httpx.Client) -> None:
    listed = api.get(CRONTABS).json()
    assert listed["kind"] == "CronTabList"
    assert [item["metadata"]["name"] for item in listed["items"]] == ["routed"]
    fetched = api.get(f"{CRONTABS}/routed").json()
    assert fetched["metadata"]["namespace"] == "default"


def test_the_all_namespaces_path_lists_every_namespace_and_creates_nothing(
    api: httpx.Client,
) -> None:
    """kube serves list and watch of a namespaced resource across namespaces (kubectl get -A); no
    create route exists there."""
    everywhere = "/apis/stable.example.com/v1/crontabs"
    listed = api.get(everywhere).json()
    assert {(i["metadata"]["namespace"], i["metadata"]["name"]) for i in listed["items"]} == {
        ("default", "routed"),
        ("elsewhere", "away"),
    }
    assert_status(api.post(everywhere, json=crontab("nowhere")), 405, "MethodNotAllowed")


def test_a_namespaced_object_needs_its_namespace(api: httpx.Client) -> None:
    assert_status(api.get("/apis/stable.example.com/v1/crontabs/routed"), 404, "NotFound")


def test_cluster_scoped_collection_and_object(api: httpx.Client) -> None:
    fetched = api.get(f"{CLUSTERS}/c1").json()
    assert "namespace" not in fetched["metadata"]
    assert [i["metadata"]["name"] for i in api.get(CLUSTERS).json()["items"]] == ["c1"]


def test_a_cluster_scoped_kind_has_no_namespaced_path(api: httpx.Client) -> None:
    namespaced = "/apis/platform.example.com/v1alpha1/namespaces/default/computeclusters"
    status = assert_status(api.get(namespaced), 404, "NotFound")
    assert status["message"] == NOT_FOUND
    assert_status(api.get(f"{namespaced}/c1"), 404, "NotFound")


def test_namespaces_have_no_namespaced_path(api: httpx.Client) -> None:
    """kube routes namespaces, which are cluster-scoped, only at /api/v1/namespaces[/{name}]."""
    assert_status(api.get("/api/v1/namespaces/default/namespaces"), 404, "NotFound")


def test_a_namespace_is_an_object_of_the_namespaces_collection(api: httpx.Client) -> None:
    """/api/v1/namespaces/{name} is the Namespace itself, not a namespace's collection of anything, and
    /status after it is its subresource (kube's RequestInfo special case)."""
    assert api.get("/api/v1/namespaces/elsewhere").json()["kind"] == "Namespace"
    status = api.get("/api/v1/namespaces/elsewhere/status").json()
    assert status["kind"] == "Namespace" and status["status"]["phase"] == "Active"


def test_subresources(api: httpx.Client) -> None:
    assert api.get(f"{CRONTABS}/routed/status").json()["kind"] == "CronTab"
    scale = api.get(f"{CRONTABS}/routed/scale").json()
    assert (scale["kind"], scale["apiVersion"], scale["spec"]) == (
        "Scale",
        "autoscaling/v1",
        {"replicas": 1},
    )


@pytest.mark.parametrize(
    "path",
    [
        f"{CRONTABS}/routed/bogus",  # no such subresource
        f"{CRONTABS}/routed/status/extra",  # deeper than any route
        f"{CONFIGMAPS}/settings/status",  # ConfigMaps have no status subresource
        f"{CLUSTERS}/c1/scale",  # ComputeClusters have no scale subresource
        "/apis/stable.example.com/v1/namespaces/default/widgets",  # no such resource in a served group
    ],
)
def test_what_nothing_serves_is_a_404_status(api: httpx.Client, path: str) -> None:
    status = assert_status(api.get(path), 404, "NotFound")
    assert status["message"] == NOT_FOUND


# kube routes a group or version nothing serves to no handler at all (the apiextensions server's NotFound
# last in its delegation chain): the same plain text as a path outside the API, recorded from kube-apiserver
# v1.34.4 by the differential corpus
@pytest.mark.parametrize(
    "path",
    [
        "/no/such/path",
        "/apiary",
        "/openapi/v4",
        "/apis/nosuch.example.com/v1/widgets",  # no such group
        "/api/v2/namespaces/default/configmaps",  # no such version
    ],
)
def test_a_path_outside_the_api_is_a_plain_404(api: httpx.Client, path: str) -> None:
    response = api.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == "404 page not found\n"


def test_a_missing_object_is_a_404_naming_it(api: httpx.Client) -> None:
    status = assert_status(api.get(f"{CLUSTERS}/nope"), 404, "NotFound")
    assert status["message"] == 'computeclusters.platform.example.com "nope" not found'
    assert status["details"] == {
        "name": "nope",
        "group": "platform.example.com",
        "kind": "computeclusters",
    }
    core = assert_status(api.get(f"{CONFIGMAPS}/nope"), 404, "NotFound")
    assert core["message"] == 'configmaps "nope" not found'  # the core group is not written


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", CRONTABS),  # collections take GET, POST and DELETE
        ("PATCH", CRONTABS),
        ("POST", f"{CRONTABS}/routed"),  # objects take GET, PUT, PATCH and DELETE
        ("DELETE", f"{CRONTABS}/routed/status"),  # status takes GET, PUT and PATCH
        ("POST", f"{CRONTABS}/routed/scale"),
        ("OPTIONS", f"{CRONTABS}/routed"),
    ],
)
def test_a_method_a_route_does_not_take_is_405(api: httpx.Client, method: str, path: str) -> None:
    status = assert_status(api.request(method, path), 405, "MethodNotAllowed")
    assert status["message"] == NOT_ALLOWED


def test_unknown_query_parameters_are_ignored(api: httpx.Client) -> None:
    """kubectl adds timeout=32s to discovery and OpenAPI requests, and to others with --request-timeout."""
    for path in (CRONTABS, "/apis", "/openapi/v3"):
        assert api.get(path, params={"timeout": "32s", "nonsense": "1"}).status_code == 200


def test_a_trailing_slash_names_the_same_thing(api: httpx.Client) -> None:
    assert api.get(f"{CRONTABS}/").json() == api.get(CRONTABS).json()
    assert api.get("/apis/").json() == api.get("/apis").json()
