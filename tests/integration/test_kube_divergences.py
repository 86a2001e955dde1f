"""Answers an adversarial pass found to differ from kube-apiserver, each as kube gives it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.compaction import wait_compacted
from tests.serverproc import ServerProcess, free_port

pytestmark = pytest.mark.timeout(120)
NAMESPACED = "/api/v1/namespaces/default/configmaps"


def configmap(name: str) -> dict[str, object]:
    return {"metadata": {"name": name}, "data": {"k": "v"}}


def test_deletecollection_is_not_served_on_the_all_namespaces_path(client: httpx.Client) -> None:
    # kube installs deletecollection beside create, on the namespaced path only: 405 elsewhere
    assert client.post(NAMESPACED, json=configmap("kd-keep")).status_code == 201
    refused = client.delete("/api/v1/configmaps")
    assert refused.status_code == 405
    assert refused.json()["reason"] == "MethodNotAllowed"
    refused = client.delete(NAMESPACED + "/")
    assert refused.status_code == 405
    assert client.get(NAMESPACED + "/kd-keep").status_code == 200  # nothing was deleted


@pytest.mark.parametrize("value", ["maybe", "yes", "2", ""])
def test_a_boolean_query_parameter_is_true_unless_false_or_0(
    client: httpx.Client, value: str
) -> None:
    # kube's parameter codec (apimachinery runtime/conversion.go Convert_Slice_string_To_bool): only
    # "0" and "false" in any case are false, so watch=maybe is a watch and force=maybe forces
    assert client.post(NAMESPACED, json=configmap(f"kd-apply{value}")).status_code == 201
    response = client.patch(
        f"{NAMESPACED}/kd-apply{value}",
        params={"fieldManager": "t", "force": value},
        content=f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: kd-apply{value}}}\ndata: {{k: w}}\n",
        headers={"content-type": "application/apply-patch+yaml"},
    )
    assert response.status_code == 200, response.text  # forced: no conflict over data.k
    assert response.json()["data"] == {"k": "w"}
    params = {
        "watch": value,
        "timeoutSeconds": "1",
        "fieldSelector": f"metadata.name=kd-apply{value}",
    }
    with client.stream("GET", NAMESPACED, params=params) as watched:
        assert watched.status_code == 200
        first = json.loads(next(watched.iter_lines()))
    assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", f"kd-apply{value}")


@pytest.mark.parametrize("value", ["0", "false", "FALSE", "False"])
def test_false_is_0_or_false_in_any_case(client: httpx.Client, value: str) -> None:
    listed = client.get(NAMESPACED, params={"watch": value})
    assert (listed.status_code, listed.json()["kind"]) == (200, "ConfigMapList")


@pytest.fixture(scope="module")
def compacting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    server = ServerProcess(
        Path(tmp_path_factory.mktemp("data")),
        free_port(),
        extra_args=("--etcd-compaction-interval", "1"),
    )
    server.start()
    try:
        with server.client(timeout=20) as client:
            yield client
    finally:
        server.stop()


def test_a_list_at_a_compacted_exact_revision_says_the_version_is_too_old(
    compacting: httpx.Client,
) -> None:
    created = compacting.post(NAMESPACED, json=configmap("kd-old")).json()
    old = created["metadata"]["resourceVersion"]
    compacting.put(NAMESPACED + "/kd-old", json={**configmap("kd-old"), "data": {"k": "w"}})
    response = wait_compacted(compacting, NAMESPACED, old)
    # kube's etcd3 interpretListError: a list (not a continuation) at a compacted revision
    assert response.status_code == 410
    assert response.json()["reason"] == "Expired"
    assert response.json()["message"] == "The resourceVersion for the provided list is too old."


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_an_accept_header_of_nothing_the_server_speaks_is_406_before_anything_happens(
    client: httpx.Client, method: str
) -> None:
    # kube's handlers negotiate the output first (negotiation.NewNotAcceptableError)
    response = client.request(
        method,
        NAMESPACED,
        json=configmap("kd-406"),
        headers={"accept": "application/garbage"},
    )
    assert response.status_code == 406
    assert response.json()["reason"] == "NotAcceptable"
    assert response.json()["message"] == (
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf"
    )
    assert client.get(NAMESPACED + "/kd-406").status_code == 404  # the create never happened
    assert client.get(NAMESPACED, headers={"accept": "text/html, */*"}).status_code == 200


@pytest.mark.parametrize(
    "field", ["a\nb", "tab\there", "nul\x00", "bell\x07", "del\x7f", 'quote"d']
)
def test_an_unknown_field_named_with_a_control_character_still_gets_an_answer(
    client: httpx.Client, field: str
) -> None:
    """The default fieldValidation=Warn names unknown fields in a Warning header: kube quotes the path as Go's
    %q does, so the header stays valid and the write that landed is answered (the connection
    dropped after the write, and a retry got 409)."""
    name = f"kd-warn-{sum(map(ord, field))}"
    body = {"metadata": {"name": name}, "data": {"k": "v"}, field: 1}
    response = client.post(NAMESPACED, json=body)
    assert response.status_code == 201, response.text
    warning = response.headers["warning"]
    assert warning.startswith('299 - "unknown field ')
    assert not any(ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F for char in warning)
    assert client.get(f"{NAMESPACED}/{name}").status_code == 200


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("a.b", 'metadata.name: Invalid value: "a.b": must not contain dots'),
        ("n" * 64, "must be no more than 63 characters"),
    ],
)
def test_a_namespace_name_is_a_dns_label(client: httpx.Client, name: str, message: str) -> None:
    # kube's ValidateNamespace: ValidateObjectMeta with ValidateNamespaceName (a DNS-1123 label)
    response = client.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert response.status_code == 422, response.text
    assert message in response.json()["message"]
    assert client.get(f"/api/v1/namespaces/{name}").status_code == 404
