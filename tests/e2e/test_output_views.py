"""A view kube does not serve is a 406 (k8s.io/apiserver/pkg/endpoints/handlers: RequestScope's
AllowsMediaTypeTransform skips an Accept range whose as/g/v name no meta.k8s.io v1/v1beta1 Table or
PartialObjectMetadata, or a Table as protobuf; response.go's asPartialObjectMetadata(List) refuse a view of
the wrong shape), through a real server process."""

from __future__ import annotations

import httpx
import pytest

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
ROLES = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles"
PB = "application/vnd.kubernetes.protobuf"
MEDIA_TYPES = f"application/json, application/yaml, {PB}"


@pytest.fixture(scope="module", autouse=True)
def objects(client: httpx.Client) -> None:
    assert client.post(CONFIGMAPS, json={"metadata": {"name": "view"}}).status_code == 201
    role = {"metadata": {"name": "view"}, "rules": []}
    assert client.post(ROLES, json=role).status_code == 201


def refused(response: httpx.Response) -> str:
    assert response.status_code == 406, response.text
    status = response.json()
    assert (status["reason"], status["code"]) == ("NotAcceptable", 406)
    return str(status["message"])


@pytest.mark.parametrize(
    "accept",
    [
        "application/json;as=Table;v=v9;g=meta.k8s.io",
        f"{PB};as=Table;v=v1;g=meta.k8s.io",
        "application/json;as=Thing;v=v1;g=meta.k8s.io",
    ],
)
def test_a_view_not_served(client: httpx.Client, accept: str) -> None:
    for path in (CONFIGMAPS, f"{CONFIGMAPS}/view"):
        message = refused(client.get(path, headers={"Accept": accept}))
        assert message == f"only the following media types are accepted: {MEDIA_TYPES}"


def test_the_next_range_is_served(client: httpx.Client) -> None:
    accept = (
        "application/json;as=Table;v=v9;g=meta.k8s.io, application/json;as=Table;v=v1;g=meta.k8s.io"
    )
    response = client.get(CONFIGMAPS, headers={"Accept": accept})
    assert response.status_code == 200
    assert response.json()["kind"] == "Table"


@pytest.mark.parametrize(
    ("path", "go_type"), [(CONFIGMAPS, "core.ConfigMap"), (ROLES, "rbac.Role")]
)
def test_partial_metadata_of_the_wrong_shape(client: httpx.Client, path: str, go_type: str) -> None:
    one = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"
    many = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
    assert refused(client.get(path, headers={"Accept": one})) == (
        f"you requested PartialObjectMetadata, but the requested object is a list (*{go_type}List)"
    )
    assert refused(client.get(f"{path}/view", headers={"Accept": many})) == (
        f"you requested PartialObjectMetadataList, but the requested object is not a list (*{go_type})"
    )
    assert client.get(path, headers={"Accept": many}).json()["kind"] == "PartialObjectMetadataList"
    assert (
        client.get(f"{path}/view", headers={"Accept": one}).json()["kind"]
        == "PartialObjectMetadata"
    )


def test_a_range_of_lower_quality_comes_after(client: httpx.Client) -> None:
    """goautoneg's ParseAccept sorts the ranges by q: the 404 of a missing object is JSON here."""
    accept = f"{PB};q=0.5,application/json"
    response = client.get(f"{CONFIGMAPS}/missing", headers={"Accept": accept})
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert response.json()["reason"] == "NotFound"
    ok = client.get(f"{CONFIGMAPS}/view", headers={"Accept": accept})
    assert (ok.headers["content-type"], ok.json()["kind"]) == ("application/json", "ConfigMap")
