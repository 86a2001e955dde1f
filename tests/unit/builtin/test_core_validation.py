"""The core kinds validated as kube validates them (pkg/apis/core/validation/validation.go ValidateConfigMap,
ValidateConfigMapUpdate, ValidateSecret, ValidateSecretUpdate, ValidateNamespace; pkg/registry/core/namespace
Canonicalize; the field label conversion functions of pkg/apis/core/v1/conversion.go), through the real app
over memory storage, messages compared verbatim."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.inprocess import InProcessServer

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
SECRETS = "/api/v1/namespaces/default/secrets"
NAMESPACES = "/api/v1/namespaces"
MERGE = {"content-type": "application/merge-patch+json"}
IMMUTABLE = "Forbidden: field is immutable when `immutable` is set"


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with InProcessServer() as server, server.client() as http:
        yield http


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def obj(kind: str, name: str, **fields: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": name}, **fields}


def invalid(response: httpx.Response, message: str, causes: list[tuple[str, str]]) -> None:
    """A 422 Invalid with kube's message and its causes as (field, message)."""
    body = response.json()
    assert (response.status_code, body["reason"], body["message"]) == (422, "Invalid", message)
    assert [(c["field"], c["message"]) for c in body["details"]["causes"]] == causes


def test_an_immutable_configmap_keeps_its_data_and_immutability(client: httpx.Client) -> None:
    created = client.post(
        CONFIGMAPS, json=obj("ConfigMap", "frozen", immutable=True, data={"a": "1"})
    )
    assert created.status_code == 201
    changed = client.patch(
        f"{CONFIGMAPS}/frozen",
        json={"immutable": False, "data": {"a": "2"}, "binaryData": {"b": b64("x")}},
        headers=MERGE,
    )
    invalid(
        changed,
        f'ConfigMap "frozen" is invalid: [immutable: {IMMUTABLE}, data: {IMMUTABLE}, binaryData: {IMMUTABLE}]',
        [("immutable", IMMUTABLE), ("data", IMMUTABLE), ("binaryData", IMMUTABLE)],
    )
    labelled = client.patch(
        f"{CONFIGMAPS}/frozen", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE
    )
    assert labelled.status_code == 200  # metadata stays mutable
    assert client.delete(f"{CONFIGMAPS}/frozen").status_code == 200


def test_a_mutable_configmap_may_become_immutable(client: httpx.Client) -> None:
    assert (
        client.post(CONFIGMAPS, json=obj("ConfigMap", "thaw", data={"a": "1"})).status_code == 201
    )
    frozen = client.patch(
        f"{CONFIGMAPS}/thaw", json={"immutable": True, "data": {"a": "2"}}, headers=MERGE
    )
    assert frozen.status_code == 200 and frozen.json()["data"] == {"a": "2"}


def test_configmap_keys_are_config_keys(client: httpx.Client) -> None:
    regex = (
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
        "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
    )
    response = client.post(
        CONFIGMAPS,
        json=obj(
            "ConfigMap",
            "keys",
            data={"a/b": "1", "..x": "2", "dup": "3"},
            binaryData={"dup": b64("x")},
        ),
    )
    invalid(
        response,
        f'ConfigMap "keys" is invalid: [data[a/b]: Invalid value: "a/b": {regex}, data[..x]: Invalid value: '
        '"..x": must not start with \'..\', binaryData[dup]: Invalid value: "dup": duplicate of key present in data]',
        [
            ("data[a/b]", f'Invalid value: "a/b": {regex}'),
            ("data[..x]", "Invalid value: \"..x\": must not start with '..'"),
            ("binaryData[dup]", 'Invalid value: "dup": duplicate of key present in data'),
        ],
    )


