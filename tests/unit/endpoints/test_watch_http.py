"""Watch streams over HTTP, in process: synthetic ADDED for resourceVersion 0, replay from a resourceVersion,
selectors, DELETED with the last state, and the stream ending at timeoutSeconds (API-CONVENTIONS.md §8)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.shipped import crontab

WATCHED = "/apis/stable.example.com/v1/namespaces/watched/crontabs"


def events(
    api: httpx.Client, query: str, count: int, collection: str = WATCHED
) -> list[dict[str, Any]]:
    received: list[dict[str, Any]] = []
    with api.stream("GET", f"{collection}?watch=true&{query}") as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line:
                received.append(json.loads(line))
            if len(received) == count:
                break
    return received


def test_watch_semantics(api: httpx.Client) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "watched"}}
    assert api.post("/api/v1/namespaces", json=namespace).status_code == 201
    first = api.post(WATCHED, json=crontab("w1")).json()
    api.post(WATCHED, json=crontab("w2"))

    added = events(api, "resourceVersion=0&timeoutSeconds=5", 2)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in added] == [
        ("ADDED", "w1"),
        ("ADDED", "w2"),
    ]

    start = first["metadata"]["resourceVersion"]
    api.patch(f"{WATCHED}/w1", json={"spec": {"replicas": 5}},
                 headers={"content-type": "application/merge-patch+json"})  # fmt: skip
    deleted = api.delete(f"{WATCHED}/w2").json()
    replay = events(api, f"resourceVersion={start}&timeoutSeconds=5", 3)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in replay] == [
        ("ADDED", "w2"),
        ("MODIFIED", "w1"),
        ("DELETED", "w2"),
    ]
    assert replay[1]["object"]["spec"]["replicas"] == 5
    # DELETED carries the last state at the deletion revision, which is what DELETE answered with
    assert (
        replay[2]["object"]["metadata"]["resourceVersion"] == deleted["metadata"]["resourceVersion"]
    )
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in replay]
    assert versions == sorted(versions) and versions[0] > int(start)

    named = events(
        api, f"resourceVersion={start}&fieldSelector=metadata.name%3Dw1&timeoutSeconds=5", 1
    )
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in named] == [("MODIFIED", "w1")]


def one_crontab_in(api: httpx.Client, namespace: str, name: str) -> str:
    """A fresh namespace holding one CronTab ``name``; its CronTab collection's path."""
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    assert api.post("/api/v1/namespaces", json=body).status_code == 201
    collection = f"/apis/stable.example.com/v1/namespaces/{namespace}/crontabs"
    assert api.post(collection, json=crontab(name)).status_code == 201
    return collection


def test_watch_ends_at_timeout_seconds(api: httpx.Client) -> None:
    collection = one_crontab_in(api, "watch-timeout", "t1")
    with api.stream(
        "GET", f"{collection}?watch=true&resourceVersion=0&timeoutSeconds=1"
    ) as response:
        lines = [
            json.loads(line) for line in response.iter_lines() if line
        ]  # returns: the server closed it
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in lines] == [("ADDED", "t1")]


def test_send_initial_events_ends_with_a_marked_bookmark(api: httpx.Client) -> None:
    collection = one_crontab_in(api, "watch-initial", "i1")
    received = events(
        api,
        "sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan",
        2,
        collection,
    )
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in received] == [
        ("ADDED", "i1"),
        ("BOOKMARK", None),
    ]
    bookmark = received[1]["object"]
    assert bookmark["kind"] == "CronTab" and bookmark["apiVersion"] == "stable.example.com/v1"
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(bookmark["metadata"]["resourceVersion"]) >= int(
        received[0]["object"]["metadata"]["resourceVersion"]
    )


@pytest.mark.parametrize(
    "query",
    [
        "resourceVersion=abc",
        "resourceVersion=-1",
        "timeoutSeconds=nan",
        "timeoutSeconds=1.5",
        "timeoutSeconds=9223372036854775808",  # past int64, which kube cannot decode either
    ],
)
def test_malformed_watch_parameters_are_400_before_the_stream(
    api: httpx.Client, query: str
) -> None:
    response = api.get(f"{WATCHED}?watch=true&{query}")
    assert response.status_code == 400, response.text
    status = response.json()
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 400, "BadRequest")


@pytest.mark.parametrize("timeout", ["0", "9223372036854775807"])
def test_a_zero_or_huge_timeout_is_a_long_watch(api: httpx.Client, timeout: str) -> None:
    """kube's watch handler gives timeoutSeconds=0 its random 30-60 minutes; int64's largest is valid."""
    url = f"{WATCHED}?watch=true&timeoutSeconds={timeout}"
    with api.stream("GET", url, timeout=1) as response:
        assert response.status_code == 200
        with pytest.raises(httpx.ReadTimeout):  # still streaming after a quiet second: not ended
            for _ in response.iter_raw():
                pass
