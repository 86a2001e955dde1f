"""Integers a client puts in a list or watch query (limit, resourceVersion, continue) are judged as kube
parses them (int64 limit, uint64 resourceVersion, the continue token's int64 revision): out of range is a 400,
a list at a revision beyond the store's is the 504 "Too large resource version" kube answers, and a watch
from one waits for that revision as kube's watch cache does (getAllEventsSinceLocked has no upper bound) —
never a 500 from the storage driver, on the embedded store and on a real etcd."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import httpx
import orjson
import pytest

from tests.serverproc import client_on_backend

pytestmark = pytest.mark.timeout(120)
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
BIG = [2**63 - 1, 2**63, 2**64 - 1, 2**64, 10**30]


@pytest.fixture(scope="module", params=["sqlite", "etcd"])
def http(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[httpx.Client]:
    with client_on_backend(request, tmp_path_factory) as client:
        for name in ("a", "b", "c"):
            body = {"metadata": {"name": name}, "data": {"k": name}}
            assert client.post(CONFIGMAPS, json=body).status_code == 201
        yield client


def token(revision: int, start: str = "b\x00") -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": revision, "start": start}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize("value", BIG)
def test_a_huge_limit_is_no_limit_or_a_400(http: httpx.Client, value: int) -> None:
    response = http.get(CONFIGMAPS, params={"limit": str(value)})
    if value < 2**63:  # a valid int64: larger than any list, so everything in one page
        assert response.status_code == 200
        assert len(response.json()["items"]) == 3
    else:  # kube cannot parse it as an int64
        assert response.status_code == 400, response.text
        assert response.json()["reason"] == "BadRequest"


@pytest.mark.parametrize("value", BIG)
def test_a_huge_exact_resource_version_is_too_large_or_invalid(
    http: httpx.Client, value: int
) -> None:
    query = {"resourceVersion": str(value), "resourceVersionMatch": "Exact", "limit": "1"}
    response = http.get(CONFIGMAPS, params=query)
    if value < 2**64:  # a valid uint64 beyond the store: kube's "Too large resource version"
        assert response.status_code == 504, response.text
        assert response.json()["message"].startswith("Timeout: Too large resource version")
    else:
        assert response.status_code == 400, response.text
        assert "invalid resource version" in response.json()["message"]


@pytest.mark.parametrize("value", BIG)
def test_a_continue_token_with_a_huge_revision_is_refused(http: httpx.Client, value: int) -> None:
    response = http.get(CONFIGMAPS, params={"limit": "1", "continue": token(value)})
    if value <= 2**63 - 1:  # a revision no store has reached
        assert response.status_code == 504, response.text
    else:
        assert response.status_code == 400, response.text
        assert "invalid continue token" in response.json()["message"]


@pytest.mark.parametrize("value", BIG)
def test_a_watch_from_a_huge_resource_version_is_answered(http: httpx.Client, value: int) -> None:
    query = {"watch": "1", "resourceVersion": str(value), "timeoutSeconds": "1"}
    with http.stream("GET", CONFIGMAPS, params=query) as response:
        body = response.read()
    if value < 2**64:  # nothing has happened after that revision: no event until the timeout
        assert response.status_code == 200, body
        assert [orjson.loads(line)["type"] for line in body.splitlines() if line.strip()] == []
    else:
        assert response.status_code == 400, body
    assert http.get(CONFIGMAPS).status_code == 200  # and the server is fine
