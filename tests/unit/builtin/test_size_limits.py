"""Object size limits before storage, in kube's words, through the real app over memory storage.

- ConfigMap and Secret data: at most core.MaxSecretSize (1 MiB) of decoded values, a 422 from kube's
  ValidateConfigMap (on the whole object, ``field.NewPath("")``) and ValidateSecret (on ``data``), with
  field.TooLong's "Too long: may not be more than 1048576 bytes" (pkg/apis/core/validation/validation.go).
- The stored object: etcd refuses requests over 1.5 MiB (``--max-request-bytes``,
  https://etcd.io/docs/v3.5/dev-guide/limit/) with "etcdserver: request is too large"; every backend refuses
  the same bytes before writing, as 413 RequestEntityTooLarge (kubernetes/kubernetes#74600) with etcd's words.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator

import httpx
import orjson
import pytest

from tests.inprocess import InProcessServer
from tests.objectsize import (
    APPLY,
    CONFIGMAPS,
    CRONTABS,
    MIB,
    SECRETS,
    TOO_LARGE,
    TOO_LONG,
    assert_status,
    crontab,
)


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with InProcessServer() as server, server.client() as http:
        yield http


def configmap(name: str, **fields: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **fields}


def secret(name: str, **fields: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, **fields}


def assert_invalid(response: httpx.Response, kind: str, name: str, field: str) -> None:
    prefix = f"{field}: " if field else ": "  # kube prints an empty field path as such
    status = assert_status(
        response, 422, "Invalid", f'{kind} "{name}" is invalid: {prefix}{TOO_LONG}'
    )
    cause = {"reason": "FieldValueTooLong", "message": TOO_LONG}
    assert status["details"]["causes"] == [{**cause, "field": field} if field else cause]  # type: ignore[index]


def assert_absent(client: httpx.Client, path: str) -> None:
    assert client.get(path).status_code == 404


def test_configmap_data_of_exactly_1mib_is_stored(client: httpx.Client) -> None:
    body = configmap("exact", data={"a": "x" * (MIB - 10), "b": "y" * 10})
    assert client.post(CONFIGMAPS, json=body).status_code == 201


def test_configmap_data_over_1mib_is_invalid_on_the_whole_object(client: httpx.Client) -> None:
    body = configmap("over", data={"a": "x" * MIB, "b": "y"})
    assert_invalid(client.post(CONFIGMAPS, json=body), "ConfigMap", "over", "")
    assert_absent(client, f"{CONFIGMAPS}/over")


def test_configmap_counts_utf8_bytes_and_decoded_binary_data(client: httpx.Client) -> None:
    text = "é" * (MIB // 4)  # half a MiB of UTF-8 in a quarter-MiB of characters
    binary = base64.b64encode(b"\0" * (MIB // 2 + 1)).decode()
    body = configmap("mixed", data={"t": text}, binaryData={"b": binary})
    assert_invalid(client.post(CONFIGMAPS, json=body), "ConfigMap", "mixed", "")


def test_configmap_update_over_1mib_is_invalid_and_keeps_the_stored_object(
    client: httpx.Client,
) -> None:
    assert client.post(CONFIGMAPS, json=configmap("grows", data={"a": "small"})).status_code == 201
    response = client.put(
        f"{CONFIGMAPS}/grows", json=configmap("grows", data={"a": "x" * (MIB + 1)})
    )
    assert_invalid(response, "ConfigMap", "grows", "")
    assert client.get(f"{CONFIGMAPS}/grows").json()["data"] == {"a": "small"}


def test_configmap_server_side_apply_over_1mib_is_invalid(client: httpx.Client) -> None:
    body = orjson.dumps(configmap("applied", data={"a": "x" * (MIB + 1)}))
    response = client.patch(f"{CONFIGMAPS}/applied?fieldManager=test", content=body, headers=APPLY)
    assert_invalid(response, "ConfigMap", "applied", "")
    assert_absent(client, f"{CONFIGMAPS}/applied")


def test_secret_string_data_over_1mib_is_invalid_on_data(client: httpx.Client) -> None:
    body = secret(
        "strings", stringData={"a": "x" * MIB}, data={"b": base64.b64encode(b"y").decode()}
    )
    assert_invalid(client.post(SECRETS, json=body), "Secret", "strings", "data")
    assert_absent(client, f"{SECRETS}/strings")


def test_secret_data_of_1mib_is_stored(client: httpx.Client) -> None:
    body = secret("full", data={"a": base64.b64encode(b"x" * MIB).decode()})
    assert client.post(SECRETS, json=body).status_code == 201


def test_secret_whose_stored_bytes_exceed_the_request_limit_is_413(client: httpx.Client) -> None:
    # 1 MiB of data is allowed, but stored as base64 (1.33 MiB) beside 250 KB of annotations: over 1.5 MiB
    body = secret("stored", stringData={"a": "x" * MIB})
    body["metadata"] = {"name": "stored", "annotations": {"a": "z" * 250_000}}
    assert_status(client.post(SECRETS, json=body), 413, "RequestEntityTooLarge", TOO_LARGE)
    assert_absent(client, f"{SECRETS}/stored")


def test_custom_resource_over_the_request_limit_is_413(client: httpx.Client) -> None:
    response = client.post(CRONTABS, json=crontab("big", 1600 * 1024))
    assert_status(response, 413, "RequestEntityTooLarge", TOO_LARGE)
    assert_absent(client, f"{CRONTABS}/big")


def test_custom_resource_applied_over_the_request_limit_is_413(client: httpx.Client) -> None:
    body = orjson.dumps(crontab("applied", 1600 * 1024))
    response = client.patch(f"{CRONTABS}/applied?fieldManager=test", content=body, headers=APPLY)
    assert_status(response, 413, "RequestEntityTooLarge", TOO_LARGE)
    assert_absent(client, f"{CRONTABS}/applied")


def test_custom_resource_grown_over_the_request_limit_by_a_patch_is_413(
    client: httpx.Client,
) -> None:
    assert client.post(CRONTABS, json=crontab("patched", 10)).status_code == 201
    patch = {"spec": {"image": "i" * (1600 * 1024)}}
    response = client.patch(
        f"{CRONTABS}/patched",
        content=orjson.dumps(patch),
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert_status(response, 413, "RequestEntityTooLarge", TOO_LARGE)
    assert client.get(f"{CRONTABS}/patched").json()["spec"]["image"] == "i" * 10


def test_custom_resource_just_under_the_request_limit_is_stored(client: httpx.Client) -> None:
    assert client.post(CRONTABS, json=crontab("under", 1400 * 1024)).status_code == 201
