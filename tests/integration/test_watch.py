"""Watch streams over HTTP: synthetic ADDED for resourceVersion 0, replay from a resourceVersion, selectors,
DELETED with the last state, and the stream ending at timeoutSeconds (API-CONVENTIONS.md §8)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.test_crud import crontab
from tests.serverproc import ServerProcess, free_port

WATCHED = "/apis/stable.example.com/v1/namespaces/watched/crontabs"


def events(
    client: httpx.Client, query: str, count: int, collection: str = WATCHED
) -> list[dict[str, Any]]:
    received: list[dict[str, Any]] = []
    with client.stream("GET", f"{collection}?watch=true&{query}") as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line:
                received.append(json.loads(line))
            if len(received) == count:
                break
    return received


def test_watch_semantics(client: httpx.Client) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "watched"}}
    assert client.post("/api/v1/namespaces", json=namespace).status_code == 201
    first = client.post(WATCHED, json=crontab("w1")).json()
    client.post(WATCHED, json=crontab("w2"))

    added = events(client, "resourceVersion=0&timeoutSeconds=5", 2)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in added] == [
        ("ADDED", "w1"),
        ("ADDED", "w2"),
    ]

    start = first["metadata"]["resourceVersion"]
    client.patch(f"{WATCHED}/w1", json={"spec": {"replicas": 5}},
                 headers={"content-type": "application/merge-patch+json"})  # fmt: skip
    deleted = client.delete(f"{WATCHED}/w2").json()
    replay = events(client, f"resourceVersion={start}&timeoutSeconds=5", 3)
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
        client, f"resourceVersion={start}&fieldSelector=metadata.name%3Dw1&timeoutSeconds=5", 1
    )
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in named] == [("MODIFIED", "w1")]


def one_crontab_in(client: httpx.Client, namespace: str, name: str) -> str:
    """A fresh namespace holding one CronTab ``name``; its CronTab collection's path."""
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    assert client.post("/api/v1/namespaces", json=body).status_code == 201
    collection = f"/apis/stable.example.com/v1/namespaces/{namespace}/crontabs"
    assert client.post(collection, json=crontab(name)).status_code == 201
    return collection


def test_watch_ends_at_timeout_seconds(client: httpx.Client) -> None:
    collection = one_crontab_in(client, "watch-timeout", "t1")
    with client.stream(
        "GET", f"{collection}?watch=true&resourceVersion=0&timeoutSeconds=1"
    ) as response:
        lines = [
            json.loads(line) for line in response.iter_lines() if line
        ]  # returns: the server closed it
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in lines] == [("ADDED", "t1")]


def test_send_initial_events_ends_with_a_marked_bookmark(client: httpx.Client) -> None:
    collection = one_crontab_in(client, "watch-initial", "i1")
    received = events(
        client,
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


def test_idle_watch_gets_periodic_bookmarks(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, free_port())
    server.start(extra_env={"APIFORGE_BOOKMARK_INTERVAL_SECONDS": "0.2"})
    try:
        with (
            httpx.Client(base_url=server.url, timeout=10) as http,
            http.stream(
                "GET",
                "/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true&resourceVersion=0&timeoutSeconds=1",
            ) as response,
        ):
            lines = [json.loads(line) for line in response.iter_lines() if line]
    finally:
        server.stop()
    assert len(lines) >= 2 and all(line["type"] == "BOOKMARK" for line in lines)
    assert all(line["object"]["metadata"]["resourceVersion"].isdigit() for line in lines)


def test_a_bookmark_carries_the_revision_of_changes_the_selector_hid(tmp_path: Path) -> None:
    """kube's cacheWatcher: bookmarks advance past filtered events, so a watcher whose selector hides
    every change can still resume near the head instead of from a revision long compacted."""
    server = ServerProcess(tmp_path, free_port())
    server.start(extra_env={"APIFORGE_BOOKMARK_INTERVAL_SECONDS": "0.3"})
    configmaps = "/api/v1/namespaces/default/configmaps"
    try:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            start = http.get(configmaps).json()["metadata"]["resourceVersion"]
            query = f"watch=true&allowWatchBookmarks=true&resourceVersion={start}"
            query += "&labelSelector=app%3Dshown&timeoutSeconds=2"
            hidden: list[int] = []
            with http.stream("GET", f"{configmaps}?{query}") as response:
                body = {"metadata": {"name": "hidden", "labels": {"app": "other"}}}
                created = http.post(configmaps, json=body).json()
                hidden.append(int(created["metadata"]["resourceVersion"]))
                lines = [json.loads(line) for line in response.iter_lines() if line]
    finally:
        server.stop()
    assert lines and all(line["type"] == "BOOKMARK" for line in lines)
    assert int(lines[-1]["object"]["metadata"]["resourceVersion"]) >= hidden[0]


def test_watch_from_a_compacted_revision_gets_410_expired(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, free_port(), extra_args=("--etcd-compaction-interval", "0.2"))
    server.start()
    try:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            configmaps = "/api/v1/namespaces/default/configmaps"
            body = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "c"},
                "data": {"n": "0"},
            }
            old = http.post(configmaps, json=body).json()["metadata"]["resourceVersion"]
            for index in range(1, 4):
                http.patch(
                    f"{configmaps}/c",
                    json={"data": {"n": str(index)}},
                    headers={"content-type": "application/merge-patch+json"},
                )
            time.sleep(1.0)  # several compaction intervals
            with http.stream("GET", f"{configmaps}?watch=true&resourceVersion={old}") as response:
                lines = [json.loads(line) for line in response.iter_lines() if line]
            listed = http.get(configmaps).json()
    finally:
        server.stop()
    assert len(lines) == 1 and lines[0]["type"] == "ERROR"
    status = lines[0]["object"]
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
    assert status["message"].startswith(f"too old resource version: {old} (")
    assert listed["items"][0]["data"] == {"n": "3"}  # compaction never loses current state


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
    client: httpx.Client, query: str
) -> None:
    response = client.get(f"{WATCHED}?watch=true&{query}")
    assert response.status_code == 400, response.text
    status = response.json()
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 400, "BadRequest")


@pytest.mark.parametrize("timeout", ["0", "9223372036854775807"])
def test_a_zero_or_huge_timeout_is_a_long_watch(client: httpx.Client, timeout: str) -> None:
    """kube's watch handler gives timeoutSeconds=0 its random 30-60 minutes; int64's largest is valid."""
    url = f"{WATCHED}?watch=true&timeoutSeconds={timeout}"
    with client.stream("GET", url, timeout=1) as response:
        assert response.status_code == 200
        with pytest.raises(httpx.ReadTimeout):  # still streaming after a quiet second: not ended
            for _ in response.iter_raw():
                pass
