"""A real kopf operator (tests/e2e/operator_crontab.py, run as a subprocess) against a real apiforge server: its
finalizer, its status patches, its Events, deletion held until it releases the finalizer, and surviving a watch
that expires (410) when the server restarts (API-CONVENTIONS.md §8, §11)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from tests.compaction import wait_compacted
from tests.serverproc import REPO, ServerProcess, free_port

pytestmark = pytest.mark.timeout(90)

OPERATOR = Path(__file__).with_name("operator_crontab.py")
CRONTABS = "/apis/stable.example.com/v1/namespaces/default/crontabs"
EVENTS = "/api/v1/namespaces/default/events"
FINALIZER = "kopf.zalando.org/KopfFinalizerMarker"
MERGE = {"content-type": "application/merge-patch+json"}
FATAL = ("Traceback", "CRITICAL", "WatchingError", "Error in the watch-stream")

T = TypeVar("T")


@dataclass
class Operator:
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # kopf stops gracefully on SIGINT/SIGTERM
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_operator(kubeconfig: Path, log: Path, script: Path = OPERATOR) -> Operator:
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kopf",
                "run",
                "--standalone",
                "-A",
                "--verbose",
                str(script),
            ],
            cwd=REPO,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    return Operator(process, log)


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = 20.0) -> T:
    """Poll ``probe`` until it returns something truthy; fail with the last value after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}; last seen: {last!r}")


def crontab(name: str, replicas: int = 3) -> dict[str, Any]:
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": {"cronSpec": "*/5 * * * *", "image": f"{name}-image", "replicas": replicas},
    }


def get(http: httpx.Client, name: str) -> dict[str, Any] | None:
    response = http.get(f"{CRONTABS}/{name}")
    if response.status_code == 404:
        return None
    assert response.status_code == 200, response.text
    obj: dict[str, Any] = response.json()
    return obj


def handled(http: httpx.Client, name: str) -> dict[str, Any] | None:
    """The object once kopf has put its finalizer on it and written its status."""
    obj = get(http, name)
    if obj and FINALIZER in obj["metadata"].get("finalizers", []) and obj.get("status"):
        return obj
    return None


def events_for(http: httpx.Client, name: str) -> list[dict[str, Any]]:
    response = http.get(EVENTS, params={"fieldSelector": f"involvedObject.name={name}"})
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def assert_no_fatal_errors(operator: Operator) -> None:
    assert operator.process.poll() is None, operator.output()[-4000:]
    log = operator.output()
    assert not [marker for marker in FATAL if marker in log], log[-4000:]


@pytest.fixture(scope="module")
def operator(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Operator]:
    running = start_operator(server.kubeconfig, tmp_path_factory.mktemp("kopf") / "operator.log")
    yield running
    running.stop()


def test_operator_adds_its_finalizer_and_reports_status(
    operator: Operator, client: httpx.Client
) -> None:
    assert client.post(CRONTABS, json=crontab("kopf-a", replicas=3)).status_code == 201
    obj = wait_for("kopf to handle kopf-a", lambda: handled(client, "kopf-a"))
    assert obj["metadata"]["finalizers"] == [FINALIZER]
    # the handler's return value (status.replicas) and its patch.status, in one PATCH of /status (a status
    # patched through the main resource would have been ignored: CronTab has a status subresource)
    assert obj["status"] == {"replicas": 3, "labelSelector": "crontab=kopf-a"}
    assert obj["metadata"]["generation"] == 1  # finalizer, annotations and status leave it alone
    assert "kopf.zalando.org/last-handled-configuration" in obj["metadata"]["annotations"]
    assert obj["spec"] == crontab("kopf-a")["spec"]
    scale = client.get(f"{CRONTABS}/kopf-a/scale").json()
    assert scale["status"] == {"replicas": 3, "selector": "crontab=kopf-a"}
    assert_no_fatal_errors(operator)


def test_deletion_completes_once_the_operator_releases_its_finalizer(
    operator: Operator, client: httpx.Client
) -> None:
    assert client.post(CRONTABS, json=crontab("kopf-del", replicas=1)).status_code == 201
    wait_for("kopf to handle kopf-del", lambda: handled(client, "kopf-del"))
    response = client.delete(f"{CRONTABS}/kopf-del")
    assert response.status_code == 200, response.text
    pending = response.json()
    # the finalizer holds the object: deletion is only marked
    assert pending["metadata"]["deletionTimestamp"]
    assert pending["metadata"]["finalizers"] == [FINALIZER]
    wait_for("kopf-del to be gone", lambda: get(client, "kopf-del") is None)
    wait_for(
        "kopf to see the deletion",
        lambda: "[default/kopf-del] Deleted, really deleted" in operator.output(),
    )
    assert_no_fatal_errors(operator)


