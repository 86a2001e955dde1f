"""Deletion lifecycle: finalizers and deletionTimestamp, delete preconditions, namespace termination
(API-CONVENTIONS.md §5.8), built-in Secret and Event behaviour."""

from __future__ import annotations

import base64
import time

import httpx

from tests.integration.test_crud import assert_status, crontab

MERGE = {"content-type": "application/merge-patch+json"}


def crontabs(namespace: str) -> str:
    return f"/apis/stable.example.com/v1/namespaces/{namespace}/crontabs"


def make_namespace(client: httpx.Client, name: str) -> None:
    response = client.post(
        "/api/v1/namespaces",
        json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
    )
    assert response.status_code == 201
    assert response.json()["status"]["phase"] == "Active"


def test_the_default_and_system_namespaces_cannot_be_deleted(client: httpx.Client) -> None:
    for name in ("default", "kube-system", "kube-public"):
        status = assert_status(client.delete(f"/api/v1/namespaces/{name}"), 403, "Forbidden")
        assert (
            status["message"]
            == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
        )
        assert client.get(f"/api/v1/namespaces/{name}").json()["status"]["phase"] == "Active"


def test_finalizers_hold_deletion_until_removed(client: httpx.Client) -> None:
    held = crontab("held")
    held["metadata"]["finalizers"] = ["example.com/keep"]
    client.post(crontabs("default"), json=held)
    marked = client.delete(f"{crontabs('default')}/held")
    assert marked.status_code == 200
    metadata = marked.json()["metadata"]
    assert metadata["deletionTimestamp"] and metadata["deletionGracePeriodSeconds"] == 0
    assert client.get(f"{crontabs('default')}/held").status_code == 200
    added = client.patch(
        f"{crontabs('default')}/held",
        json={"metadata": {"finalizers": ["example.com/keep", "new"]}},
        headers=MERGE,
    )
    assert_status(added, 422, "Invalid")
    released = client.patch(
        f"{crontabs('default')}/held", json={"metadata": {"finalizers": None}}, headers=MERGE
    )
    assert released.status_code == 200
    assert client.get(f"{crontabs('default')}/held").status_code == 404


def test_delete_preconditions(client: httpx.Client) -> None:
    created = client.post(crontabs("default"), json=crontab("guarded")).json()
    body = {"preconditions": {"uid": "not-the-uid"}}
    status = assert_status(
        client.request("DELETE", f"{crontabs('default')}/guarded", json=body), 409, "Conflict"
    )
    assert "Precondition failed: UID in precondition: not-the-uid" in status["message"]
    body = {"preconditions": {"uid": created["metadata"]["uid"]}, "propagationPolicy": "Background"}
    assert client.request("DELETE", f"{crontabs('default')}/guarded", json=body).status_code == 200


def test_namespace_deletion_empties_then_removes_it(client: httpx.Client) -> None:
    make_namespace(client, "doomed")
    for name in ("a", "b"):
        assert client.post(crontabs("doomed"), json=crontab(name)).status_code == 201
    response = client.delete("/api/v1/namespaces/doomed")
    assert response.status_code == 200
    assert response.json()["status"]["phase"] == "Terminating"
    refused = client.post(crontabs("doomed"), json=crontab("late"))
    if refused.status_code != 404:  # the controller may already have removed the namespace
        status = assert_status(refused, 403, "Forbidden")
        assert status["message"].endswith(
            "unable to create new content in namespace doomed because it is being terminated"
        )
    deadline = time.monotonic() + 10
    while (
        client.get("/api/v1/namespaces/doomed").status_code != 404 and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    assert client.get("/api/v1/namespaces/doomed").status_code == 404
    assert client.get(crontabs("doomed")).json()["items"] == []


def test_secret_string_data_is_merged_into_data(client: httpx.Client) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "stringData": {"password": "hunter2"},
    }
    created = client.post("/api/v1/namespaces/default/secrets", json=secret).json()
    assert "stringData" not in created
    assert base64.b64decode(created["data"]["password"]) == b"hunter2"
    assert created["type"] == "Opaque"


def test_events_accept_kopf_timestamps_and_select_by_involved_object(client: httpx.Client) -> None:
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"namespace": "default", "generateName": "kopf-event-"},
        "action": "Action",
        "type": "Normal",
        "reason": "Logging",
        "message": "hello",
        "reportingComponent": "kopf",
        "reportingInstance": "dev",
        "source": {"component": "kopf"},
        "involvedObject": {
            "apiVersion": "stable.example.com/v1",
            "kind": "CronTab",
            "name": "x",
            "uid": "u-1",
            "namespace": "default",
        },
        "firstTimestamp": "2026-11-30T04:54:51.915537+00:00",
        "lastTimestamp": "2026-11-30T04:54:51.915537+00:00",
        "eventTime": "2026-11-30T04:54:51.915537+00:00",
    }
    response = client.post("/api/v1/namespaces/default/events", json=event)
    assert response.status_code == 201, response.text
    selector = "involvedObject.name=x,involvedObject.namespace=default,involvedObject.kind=CronTab,involvedObject.uid=u-1"
    found = client.get(
        "/api/v1/namespaces/default/events", params={"fieldSelector": selector}
    ).json()["items"]
    assert [e["message"] for e in found] == ["hello"]
    assert (
        client.get(
            "/api/v1/namespaces/default/events", params={"fieldSelector": "involvedObject.name=y"}
        ).json()["items"]
        == []
    )
