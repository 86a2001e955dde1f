"""Server-side apply and managedFields through the server, in process (API-CONVENTIONS.md §5.3, §5.6, §9)."""

from __future__ import annotations

from typing import Any

import httpx

from tests.shipped import CRONTABS, assert_status, crontab

APPLY = {"content-type": "application/apply-patch+yaml"}


def apply(
    api: httpx.Client, name: str, manager: str, spec: dict[str, Any], force: bool = False
) -> httpx.Response:
    body = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": spec,
    }
    params = {"fieldManager": manager, **({"force": "true"} if force else {})}
    return api.patch(f"{CRONTABS}/{name}", json=body, params=params, headers=APPLY)


def managers(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["manager"]: entry for entry in obj["metadata"]["managedFields"]}


def test_create_records_the_user_agent_as_manager(api: httpx.Client) -> None:
    created = api.post(
        CRONTABS, json=crontab("owned"), headers={"user-agent": "my-tool/1.2 (linux)"}
    ).json()
    entry = managers(created)["my-tool"]
    assert entry["operation"] == "Update" and entry["apiVersion"] == "stable.example.com/v1"
    assert entry["fieldsType"] == "FieldsV1"
    assert entry["fieldsV1"]["f:spec"] == {
        ".": {},
        "f:cronSpec": {},
        "f:image": {},
        "f:replicas": {},
    }


def test_apply_creates_then_conflicts_then_forces(api: httpx.Client) -> None:
    created = apply(
        api, "applied", "alice", {"cronSpec": "* * * * */5", "image": "a", "replicas": 1}
    )
    assert created.status_code == 201, created.text
    assert managers(created.json())["alice"]["operation"] == "Apply"
    again = apply(api, "applied", "alice", {"cronSpec": "* * * * */5", "image": "a", "replicas": 1})
    assert again.status_code == 200
    assert (
        again.json()["metadata"]["resourceVersion"] == created.json()["metadata"]["resourceVersion"]
    )  # no-op
    conflict = apply(api, "applied", "bob", {"image": "b"})
    status = assert_status(conflict, 409, "Conflict")
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "alice": .spec.image'
    assert status["details"]["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "alice"',
            "field": ".spec.image",
        }
    ]
    forced = apply(api, "applied", "bob", {"image": "b"}, force=True)
    assert forced.status_code == 200 and forced.json()["spec"]["image"] == "b"
    owners = managers(forced.json())
    assert "f:image" in owners["bob"]["fieldsV1"]["f:spec"]
    assert "f:image" not in owners["alice"]["fieldsV1"]["f:spec"]


def test_fields_a_manager_stops_applying_are_removed(api: httpx.Client) -> None:
    apply(api, "pruned", "carol", {"cronSpec": "* * * * */5", "image": "a", "replicas": 3})
    response = apply(api, "pruned", "carol", {"cronSpec": "* * * * */5", "image": "a"})
    assert response.status_code == 200
    assert "replicas" not in response.json()["spec"]


def test_apply_requires_a_field_manager(api: httpx.Client) -> None:
    body = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "nameless"},
    }
    response = api.patch(f"{CRONTABS}/nameless", json=body, headers=APPLY)
    status = assert_status(response, 422, "Invalid")
    assert status["details"]["causes"][0]["field"] == "fieldManager"


def test_a_client_may_replace_managed_fields(api: httpx.Client) -> None:
    """kubectl's client-side to server-side migration writes managedFields with a JSON patch."""
    created = api.post(
        CRONTABS, json=crontab("migrated"), params={"fieldManager": "kubectl-client-side-apply"}
    ).json()
    entry = managers(created)["kubectl-client-side-apply"]
    renamed = dict(entry, manager="kubectl", operation="Apply")
    patch = [
        {"op": "replace", "path": "/metadata/managedFields", "value": [renamed]},
        {
            "op": "replace",
            "path": "/metadata/resourceVersion",
            "value": created["metadata"]["resourceVersion"],
        },
    ]
    response = api.patch(f"{CRONTABS}/migrated", json=patch, params={"fieldManager": "kubectl"},
                            headers={"content-type": "application/json-patch+json"})  # fmt: skip
    assert response.status_code == 200, response.text
    assert set(managers(response.json())) == {"kubectl"}


def test_apply_whose_name_is_not_the_urls_is_refused(api: httpx.Client) -> None:
    """kube's applyPatch ends in checkName: 400, and nothing is created under either name."""
    body = {"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "other"}}
    params = {"fieldManager": "alice"}
    for _ in range(2):  # the second time too (a retry loop must not turn it into AlreadyExists)
        answer = api.patch(f"{CRONTABS}/named", json=body, params=params, headers=APPLY)
        status = assert_status(answer, 400, "BadRequest")
        assert status["message"] == (
            "the name of the object (other) does not match the name on the URL (named)"
        )
    assert api.get(f"{CRONTABS}/other").status_code == 404
    assert api.get(f"{CRONTABS}/named").status_code == 404
    generated = {**body, "metadata": {"generateName": "g-"}}
    answer = api.patch(f"{CRONTABS}/named", json=generated, params=params, headers=APPLY)
    assert_status(answer, 400, "BadRequest")


def test_apply_with_a_uid_to_a_missing_object_is_a_conflict(api: httpx.Client) -> None:
    """The configuration names an object that no longer exists: kube answers 409 (applyPatch's uid
    check) rather than creating a new object under another uid."""
    body = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "gone", "uid": "11111111-2222-3333-4444-555555555555"},
    }
    answer = api.patch(
        f"{CRONTABS}/gone", json=body, params={"fieldManager": "alice"}, headers=APPLY
    )
    status = assert_status(answer, 409, "Conflict")
    assert status["message"].endswith(
        "uid mismatch: the provided object specified uid 11111111-2222-3333-4444-555555555555,"
        " and no existing object was found"
    ), status["message"]
    assert api.get(f"{CRONTABS}/gone").status_code == 404
