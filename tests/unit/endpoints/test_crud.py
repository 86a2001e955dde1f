"""CRUD, optimistic concurrency, conversion and error Statuses through the server over HTTP (in process)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.shipped import CRONTABS, CRONTABS_BETA, assert_status, crontab


def test_create_sets_server_metadata(api: httpx.Client) -> None:
    response = api.post(CRONTABS, json=crontab("meta"))
    assert response.status_code == 201, response.text
    created = response.json()
    metadata = created["metadata"]
    assert metadata["namespace"] == "default"
    assert metadata["generation"] == 1
    assert len(metadata["uid"]) == 36
    assert metadata["resourceVersion"].isdigit()
    assert metadata["creationTimestamp"].endswith("Z")
    assert created["apiVersion"] == "stable.example.com/v1" and created["kind"] == "CronTab"
    fetched = api.get(f"{CRONTABS}/meta").json()
    assert fetched == created


def test_generate_name_gets_a_random_suffix(api: httpx.Client) -> None:
    body = crontab("")
    body["metadata"] = {"generateName": "gen-"}
    first = api.post(CRONTABS, json=body).json()["metadata"]["name"]
    second = api.post(CRONTABS, json=body).json()["metadata"]["name"]
    assert first.startswith("gen-") and len(first) == len("gen-") + 5
    assert first != second


def test_a_long_generate_name_is_cut_to_58_characters(api: httpx.Client) -> None:
    """kube's SimpleNameGenerator (k8s.io/apiserver/pkg/storage/names/generate.go): 58 + 5 random."""
    body = crontab("")
    body["metadata"] = {"generateName": "g" * 250}
    created = api.post(CRONTABS, json=body)
    assert created.status_code == 201, created.text
    name = created.json()["metadata"]["name"]
    assert name.startswith("g" * 58) and len(name) == 63


def test_already_exists_is_409(api: httpx.Client) -> None:
    api.post(CRONTABS, json=crontab("twice"))
    status = assert_status(api.post(CRONTABS, json=crontab("twice")), 409, "AlreadyExists")
    assert status["message"] == 'crontabs.stable.example.com "twice" already exists'
    assert status["details"] == {"name": "twice", "group": "stable.example.com", "kind": "crontabs"}


def test_missing_object_is_404_with_details(api: httpx.Client) -> None:
    status = assert_status(api.get(f"{CRONTABS}/nope"), 404, "NotFound")
    assert status["message"] == 'crontabs.stable.example.com "nope" not found'


def test_stale_resource_version_on_update_is_409_conflict(api: httpx.Client) -> None:
    created = api.post(CRONTABS, json=crontab("stale")).json()
    fresh = dict(created, spec={**created["spec"], "replicas": 2})
    updated = api.put(f"{CRONTABS}/stale", json=fresh)
    assert updated.status_code == 200, updated.text
    assert int(updated.json()["metadata"]["resourceVersion"]) > int(
        created["metadata"]["resourceVersion"]
    )
    assert updated.json()["metadata"]["generation"] == 2
    stale = dict(created, spec={**created["spec"], "replicas": 3})
    status = assert_status(api.put(f"{CRONTABS}/stale", json=stale), 409, "Conflict")
    assert status["message"].startswith(
        'Operation cannot be fulfilled on crontabs.stable.example.com "stale": the object has been modified'
    )


@pytest.mark.parametrize(
    ("method", "path", "body", "content_type"),
    [
        ("POST", CRONTABS, {**crontab("x"), "metadata": 5}, "application/json"),
        ("PUT", f"{CRONTABS}/x", {**crontab("x"), "metadata": ["x"]}, "application/json"),
        ("PATCH", f"{CRONTABS}/malformed", {"metadata": 5}, "application/merge-patch+json"),
        ("PUT", f"{CRONTABS}/malformed/scale", {"spec": 5}, "application/json"),
        ("PATCH", f"{CRONTABS}/malformed/scale", {"metadata": 5}, "application/merge-patch+json"),
        ("DELETE", f"{CRONTABS}/malformed", {"preconditions": 5}, "application/json"),
        ("DELETE", f"{CRONTABS}/malformed", {"dryRun": 5}, "application/json"),
    ],
)
def test_wrongly_typed_body_is_400(
    api: httpx.Client, method: str, path: str, body: Any, content_type: str
) -> None:
    api.post(CRONTABS, json=crontab("malformed"))
    response = api.request(method, path, json=body, headers={"content-type": content_type})
    assert_status(response, 400, "BadRequest")


def test_schema_violation_is_422_with_causes(api: httpx.Client) -> None:
    response = api.post(CRONTABS, json=crontab("invalid", replicas="many"))
    status = assert_status(response, 422, "Invalid")
    causes = status["details"]["causes"]
    assert any(cause["field"] == "spec.replicas" for cause in causes), causes
    assert status["message"].startswith('CronTab.stable.example.com "invalid" is invalid: ')


def test_strict_field_validation_rejects_unknown_fields(api: httpx.Client) -> None:
    response = api.post(f"{CRONTABS}?fieldValidation=Strict", json=crontab("strict", bogus=1))
    status = assert_status(response, 400, "BadRequest")
    assert status["message"] == (
        'CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.bogus"'
    )


def test_warn_field_validation_prunes_and_warns(api: httpx.Client) -> None:
    response = api.post(CRONTABS, json=crontab("warned", bogus=1))
    assert response.status_code == 201
    assert response.headers["warning"] == '299 - "unknown field \\"spec.bogus\\""'
    assert "bogus" not in response.json()["spec"]


