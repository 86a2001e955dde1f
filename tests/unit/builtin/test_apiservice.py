"""The APIService kind in process: kube's validation messages (kube-aggregator
pkg/apis/apiregistration/validation), the port's default, and a local APIService made Available by the
aggregator with kube's reason; the local APIServices kube's autoregister and crdregistration controllers
keep for every served group-version (a CRD's too); kube-aggregator's table cells; the discovery merges as
pure functions."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from builtin.apiregistration import merge
from tests.inprocess import InProcessServer

APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with InProcessServer() as server, server.client() as client:
        yield client


def apiservice(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": name},
        "spec": {"groupPriorityMinimum": 100, "versionPriority": 10, **spec},
    }


def test_invalid_apiservices_get_kubes_messages(http: httpx.Client) -> None:
    bad = apiservice(
        "v1.wrong.example.com",
        group="example.com",
        version="v1",
        groupPriorityMinimum=0,
        versionPriority=1001,
        service={"namespace": "default", "name": "svc", "port": 70000},
        insecureSkipTLSVerify=True,
        caBundle="Zm9v",
    )
    answer = http.post(APISERVICES, json=bad)
    assert answer.status_code == 422
    message = answer.json()["message"]
    assert message.startswith(
        'APIService.apiregistration.k8s.io "v1.wrong.example.com" is invalid: ['
    )
    for part in (
        'metadata.name: Invalid value: "v1.wrong.example.com": must be `spec.version+"."+spec.group`:'
        ' "v1.example.com"',
        "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
        "spec.versionPriority: Invalid value: 1001: must be positive and less than 1000",
        "spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535,"
        " inclusive",
        "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present",
    ):
        assert part in message


def test_a_local_apiservice_may_not_carry_tls_settings(http: httpx.Client) -> None:
    bad = apiservice(
        "v1.local.example.com", group="local.example.com", version="v1", caBundle="Zm9v"
    )
    answer = http.post(APISERVICES, json=bad)
    assert answer.status_code == 422
    assert (
        'spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle'
        in answer.json()["message"]
    )


def test_a_local_apiservice_is_available_and_the_port_defaults_to_443(http: httpx.Client) -> None:
    """A local one is created Available (kube-aggregator's strategy PrepareForCreate marks it so): the
    create's answer already says so, whatever status the request carried."""
    local = apiservice("v1.here.example.com", group="here.example.com", version="v1")
    local["status"] = {"conditions": [{"type": "Available", "status": "False"}]}
    answer = http.post(APISERVICES, json=local)
    assert answer.status_code == 201
    remote = apiservice(
        "v1.there.example.com",
        group="there.example.com",
        version="v1",
        service={"namespace": "default", "name": "nowhere"},
    )
    created = http.post(APISERVICES, json=remote).json()
    assert created["spec"]["service"]["port"] == 443
    assert "status" not in created or not created["status"].get("conditions")
    (condition,) = answer.json()["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "Available",
        "True",
        "Local",
    )
    assert condition["message"] == "Local APIServices are always available"
    answer = http.get("/apis/there.example.com/v1/things")
    assert (answer.status_code, answer.text) == (503, "service unavailable\n")
    assert http.get("/apis/here.example.com/v1").status_code == 404  # served here: nothing is


CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def custom_resource(group: str, *versions: str) -> dict[str, Any]:
    """A CRD of Gizmos in ``group``, the first of ``versions`` stored."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gizmos.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gizmos", "kind": "Gizmo"},
            "versions": [
                {
                    "name": name,
                    "served": True,
                    "storage": name == versions[0],
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
                for name in versions
            ],
        },
    }


def registration(http: httpx.Client, name: str) -> dict[str, Any] | None:
    answer = http.get(f"{APISERVICES}/{name}")
    return answer.json() if answer.status_code == 200 else None


AUTOMANAGED = "kube-aggregator.kubernetes.io/automanaged"


def poll(predicate: Callable[[], Any], timeout: float = 5.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := predicate()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return value


def test_every_served_group_version_has_an_automanaged_local_apiservice(http: httpx.Client) -> None:
    """kube's autoregister with apiVersionPriorities (cmd/kube-apiserver/app/aggregator.go)."""
    items = {i["metadata"]["name"]: i for i in http.get(APISERVICES).json()["items"]}
    expected = {
        "v1.": (18000, 1),
        "v1.apiregistration.k8s.io": (18000, 15),
        "v1.rbac.authorization.k8s.io": (17000, 15),
        "v1.apiextensions.k8s.io": (16700, 15),
        "v1.coordination.k8s.io": (16500, 15),
        "v1.authentication.k8s.io": (17700, 15),
    }
    for name, (minimum, priority) in expected.items():
        spec = items[name]["spec"]
        assert (spec["groupPriorityMinimum"], spec["versionPriority"]) == (minimum, priority)
        assert "service" not in spec or spec["service"] is None
        assert items[name]["metadata"]["labels"] == {AUTOMANAGED: "onstart"}
    condition = poll(
        lambda: http.get(f"{APISERVICES}/v1.").json().get("status", {}).get("conditions")
    )
    assert condition and (condition[0]["status"], condition[0]["reason"]) == ("True", "Local")


def test_a_crds_versions_are_registered_while_served_and_removed_after(
    http: httpx.Client,
) -> None:
    """kube's crdregistration controller: 1000/100, label ``true``, gone with the CRD's version."""
    crd = custom_resource("auto.example.com", "v1", "v2")
    assert http.post(CRDS, json=crd).status_code == 201
    registered = functools.partial(registration, http)
    created = poll(lambda: registered("v1.auto.example.com"))
    assert created is not None
    assert created["metadata"]["labels"] == {AUTOMANAGED: "true"}
    assert (created["spec"]["groupPriorityMinimum"], created["spec"]["versionPriority"]) == (
        1000,
        100,
    )
    assert poll(lambda: registered("v2.auto.example.com"))
    current = http.get(f"{CRDS}/{crd['metadata']['name']}").json()
    current["spec"]["versions"][1]["served"] = False
    assert http.put(f"{CRDS}/{crd['metadata']['name']}", json=current).status_code == 200
    assert poll(lambda: registered("v2.auto.example.com") is None)
    assert registered("v1.auto.example.com")
    assert http.delete(f"{CRDS}/{crd['metadata']['name']}").status_code == 200
    assert poll(lambda: registered("v1.auto.example.com") is None)


def test_a_users_apiservice_for_a_served_version_is_left_alone(http: httpx.Client) -> None:
    """autoregister changes only what carries its label (a user takes one over by removing it)."""
    current = http.get(f"{APISERVICES}/v1.coordination.k8s.io").json()
    del current["metadata"]["labels"]
    current["spec"]["versionPriority"] = 7
    assert http.put(f"{APISERVICES}/v1.coordination.k8s.io", json=current).status_code == 200
    # a CRD makes autoregister sync again
    assert http.post(CRDS, json=custom_resource("later.example.com", "v1")).status_code == 201
    assert poll(lambda: registration(http, "v1.later.example.com"))
    kept = http.get(f"{APISERVICES}/v1.coordination.k8s.io").json()
    assert kept["spec"]["versionPriority"] == 7
    assert "labels" not in kept["metadata"]


def test_the_table_says_local_and_the_reason_of_an_unavailable_one(http: httpx.Client) -> None:
    """kube-aggregator's table convertor: SERVICE ``Local`` or ``namespace/name``; AVAILABLE
    ``False (reason)``."""
    gone = apiservice(
        "v1.gone.example.com",
        group="gone.example.com",
        version="v1",
        service={"namespace": "default", "name": "gone"},
    )
    assert http.post(APISERVICES, json=gone).status_code == 201
    table_type = "application/json;as=Table;v=v1;g=meta.k8s.io"

    def rows() -> dict[str, list[Any]]:
        table = http.get(APISERVICES, headers={"Accept": table_type}).json()
        return {row["cells"][0]: row["cells"] for row in table["rows"]}

    assert poll(lambda: rows()["v1.gone.example.com"][2].startswith("False ("))
    table = rows()
    assert table["v1.gone.example.com"][1] == "default/gone"
    assert table["v1.rbac.authorization.k8s.io"][1:3] == ["Local", "True"]


def remote(group: str, version: str, *resources: dict[str, Any]) -> merge.RemoteVersion:
    return merge.RemoteVersion(group, version, 1000, 15, resources, True)


def test_remote_versions_join_their_groups_or_come_after_the_local_ones() -> None:
    local = {
        "kind": "APIGroupList",
        "groups": [
            {
                "name": "apps",
                "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
                "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"},
            }
        ],
    }
    merged = merge.merge_group_list(
        local, [remote("metrics.k8s.io", "v1beta1"), remote("apps", "v2")]
    )
    assert [g["name"] for g in merged["groups"]] == ["apps", "metrics.k8s.io"]
    assert [v["version"] for v in merged["groups"][0]["versions"]] == ["v1", "v2"]
    assert merged["groups"][1]["preferredVersion"] == {
        "groupVersion": "metrics.k8s.io/v1beta1",
        "version": "v1beta1",
    }


