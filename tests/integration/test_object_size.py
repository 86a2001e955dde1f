"""Object size limits through a real server on SQLite and on a real etcd: the same answers on
both, and nothing stored. A ConfigMap's data over kube's 1 MiB (core.MaxSecretSize) is a 422 from the
strategy's Validate (pkg/apis/core/validation/validation.go ValidateConfigMap: ``field.TooLong`` on
``field.NewPath("")``, whose Error() prints the empty path: ``: Too long: ...``); an object whose stored bytes
exceed etcd's 1.5 MiB request limit (https://etcd.io/docs/v3.5/dev-guide/limit/) is refused before it is
written, as 413 RequestEntityTooLarge with etcd's words (kubernetes/kubernetes#74600) — before this, SQLite
accepted it and etcd made it a 500."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import orjson
import pytest

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
from tests.serverproc import client_on_backend

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module", params=["sqlite", "etcd"])
def http(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[httpx.Client]:
    with client_on_backend(request, tmp_path_factory, timeout=30) as client:
        yield client


def assert_absent(http: httpx.Client, collection: str, name: str) -> None:
    assert http.get(f"{collection}/{name}").status_code == 404
    names = [item["metadata"]["name"] for item in http.get(collection).json()["items"]]
    assert name not in names


def test_configmap_with_data_over_1mib_is_invalid(http: httpx.Client) -> None:
    body = {"metadata": {"name": "over"}, "data": {"a": "x" * MIB, "b": "y"}}
    status = assert_status(
        http.post(CONFIGMAPS, json=body),
        422,
        "Invalid",
        f'ConfigMap "over" is invalid: : {TOO_LONG}',
    )
    assert status["details"]["causes"] == [{"reason": "FieldValueTooLong", "message": TOO_LONG}]  # type: ignore[index]
    assert_absent(http, CONFIGMAPS, "over")


def test_configmap_applied_with_data_over_1mib_is_invalid(http: httpx.Client) -> None:
    body = orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"},
                         "data": {"a": "x" * (MIB + 1)}})  # fmt: skip
    response = http.patch(f"{CONFIGMAPS}/applied?fieldManager=t", content=body, headers=APPLY)
    assert_status(response, 422, "Invalid", f'ConfigMap "applied" is invalid: : {TOO_LONG}')
    assert_absent(http, CONFIGMAPS, "applied")


def test_custom_resource_over_the_storage_limit_is_413(http: httpx.Client) -> None:
    response = http.post(CRONTABS, json=crontab("big", 2_500_000))  # the 2.5 MB
    assert_status(response, 413, "RequestEntityTooLarge", TOO_LARGE)
    assert_absent(http, CRONTABS, "big")


def test_custom_resource_applied_over_the_storage_limit_is_413(http: httpx.Client) -> None:
    body = orjson.dumps(crontab("applied", 1600 * 1024))
    response = http.patch(f"{CRONTABS}/applied?fieldManager=t", content=body, headers=APPLY)
    assert_status(response, 413, "RequestEntityTooLarge", TOO_LARGE)
    assert_absent(http, CRONTABS, "applied")


def test_secret_string_data_over_1mib_is_invalid(http: httpx.Client) -> None:
    body = {"metadata": {"name": "strings"}, "stringData": {"a": "x" * (MIB + 1)}}
    assert_status(
        http.post(SECRETS, json=body),
        422,
        "Invalid",
        f'Secret "strings" is invalid: data: {TOO_LONG}',
    )
    assert_absent(http, SECRETS, "strings")


def test_secret_string_data_whose_stored_bytes_are_over_the_limit_is_413(
    http: httpx.Client,
) -> None:
    # 1 MiB of data is allowed; stored as base64 (1.33 MiB) beside 250 KB of annotations it is not
    body = {"metadata": {"name": "stored", "annotations": {"a": "z" * 250_000}},
            "stringData": {"a": "x" * MIB}}  # fmt: skip
    assert_status(http.post(SECRETS, json=body), 413, "RequestEntityTooLarge", TOO_LARGE)
    assert_absent(http, SECRETS, "stored")


def test_an_object_just_under_the_limit_is_stored_on_every_backend(http: httpx.Client) -> None:
    response = http.post(CRONTABS, json=crontab("under", 1400 * 1024))
    assert response.status_code == 201, response.text[:300]
    assert len(http.get(f"{CRONTABS}/under").json()["spec"]["image"]) == 1400 * 1024