def test_v1beta1_round_trip_through_v1(api: httpx.Client) -> None:
    beta = {
        "apiVersion": "stable.example.com/v1beta1",
        "kind": "CronTab",
        "metadata": {"name": "converted"},
        "spec": {"schedule": "*/5 * * * *", "image": "img"},
    }
    created = api.post(CRONTABS_BETA, json=beta)
    assert created.status_code == 201, created.text
    assert created.json()["spec"] == {"schedule": "*/5 * * * *", "image": "img", "replicas": 1}
    assert "deprecated" in created.headers["warning"]
    as_v1 = api.get(f"{CRONTABS}/converted").json()
    assert as_v1["apiVersion"] == "stable.example.com/v1"
    assert as_v1["spec"] == {"cronSpec": "*/5 * * * *", "image": "img", "replicas": 1}
    back = api.get(f"{CRONTABS_BETA}/converted").json()
    assert back["spec"] == created.json()["spec"]
    assert back["metadata"] == created.json()["metadata"]


@pytest.mark.parametrize(
    ("content_type", "patch", "replicas"),
    [
        ("application/merge-patch+json", {"spec": {"replicas": 7}}, 7),
        (
            "application/json-patch+json",
            [{"op": "replace", "path": "/spec/replicas", "value": 9}],
            9,
        ),
    ],
)
def test_patch(api: httpx.Client, content_type: str, patch: Any, replicas: int) -> None:
    api.post(CRONTABS, json=crontab(f"patched-{replicas}"))
    response = api.patch(
        f"{CRONTABS}/patched-{replicas}", json=patch, headers={"content-type": content_type}
    )
    assert response.status_code == 200, response.text
    assert response.json()["spec"]["replicas"] == replicas


def test_strategic_merge_patch_on_a_compact_format_kind_is_served(api: httpx.Client) -> None:
    """A compact-format kind is compiled like kube's built-in types, which take strategic merge patch (only
    custom resources refuse it: tests/e2e/test_kubectl_apply_kinds.py)."""
    api.post(CRONTABS, json=crontab("smp"))
    response = api.patch(
        f"{CRONTABS}/smp",
        json={"spec": {"replicas": 2}},
        headers={"content-type": "application/strategic-merge-patch+json"},
    )
    assert response.status_code == 200, response.text
    assert response.json()["spec"]["replicas"] == 2


def test_no_op_patch_keeps_resource_version(api: httpx.Client) -> None:
    created = api.post(CRONTABS, json=crontab("noop")).json()
    response = api.patch(
        f"{CRONTABS}/noop",
        json={"spec": {"replicas": 1}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert response.json()["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_delete_returns_the_object_and_removes_it(api: httpx.Client) -> None:
    api.post(CRONTABS, json=crontab("doomed"))
    response = api.delete(f"{CRONTABS}/doomed")
    assert response.status_code == 200
    assert response.json()["metadata"]["name"] == "doomed"
    assert api.get(f"{CRONTABS}/doomed").status_code == 404


def test_create_in_missing_namespace_is_404(api: httpx.Client) -> None:
    response = api.post(
        "/apis/stable.example.com/v1/namespaces/absent/crontabs", json=crontab("lost")
    )
    status = assert_status(response, 404, "NotFound")
    assert status["message"] == 'namespaces "absent" not found'


def test_status_subresource_splits_spec_and_status(api: httpx.Client) -> None:
    api.post(CRONTABS, json=crontab("split"))
    patch = {"status": {"replicas": 4, "labelSelector": "app=split"}, "spec": {"replicas": 5}}
    response = api.patch(
        f"{CRONTABS}/split/status",
        json=patch,
        headers={"content-type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"]["replicas"] == 4
    assert body["spec"]["replicas"] == 1  # the status endpoint ignores spec
    assert body["metadata"]["generation"] == 1  # and status writes do not move generation
    main = api.patch(
        f"{CRONTABS}/split",
        json={"status": {"replicas": 0}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert main.json()["status"]["replicas"] == 4  # the main resource ignores status


def test_scale_subresource(api: httpx.Client) -> None:
    api.post(CRONTABS, json=crontab("scaled", replicas=2))
    scale = api.get(f"{CRONTABS}/scaled/scale").json()
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 2}
    response = api.patch(
        f"{CRONTABS}/scaled/scale",
        json={"spec": {"replicas": 6}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text
    assert api.get(f"{CRONTABS}/scaled").json()["spec"]["replicas"] == 6


def test_list_pagination_is_consistent(api: httpx.Client) -> None:
    for index in range(5):
        api.post(
            "/apis/stable.example.com/v1/namespaces/default/crontabs",
            json=crontab(f"page-{index}", image="paged"),
        )
    names: list[str] = []
    url = f"{CRONTABS}?limit=2"
    while True:
        page = api.get(url).json()
        assert page["kind"] == "CronTabList"
        names.extend(item["metadata"]["name"] for item in page["items"])
        token = page["metadata"].get("continue")
        if not token:
            break
        api.post(CRONTABS, json=crontab(f"late-{len(names)}"))  # writes between pages are not seen
        url = f"{CRONTABS}?limit=2&continue={token}"
    assert len(names) == len(set(names))
    assert not any(name.startswith("late-") for name in names)


def test_label_selector(api: httpx.Client) -> None:
    labelled = crontab("labelled")
    labelled["metadata"]["labels"] = {"tier": "gold"}
    api.post(CRONTABS, json=labelled)
    found = api.get(f"{CRONTABS}?labelSelector=tier%3Dgold").json()["items"]
    assert [item["metadata"]["name"] for item in found] == ["labelled"]
    assert api.get(f"{CRONTABS}?labelSelector=tier+notin+(gold)").json()["items"]
