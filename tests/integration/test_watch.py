"""Watch behaviour that needs a server process: bookmark intervals set through the environment before the
server imports, and compaction of the SQLite history on its interval (the rest of the watch semantics run in
process: tests/unit/endpoints/test_watch_http.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.compaction import wait_compacted
from tests.serverproc import ServerProcess, free_port


def test_idle_watch_gets_periodic_bookmarks(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, free_port())
    server.start(extra_env={"APIFORGE_BOOKMARK_INTERVAL_SECONDS": "0.2"})
    try:
        with (
            server.client(timeout=10) as http,
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
        with server.client(timeout=10) as http:
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
        with server.client(timeout=10) as http:
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
            wait_compacted(http, configmaps, old)
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
