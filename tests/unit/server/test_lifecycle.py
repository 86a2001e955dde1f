"""Deletion lifecycle: finalizers and deletionTimestamp, delete preconditions, namespace termination
(API-CONVENTIONS.md §5.8), built-in Secret and Event behaviour."""

from __future__ import annotations

import base64
import time

import httpx

from tests.shipped import assert_status, crontab

MERGE = {"content-type": "application/merge-patch+json"}


def crontabs(namespace: str) -> str:
    return f"/apis/stable.example.com/v1/namespaces/{namespace}/crontabs"


def make_namespace(api: httpx.Client, name: str) -> None:
    response = api.post(
        "/api/v1/namespaces",
        json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
    )
    assert response.status_code == 201
    assert response.json()["status"]["phase"] == "Active"


def test_the_default_and_system_namespaces_cannot_be_deleted(api: httpx.Client) -> None:
    for name in ("default", "kube-system", "kube-public"):
        status = assert_status(api.delete(f"/api/v1/namespaces/{name}"), 403, "Forbidden")
        assert (
            status["message"]
            == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
        )
        assert api.get(f"/api/v1/namespaces/{name}").json()["status"]["phase"] == "Active"


def test_finalizers_hold_deletion_until_removed(api: httpx.Client) -> None:
    held = crontab("held")
    held["metadata"]["finalizers"] = ["example.com/keep"]
    api.post(crontabs("default"), json=held)
    marked = api.delete(f"{crontabs('default')}/held")
    assert marked.status_code == 200
    metadata = marked.json()["metadata"]
    assert metadata["deletionTimestamp"] and metadata["deletionGracePeriodSeconds"] == 0
    assert api.get(f"{crontabs('default')}/held").status_code == 200
    added = api.patch(
        f"{crontabs('default')}/held",
        json={"metadata": {"finalizers": ["example.com/keep", "new"]}},
        headers=MERGE,
    )
    assert_status(added, 422, "Invalid")
    released = api.patch(
        f"{crontabs('default')}/held", json={"metadata": {"finalizers": None}}, headers=MERGE
    )
    assert released.status_code == 200
    assert api.get(f"{crontabs('default')}/held").status_code == 404


def test_delete_preconditions(api: httpx.Client) -> None:
    created = api.post(crontabs("default"), json=crontab("guarded")).json()
    body = {"preconditions": {"uid": "not-the-uid"}}
    status = assert_status(
        api.request("DELETE", f"{crontabs('default')}/guarded", json=body), 409, "Conflict"
    )
    assert "Precondition failed: UID in precondition: not-the-uid" in status["message"]
    body = {"preconditions": {"uid": created["metadata"]["uid"]}, "propagationPolicy": "Background"}
    assert api.request("DELETE", f"{crontabs('default')}/guarded", json=body).status_code == 200


def test_namespace_deletion_empties_then_removes_it(api: httpx.Client) -> None:
    make_namespace(api, "doomed")
    for name in ("a", "b"):
        assert api.post(crontabs("doomed"), json=crontab(name)).status_code == 201
    response = api.delete("/api/v1/namespaces/doomed")
    assert response.status_code == 200
    assert response.json()["status"]["phase"] == "Terminating"
    refused = api.post(crontabs("doomed"), json=crontab("late"))
    if refused.status_code != 404:  # the controller may already have removed the namespace
        status = assert_status(refused, 403, "Forbidden")
        assert status["message"].endswith(
            "unable to create new content in namespace doomed because it is being terminated"
        )
    deadline = time.monotonic() + 10
    while api.get("/api/v1/namespaces/doomed").status_code != 404 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert api.get("/api/v1/namespaces/doomed").status_code == 404
    assert api.get(crontabs("doomed")).json()["items"] == []


def test_secret_string_data_is_merged_into_data(api: httpx.Client) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "stringData": {"password": "hunter2"},
    }
    created = api.post("/api/v1/namespaces/default/secrets", json=secret).json()
    assert "stringData" not in created
    assert base64.b64decode(created["data"]["password"]) == b"hunter2"
    assert created["type"] == "Opaque"


def test_events_accept_kopf_timestamps_and_select_by_involved_object(api: httpx.Client) -> None:
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
    response = api.post("/api/v1/namespaces/default/events", json=event)
    assert response.status_code == 201, response.text
    selector = "involvedObject.name=x,involvedObject.namespace=default,involvedObject.kind=CronTab,involvedObject.uid=u-1"
    found = api.get("/api/v1/namespaces/default/events", params={"fieldSelector": selector}).json()[
        "items"
    ]
    assert [e["message"] for e in found] == ["hello"]
    assert (
        api.get(
            "/api/v1/namespaces/default/events", params={"fieldSelector": "involvedObject.name=y"}
        ).json()["items"]
        == []
    )
