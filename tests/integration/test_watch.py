"""Watch streams over HTTP: synthetic ADDED for resourceVersion 0, replay from a resourceVersion, selectors,
DELETED with the last state, and the stream ending at timeoutSeconds (API-CONVENTIONS.md §8)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.integration.test_crud import crontab

WATCHED = "/apis/stable.example.com/v1/namespaces/watched/crontabs"


def events(client: httpx.Client, query: str, count: int) -> list[dict[str, Any]]:
    received: list[dict[str, Any]] = []
    with client.stream("GET", f"{WATCHED}?watch=true&{query}") as response:
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


def test_watch_ends_at_timeout_seconds(client: httpx.Client) -> None:
    with client.stream(
        "GET", f"{WATCHED}?watch=true&resourceVersion=0&timeoutSeconds=1"
    ) as response:
        lines = [
            json.loads(line) for line in response.iter_lines() if line
        ]  # returns: the server closed it
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in lines] == [("ADDED", "w1")]
