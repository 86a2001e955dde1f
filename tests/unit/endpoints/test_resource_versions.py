"""What a read's resourceVersion means, as kube-apiserver reads it: a list or get at a revision not reached yet
waits for it (the watch cache's waitUntilFreshAndBlock) and is then kube's 504 ``Too large resource
version`` (storage/errors.go NewTooLargeResourceVersionError); resourceVersionMatch is validated as
ValidateListOptions validates it (422 ``ListOptions.meta.k8s.io``); an empty list is as of the store's
current revision; ``GET /`` is kube's index of paths (routes/index.go)."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from apiserver.endpoints import resourceversion
from tests.shipped import CRONTABS, assert_status, crontab

NAMESPACES = "/api/v1/namespaces"


@pytest.fixture(autouse=True)
def short_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resourceversion, "FRESHNESS_TIMEOUT", 0.3)


LONG_WAIT = 30.0
"""The freshness wait of the tests that say a read does not wait: one that did would take all of it."""


def current(api: httpx.Client) -> int:
    return int(api.get(NAMESPACES).json()["metadata"]["resourceVersion"])


@pytest.mark.parametrize("path", [NAMESPACES, f"{NAMESPACES}/default", CRONTABS])
def test_a_future_resource_version_waits_then_is_too_large(api: httpx.Client, path: str) -> None:
    wanted = current(api) + 1000
    started = time.monotonic()
    response = api.get(path, params={"resourceVersion": str(wanted)})
    assert time.monotonic() - started >= 0.3  # it waited
    status = assert_status(response, 504, "Timeout")
    assert status["message"] == (
        f"Timeout: Too large resource version: {wanted}, current: {current(api)}"
    )
    assert status["details"] == {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1,
    }
    assert response.headers["retry-after"] == "1"


def test_an_exact_future_list_is_too_large_at_once(
    api: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resourceversion, "FRESHNESS_TIMEOUT", LONG_WAIT)
    wanted = current(api) + 1000
    started = time.monotonic()
    response = api.get(
        NAMESPACES, params={"resourceVersion": str(wanted), "resourceVersionMatch": "Exact"}
    )
    assert time.monotonic() - started < LONG_WAIT / 3  # it did not wait for the revision
    status = assert_status(response, 504, "Timeout")
    assert status["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"


def test_a_revision_reached_while_waiting_is_served(
    api: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resourceversion, "FRESHNESS_TIMEOUT", 10.0)
    wanted = current(api) + 1
    writer = threading.Timer(
        0.2, lambda: api.post(CRONTABS, json=crontab("arrives-later")).raise_for_status()
    )
    writer.start()
    try:
        response = api.get(CRONTABS, params={"resourceVersion": str(wanted)})
    finally:
        writer.join()
    assert response.status_code == 200, response.text
    assert int(response.json()["metadata"]["resourceVersion"]) >= wanted
    assert "arrives-later" in {item["metadata"]["name"] for item in response.json()["items"]}


def test_past_and_any_resource_versions_are_served_at_once(
    api: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resourceversion, "FRESHNESS_TIMEOUT", LONG_WAIT)
    for params in ({"resourceVersion": "0"}, {"resourceVersion": "1"}, {}):
        started = time.monotonic()
        assert api.get(NAMESPACES, params=params).status_code == 200
        assert time.monotonic() - started < LONG_WAIT / 3, params  # it did not wait


@pytest.mark.parametrize(
    ("params", "messages"),
    [
        ({"resourceVersionMatch": "bogus", "resourceVersion": "1"},
         ['Unsupported value: "bogus": supported values: "Exact", "NotOlderThan", ""']),
        ({"resourceVersionMatch": "NotOlderThan"},
         ["Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"]),
        ({"resourceVersionMatch": "Exact", "resourceVersion": "0"},
         ['Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"']),
        ({"resourceVersionMatch": "Exact", "resourceVersion": "1", "continue": "abc"},
         ["Forbidden: resourceVersionMatch is forbidden when continue is provided"]),
        ({"resourceVersionMatch": "exact"},
         ["Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
          'Unsupported value: "exact": supported values: "Exact", "NotOlderThan", ""']),
    ],
)  # fmt: skip
def test_resource_version_match_is_validated_as_kube(
    api: httpx.Client, params: dict[str, str], messages: list[str]
) -> None:
    status = assert_status(api.get(NAMESPACES, params=params), 422, "Invalid")
    causes = status["details"]["causes"]
    assert [cause["message"] for cause in causes] == messages
    assert {cause["field"] for cause in causes} == {"resourceVersionMatch"}
    described = [f"resourceVersionMatch: {message}" for message in messages]
    joined = described[0] if len(described) == 1 else "[" + ", ".join(described) + "]"
    assert status["message"] == f'ListOptions.meta.k8s.io "" is invalid: {joined}'


def test_an_empty_list_is_as_of_the_current_revision(api: httpx.Client) -> None:
    empty = "/apis/stable.example.com/v1/namespaces/nobody-here/crontabs"
    for params in ({}, {"resourceVersion": "0"}):
        listed = api.get(empty, params=params).json()
        assert listed["items"] == []
        assert listed["metadata"]["resourceVersion"] == str(current(api))


def test_the_root_lists_the_paths(api: httpx.Client) -> None:
    response = api.get("/")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert paths == sorted(paths)
    for path in (
        "/api", "/api/v1", "/apis", "/apis/stable.example.com", "/apis/stable.example.com/v1",
        "/healthz", "/healthz/etcd", "/livez", "/livez/ping", "/metrics", "/openapi/v2",
        "/openapi/v3", "/readyz", "/readyz/informer-sync", "/readyz/shutdown", "/version",
        "/readyz/poststarthook/rbac/bootstrap-roles",
    ):  # fmt: skip
        assert path in paths
    assert "/livez/etcd" not in paths
    assert api.get("/nothing-here").status_code == 404
    assert api.post("/", json={}).status_code == 405