def test_an_immutable_secret_keeps_its_data_and_its_type_never_changes(
    client: httpx.Client,
) -> None:
    body = obj("Secret", "sealed", immutable=True, stringData={"k": "v"})
    assert client.post(SECRETS, json=body).status_code == 201
    changed = client.patch(f"{SECRETS}/sealed", json={"stringData": {"k": "w"}}, headers=MERGE)
    invalid(changed, f'Secret "sealed" is invalid: data: {IMMUTABLE}', [("data", IMMUTABLE)])
    retyped = client.patch(
        f"{SECRETS}/sealed",
        json={"type": "kubernetes.io/basic-auth", "stringData": {"username": "u"}},
        headers=MERGE,
    )
    detail = 'Invalid value: "kubernetes.io/basic-auth": field is immutable'
    invalid(
        retyped,
        f'Secret "sealed" is invalid: [type: {detail}, data: {IMMUTABLE}]',
        [("type", detail), ("data", IMMUTABLE)],
    )


@pytest.mark.parametrize(
    ("kind", "data", "annotations", "causes"),
    [
        ("kubernetes.io/tls", {"tls.crt": "x"}, {}, [("data[tls.key]", "Required value")]),
        (
            "kubernetes.io/tls",
            {},
            {},
            [("data[tls.crt]", "Required value"), ("data[tls.key]", "Required value")],
        ),
        (
            "kubernetes.io/basic-auth",
            {},
            {},
            [("data[username]", "Required value"), ("data[password]", "Required value")],
        ),
        (
            "kubernetes.io/ssh-auth",
            {"ssh-privatekey": ""},
            {},
            [("data[ssh-privatekey]", "Required value")],
        ),
        ("kubernetes.io/dockercfg", {}, {}, [("data[.dockercfg]", "Required value")]),
        (
            "kubernetes.io/dockerconfigjson",
            {".dockerconfigjson": "[1]"},
            {},
            [
                (
                    "data[.dockerconfigjson]",
                    'Invalid value: "<secret contents redacted>": json: cannot unmarshal array into Go value of'
                    " type map[string]interface {}",
                )
            ],
        ),
        (
            "kubernetes.io/service-account-token",
            {},
            {},
            [("metadata.annotations[kubernetes.io/service-account.name]", "Required value")],
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_a_secret_type_requires_its_keys(
    client: httpx.Client,
    kind: str,
    data: dict[str, str],
    annotations: dict[str, str],
    causes: list[tuple[str, str]],
) -> None:
    body = obj("Secret", "typed", type=kind, stringData=data)
    response = client.post(SECRETS, json=body)
    described = [f"{field}: {message}" for field, message in causes]
    joined = described[0] if len(described) == 1 else "[" + ", ".join(described) + "]"
    invalid(response, f'Secret "typed" is invalid: {joined}', causes)


def test_well_formed_typed_secrets_are_created(client: httpx.Client) -> None:
    for name, kind, data in (
        ("tls", "kubernetes.io/tls", {"tls.crt": "c", "tls.key": "k"}),
        ("basic", "kubernetes.io/basic-auth", {"password": ""}),
        ("docker", "kubernetes.io/dockerconfigjson", {".dockerconfigjson": '{"auths": {}}'}),
        ("custom", "example.com/anything", {}),
    ):
        response = client.post(SECRETS, json=obj("Secret", name, type=kind, stringData=data))
        assert response.status_code == 201, response.text
        assert "generation" not in response.json()["metadata"]  # kube's secret strategy sets none


def test_a_namespace_name_is_a_dns_label(client: httpx.Client) -> None:
    response = client.post(NAMESPACES, json=obj("Namespace", "a.b"))
    invalid(
        response,
        'Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots',
        [("metadata.name", 'Invalid value: "a.b": must not contain dots')],
    )


def test_the_namespace_name_label_follows_the_name(client: httpx.Client) -> None:
    created = client.post(
        NAMESPACES, json={**obj("Namespace", ""), "metadata": {"generateName": "lbl-"}}
    )
    assert created.status_code == 201
    metadata = created.json()["metadata"]
    assert metadata["labels"] == {"kubernetes.io/metadata.name": metadata["name"]}
    assert "generation" not in metadata  # kube's namespace strategy sets none
    name = metadata["name"]
    overwritten = client.patch(
        f"{NAMESPACES}/{name}",
        json={"metadata": {"labels": {"kubernetes.io/metadata.name": "other", "x": "y"}}},
        headers=MERGE,
    )
    assert overwritten.json()["metadata"]["labels"] == {
        "kubernetes.io/metadata.name": name,
        "x": "y",
    }
    found = client.get(NAMESPACES, params={"labelSelector": f"kubernetes.io/metadata.name={name}"})
    assert [item["metadata"]["name"] for item in found.json()["items"]] == [name]
    default = client.get(
        NAMESPACES, params={"labelSelector": "kubernetes.io/metadata.name=default"}
    )
    assert [item["metadata"]["name"] for item in default.json()["items"]] == ["default"]


def test_builtin_kinds_carry_no_generation_custom_resources_do(client: httpx.Client) -> None:
    created = client.post(CONFIGMAPS, json=obj("ConfigMap", "gen", data={"a": "1"}))
    assert "generation" not in created.json()["metadata"]
    updated = client.patch(f"{CONFIGMAPS}/gen", json={"data": {"a": "2"}}, headers=MERGE)
    assert "generation" not in updated.json()["metadata"]
    crontab = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "gen"},
        "spec": {"cronSpec": "* * * * *", "image": "i", "replicas": 1},
    }
    made = client.post("/apis/stable.example.com/v1/namespaces/default/crontabs", json=crontab)
    assert made.json()["metadata"]["generation"] == 1


@pytest.mark.parametrize(
    ("path", "selector", "expected"),
    [
        (NAMESPACES, "status.phase=Active", "default"),
        (NAMESPACES, "metadata.name=kube-system", "kube-system"),
        ("/api/v1/secrets", "type=kubernetes.io/tls", "tls"),
        ("/api/v1/services", "spec.clusterIP=10.0.0.1", "kubernetes"),
        ("/api/v1/services", "spec.type=ClusterIP,metadata.name=kubernetes", "kubernetes"),
        ("/api/v1/events", "reportingComponent=", None),
        ("/api/v1/events", "involvedObject.resourceVersion=1", None),
    ],
)
def test_field_selectors_kube_supports_per_kind(
    client: httpx.Client, path: str, selector: str, expected: str | None
) -> None:
    if expected == "tls":
        body = obj(
            "Secret",
            "sel-tls",
            type="kubernetes.io/tls",
            stringData={"tls.crt": "c", "tls.key": "k"},
        )
        client.post(SECRETS, json=body)
    deadline = time.monotonic() + 5  # the kubernetes Service is created once the server has started
    while True:
        response = client.get(path, params={"fieldSelector": selector})
        assert response.status_code == 200, response.text
        names = {item["metadata"]["name"] for item in response.json()["items"]}
        if expected is None or expected in names or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if expected == "tls":
        assert "sel-tls" in names and all(n in ("sel-tls", "tls") for n in names)
    elif expected is not None:
        assert expected in names


@pytest.mark.parametrize(
    ("path", "selector", "message"),
    [
        (NAMESPACES, "spec.finalizers=kubernetes", "field label not supported: spec.finalizers"),
        ("/api/v1/secrets", "data=x", "field label not supported: data"),
        ("/api/v1/services", "spec.ports=80", "field label not supported: spec.ports"),
        # no field label conversion registered for a ConfigMap: apimachinery's default one words it
        (
            CONFIGMAPS,
            "immutable=true",
            '"immutable" is not a known field selector: only "metadata.name", "metadata.namespace"',
        ),
    ],
)
def test_an_unsupported_field_selector_is_kubes_bad_request(
    client: httpx.Client, path: str, selector: str, message: str
) -> None:
    response = client.get(path, params={"fieldSelector": selector})
    body = response.json()
    assert (response.status_code, body["reason"], body["message"]) == (400, "BadRequest", message)
