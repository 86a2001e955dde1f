"""Object size limits through a real server on SQLite and on a real etcd (issue 15): the same answers on
both, and nothing stored. A ConfigMap's data over kube's 1 MiB (core.MaxSecretSize) is a 422 from the
strategy's Validate (pkg/apis/core/validation/validation.go ValidateConfigMap: ``field.TooLong`` on
``field.NewPath("")``, whose Error() prints the empty path: ``: Too long: ...``); an object whose stored bytes
exceed etcd's 1.5 MiB request limit (https://etcd.io/docs/v3.5/dev-guide/limit/) is refused before it is
written, as 413 RequestEntityTooLarge with etcd's words (kubernetes/kubernetes#74600) — before this, SQLite
accepted it and etcd made it a 500."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from tests.etcdproc import EtcdProcess
from tests.serverproc import ServerProcess, free_port

pytestmark = pytest.mark.timeout(120)
MIB = 1024 * 1024
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
SECRETS = "/api/v1/namespaces/default/secrets"
CRONTABS = "/apis/stable.example.com/v1/namespaces/default/crontabs"
APPLY = {"Content-Type": "application/apply-patch+yaml"}
TOO_LONG = "Too long: may not be more than 1048576 bytes"
TOO_LARGE = "etcdserver: request is too large"


@pytest.fixture(scope="module", params=["sqlite", "etcd"])
def http(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[httpx.Client]:
    extra: tuple[str, ...] = ()
    if request.param == "etcd":
        etcd: EtcdProcess = request.getfixturevalue("etcd")
        extra = ("--etcd-servers", etcd.url)
    server = ServerProcess(
        Path(tmp_path_factory.mktemp("data")), free_port(), storage=request.param, extra_args=extra
    )
    server.start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            yield client
    finally:
        server.stop()


def crontab(name: str, image_bytes: int) -> dict[str, object]:
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": {"cronSpec": "* * * * *", "image": "i" * image_bytes},
    }


def assert_status(
    response: httpx.Response, code: int, reason: str, message: str
) -> dict[str, object]:
    assert response.status_code == code, response.text[:500]
    status = response.json()
    assert (status["kind"], status["code"], status["reason"]) == ("Status", code, reason)
    assert status["message"] == message
    return dict(status)


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