def test_aggregated_discovery_folds_subresources_into_their_resource() -> None:
    pods = {
        "name": "pods",
        "singularName": "pod",
        "namespaced": True,
        "kind": "PodMetrics",
        "verbs": ["get"],
    }
    status = {"name": "pods/status", "namespaced": True, "kind": "PodMetrics", "verbs": ["get"]}
    merged = merge.merge_aggregated(
        {"items": []}, [remote("metrics.k8s.io", "v1beta1", pods, status)]
    )
    (item,) = merged["items"]
    (version,) = item["versions"]
    assert version["freshness"] == "Current"
    (resource,) = version["resources"]
    assert resource["resource"] == "pods" and resource["scope"] == "Namespaced"
    assert [s["subresource"] for s in resource["subresources"]] == ["status"]


def test_swagger_takes_the_backends_paths_under_its_prefix_and_keeps_local_definitions() -> None:
    local = {"paths": {"/api/v1/pods": {}}, "definitions": {"a": {"type": "object"}}}
    backend = {
        "paths": {"/apis/x.io/v1/things": {"get": {}}, "/api/v1/pods": {"get": {"hijack": True}}},
        "definitions": {"a": {"type": "string"}, "b": {"type": "object"}},
    }
    merged = merge.merge_swagger(local, [("/apis/x.io/v1", backend)])
    assert merged["paths"] == {"/api/v1/pods": {}, "/apis/x.io/v1/things": {"get": {}}}
    assert merged["definitions"] == {"a": {"type": "object"}, "b": {"type": "object"}}
