"""The decode-time defaults (``Strategy.default``: SetDefaults_Service, SetDefaults_Namespace, the RBAC subject
defaults, the CRD spec defaults, Secret's stringData merge) run before validation, on whatever the client sent.
Values of the wrong type, control characters and oversized fields there are refused as kube refuses them
(400 or 422 with a Status), never a 500, and nothing is stored."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.inprocess import InProcessServer

NS = "default"
SERVICES = f"/api/v1/namespaces/{NS}/services"
SECRETS = f"/api/v1/namespaces/{NS}/secrets"
ROLEBINDINGS = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/rolebindings"


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with InProcessServer() as server, server.client() as http:
        yield http


def service(name: str, spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


HOSTILE: list[tuple[str, str, dict[str, Any]]] = [
    ("svc-spec-string", SERVICES, service("svc-spec-string", "x")),
    ("svc-ports-number", SERVICES, service("svc-ports-number", {"ports": 5})),
    ("svc-port-string", SERVICES, service("svc-port-string", {"ports": ["x"]})),
    (
        "svc-affinity-config-string",
        SERVICES,
        service(
            "svc-affinity-config-string",
            {"sessionAffinity": "ClientIP", "sessionAffinityConfig": "x", "ports": [{"port": 80}]},
        ),
    ),
    (
        "svc-client-ip-string",
        SERVICES,
        service(
            "svc-client-ip-string",
            {
                "sessionAffinity": "ClientIP",
                "sessionAffinityConfig": {"clientIP": 7},
                "ports": [{"port": 80}],
            },
        ),
    ),
    ("svc-type-list", SERVICES, service("svc-type-list", {"type": ["ClusterIP"]})),
    (
        "svc-port-name-control",
        SERVICES,
        service("svc-port-name-control", {"ports": [{"port": 80, "name": "a\u0007b"}]}),
    ),
    (
        "svc-target-port-huge",
        SERVICES,
        service("svc-target-port-huge", {"ports": [{"port": 80, "targetPort": "p" * 100_000}]}),
    ),
    (
        "secret-string-data-number",
        SECRETS,
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}, "stringData": {"a": 5}},
    ),
    (
        "secret-string-data-string",
        SECRETS,
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s2"}, "stringData": "x"},
    ),
    (
        "secret-data-list",
        SECRETS,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s3"},
            "data": ["x"],
            "stringData": {"a": "b"},
        },
    ),
    (
        "namespace-labels-list",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n1", "labels": ["x"]}},
    ),
    (
        "namespace-name-number",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": 5}},
    ),
    (
        "rolebinding-subjects-string",
        ROLEBINDINGS,
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "rb1"},
            "roleRef": "x",
            "subjects": "x",
        },
    ),
    (
        "crd-spec-string",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {"names": "x", "conversion": 5},
        },
    ),
]


@pytest.mark.parametrize(("case", "path", "body"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_body_is_refused_with_a_status_and_not_stored(
    client: httpx.Client, case: str, path: str, body: dict[str, Any]
) -> None:
    response = client.post(path, json=body)
    assert response.status_code in (400, 422), response.text
    status = response.json()
    assert (status["kind"], status["status"], status["code"]) == (
        "Status",
        "Failure",
        response.status_code,
    )
    # a value of the wrong type is the Go decoder's 400; a value of the right type that breaks a rule, 422
    expected = "Invalid" if response.status_code == 422 else "BadRequest"
    assert status["reason"] == expected
    assert status["message"].startswith(body["kind"]), status["message"]
    name = body["metadata"]["name"]
    if isinstance(name, str):
        assert client.get(f"{path}/{name}").status_code == 404


def test_a_dry_run_of_a_hostile_body_is_refused_too(client: httpx.Client) -> None:
    body = service("svc-dry", {"ports": 5})
    response = client.post(SERVICES, json=body, params={"dryRun": "All"})
    assert response.status_code in (400, 422), response.text
