"""A multi-version CRD whose versions differ, under conversion strategy None (kyverno's and external-secrets'
shape, with an unserved version of yet another schema), is both generated and served at run time, and the
two answer alike, as kube's apiextensions-apiserver does: only the apiVersion changes, and each version's
schema prunes what it does not declare (schemaCoercingConverter in
staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/customresource_handler.go)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from tests.crdproject import crd_server

GENERATED, RUN_TIME = "policies.generated.example", "policies.runtime.example"


def policy_crd(group: str) -> dict[str, Any]:
    def version(name: str, served: bool, storage: bool, fields: list[str]) -> dict[str, Any]:
        spec = {"type": "object", "properties": {f: {"type": "string"} for f in fields}}
        schema = {"type": "object", "properties": {"spec": spec}}
        return {
            "name": name,
            "served": served,
            "storage": storage,
            "schema": {"openAPIV3Schema": schema},
        }

    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"policies.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "policies", "kind": "Policy"},
            "versions": [
                version("v2", True, True, ["shared", "current"]),
                version("v1", True, False, ["shared", "legacy"]),
                version("v1alpha1", False, False, ["ancient"]),
            ],
        },
    }


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """A server whose project generated the CRD in one group, with the same CRD installed at run time in
    another."""
    for server in crd_server(tmp_path_factory, GENERATED, yaml.safe_dump(policy_crd(GENERATED))):
        with server.client(timeout=10) as http:
            crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
            assert http.post(crds, json=policy_crd(RUN_TIME)).status_code == 201
            _wait_served(http, f"/apis/{RUN_TIME}/v1/namespaces/default/policies")
            yield http


def _wait_served(http: httpx.Client, path: str) -> None:
    for _ in range(500):  # each attempt is a round trip: no sleep needed
        if http.get(path).status_code == 200:
            return
    raise AssertionError(f"{path} is not served")


def policies(group: str, version: str) -> str:
    return f"/apis/{group}/{version}/namespaces/default/policies"


# (version written, its spec, version read, the spec kube answers)
CASES = [
    ("v1", {"shared": "s", "legacy": "l"}, "v1", {"shared": "s"}),
    ("v1", {"shared": "s", "legacy": "l"}, "v2", {"shared": "s"}),
    ("v2", {"shared": "s", "current": "c"}, "v1", {"shared": "s"}),
    ("v2", {"shared": "s", "current": "c"}, "v2", {"shared": "s", "current": "c"}),
]


@pytest.mark.parametrize(("written", "spec", "read", "expected"), CASES)
def test_generated_and_run_time_crds_convert_as_kubes_strategy_none(
    client: httpx.Client,
    written: str,
    spec: dict[str, str],
    read: str,
    expected: dict[str, str],
) -> None:
    name = f"from-{written}-to-{read}"
    answers = []
    for group in (GENERATED, RUN_TIME):
        body = {
            "apiVersion": f"{group}/{written}",
            "kind": "Policy",
            "metadata": {"name": name},
            "spec": spec,
        }
        created = client.post(policies(group, written), json=body)
        assert created.status_code == 201, created.text
        got = client.get(f"{policies(group, read)}/{name}").json()
        assert got["apiVersion"] == f"{group}/{read}"
        listed = client.get(policies(group, read)).json()["items"]
        assert [item["spec"] for item in listed if item["metadata"]["name"] == name] == [
            got["spec"]
        ]
        answers.append(got["spec"])
    assert answers == [expected, expected]


def test_an_unserved_version_is_not_served_either_way(client: httpx.Client) -> None:
    for group in (GENERATED, RUN_TIME):
        assert client.get(policies(group, "v1alpha1")).status_code == 404


# (path, whether kube answers JSON): a request no handler of kube's takes gets its NotFound handler's plain
# text (apiextensions-apiserver's crdHandler delegates a CRD's unserved version, or a resource no CRD
# defines, to it); a built-in group-version's handler answers a JSON Status
NOT_FOUND = [
    (f"/apis/{RUN_TIME}/v1alpha1/namespaces/default/policies", False),
    (f"/apis/{RUN_TIME}/v9/namespaces/default/policies", False),
    (f"/apis/{RUN_TIME}/v2/namespaces/default/nothings", False),
    ("/apis/nowhere.example/v1/things", False),
    ("/api/v1/namespaces/default/nothings", True),
    ("/apis/apiextensions.k8s.io/v1/nothings", True),
]


@pytest.mark.parametrize(("path", "json"), NOT_FOUND)
def test_not_found_is_answered_by_the_handler_kube_would_route_to(
    client: httpx.Client, path: str, json: bool
) -> None:
    answer = client.get(path)
    assert answer.status_code == 404
    if json:
        assert answer.json()["reason"] == "NotFound"
    else:
        assert answer.headers["content-type"] == "text/plain; charset=utf-8"
        assert answer.text == "404 page not found\n"
