"""The Table columns of every shipped built-in kind describe themselves as kube's do.

kube's printers (pkg/printers/internalversion/printers.go, kube-aggregator's apiservice table convertor,
k8s.io/apiserver/pkg/registry/rest/table.go) take a column's description from the Go type's field doc
(``SwaggerDoc()``), whole; the age columns are ObjectMeta's creationTimestamp doc and have type ``string``
(``date`` only for the default convertor's ``Created At``). The texts below are kube 1.34's, as its Tables
answer them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.inprocess import InProcessServer

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
CREATION_TIMESTAMP = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this value. "
    "It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. "
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
NAME = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources "
    "may allow a client to request the generation of an appropriate name automatically. Name is primarily "
    "intended for creation idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with InProcessServer() as server, server.client() as client:
        yield client


def columns(http: httpx.Client, path: str) -> dict[str, dict[str, Any]]:
    response = http.get(path, headers={"Accept": TABLE})
    assert response.status_code == 200, response.text
    return {c["name"]: c for c in response.json()["columnDefinitions"]}


def listable_paths(http: httpx.Client) -> list[str]:
    """Every listed resource (no subresource) the server's discovery names, as a cluster-wide list path."""
    roots = ["/api/v1"] + [
        f"/apis/{version['groupVersion']}"
        for group in http.get("/apis").json()["groups"]
        for version in group["versions"]
    ]
    return [
        f"{root}/{resource['name']}"
        for root in roots
        for resource in http.get(root).json()["resources"]
        if "/" not in resource["name"] and "list" in resource["verbs"]
    ]


def test_every_built_in_column_has_kubes_not_the_crds_description(http: httpx.Client) -> None:
    paths = [p for p in listable_paths(http) if "example.com" not in p]
    assert "/apis/coordination.k8s.io/v1/leases" in paths
    for path in paths:
        for name, column in columns(http, path).items():
            assert column["description"], (path, name)
            fallback = column["description"].startswith("Custom resource definition column")
            assert not fallback, (path, name)
            if name == "Name":
                assert column["description"] == NAME, path
            if name in ("Age", "Created At"):
                assert column["description"] == CREATION_TIMESTAMP, path
            if name == "Age":
                assert column["type"] == "string", path


@pytest.mark.parametrize(
    ("path", "column", "description"),
    [
        (
            "/api/v1/configmaps",
            "Data",
            "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' "
            "or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in "
            "Data must not overlap with the keys in the BinaryData field, this is enforced during validation "
            "process.",
        ),
        (
            "/apis/coordination.k8s.io/v1/leases",
            "Holder",
            "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader "
            "Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name "
            "field.",
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            "Role",
            "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be "
            "resolved, the Authorizer must return an error.",
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            "Users",
            "Users in the clusterRoleBinding",
        ),
        ("/apis/rbac.authorization.k8s.io/v1/rolebindings", "Users", "Users in the roleBinding"),
        (
            "/apis/apiregistration.k8s.io/v1/apiservices",
            "Available",
            "Whether this service is available.",
        ),
    ],
)
def test_a_kind_specific_column_has_its_go_fields_whole_doc(
    http: httpx.Client, path: str, column: str, description: str
) -> None:
    assert columns(http, path)[column]["description"] == description