def test_adopted_children_disappear_with_the_parent(
    operator: Operator, client: httpx.Client
) -> None:
    parent = crontab("kopf-parent")
    parent["metadata"]["labels"] = {"adopt": "true"}
    assert client.post(CRONTABS, json=parent).status_code == 201
    child_path = "/api/v1/namespaces/default/configmaps/kopf-parent-child"
    child = wait_for("kopf to create the child", lambda: client.get(child_path).json().get("data"))
    assert child == {"owner": "kopf-parent"}
    [owner] = client.get(child_path).json()["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["controller"], owner["blockOwnerDeletion"]) == (
        "CronTab",
        "kopf-parent",
        True,
        True,
    )
    assert client.delete(f"{CRONTABS}/kopf-parent").status_code == 200
    wait_for("the parent to be gone", lambda: get(client, "kopf-parent") is None)
    wait_for("the child to be collected", lambda: client.get(child_path).status_code == 404)
    assert_no_fatal_errors(operator)


def test_operator_posts_events(operator: Operator, client: httpx.Client) -> None:
    assert client.post(CRONTABS, json=crontab("kopf-ev")).status_code == 201
    created = wait_for("kopf to handle kopf-ev", lambda: handled(client, "kopf-ev"))
    assert client.delete(f"{CRONTABS}/kopf-ev").status_code == 200
    wait_for("kopf-ev to be gone", lambda: get(client, "kopf-ev") is None)
    events = wait_for(
        "both events of kopf-ev",
        lambda: (found := events_for(client, "kopf-ev")) and len(found) >= 2 and found,
        timeout=5,
    )
    by_reason = {event["reason"]: event for event in events}
    assert by_reason["Reconciled"]["message"] == "CronTab kopf-ev runs kopf-ev-image"
    assert by_reason["Finalized"]["message"] == "CronTab kopf-ev released"
    reconciled = by_reason["Reconciled"]
    assert reconciled["metadata"]["name"].startswith("kopf-event-")
    assert reconciled["type"] == "Normal" and reconciled["source"]["component"] == "kopf"
    involved = reconciled["involvedObject"]
    assert (involved["kind"], involved["name"], involved["uid"]) == (
        "CronTab",
        "kopf-ev",
        created["metadata"]["uid"],
    )


def test_operator_survives_a_watch_expiry(tmp_path: Path) -> None:
    """kopf resumes its watch from the last resourceVersion it saw. Make that revision compacted away, then
    restart the server so that kopf reconnects from it: the server answers 410 Expired, kopf relists, and it
    goes on handling objects."""
    server = ServerProcess(
        tmp_path / "data", free_port(), extra_args=("--etcd-compaction-interval", "0.5")
    )
    server.start()
    operator = start_operator(server.kubeconfig, tmp_path / "operator.log")
    try:
        with server.client(timeout=10) as http:
            assert http.post(CRONTABS, json=crontab("before", replicas=1)).status_code == 201
            wait_for("kopf to handle 'before'", lambda: handled(http, "before"))
            time.sleep(0.5)  # let kopf's own patches settle: its last seen revision is now fixed

            # writes elsewhere move the revision on; compaction then drops kopf's revision from history
            configmaps = "/api/v1/namespaces/default/configmaps"
            churn = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "churn"}}
            churned = http.post(configmaps, json=churn)
            assert churned.status_code == 201
            for n in range(10):
                assert (
                    http.patch(
                        f"{configmaps}/churn", json={"data": {"n": str(n)}}, headers=MERGE
                    ).status_code
                    == 200
                )
            wait_compacted(http, configmaps, churned.json()["metadata"]["resourceVersion"])

        server.stop()
        server.start()
        with server.client(timeout=10) as http:
            wait_for(
                "kopf to get 410 and restart its watch",
                lambda: (
                    "Restarting the watch-stream for crontabs.v1.stable.example.com"
                    in operator.output()
                ),
            )
            assert http.post(CRONTABS, json=crontab("after", replicas=2)).status_code == 201
            obj = wait_for("kopf to handle 'after'", lambda: handled(http, "after"))
            assert obj["status"]["replicas"] == 2
            assert http.delete(f"{CRONTABS}/after").status_code == 200
            wait_for("'after' to be gone", lambda: get(http, "after") is None)
        assert_no_fatal_errors(operator)
    finally:
        operator.stop()
        server.stop()
