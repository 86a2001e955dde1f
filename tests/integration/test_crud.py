"""CRUD, optimistic concurrency, conversion and error Statuses through a real server process over HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

CRONTABS = "/apis/stable.example.com/v1/namespaces/default/crontabs"
CRONTABS_BETA = "/apis/stable.example.com/v1beta1/namespaces/default/crontabs"


def crontab(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": {
            "cronSpec": "* * * * */5",
            "image": "my-awesome-cron-image",
            "replicas": 1,
            **spec,
        },
    }


def assert_status(response: httpx.Response, code: int, reason: str) -> dict[str, Any]:
    assert response.status_code == code, response.text
    assert response.headers["content-type"].startswith("application/json")
    status: dict[str, Any] = response.json()
    assert status["kind"] == "Status" and status["apiVersion"] == "v1"
    assert status["status"] == "Failure"
    assert status["reason"] == reason
    assert status["code"] == code
    return status


def test_create_sets_server_metadata(client: httpx.Client) -> None:
    response = client.post(CRONTABS, json=crontab("meta"))
    assert response.status_code == 201, response.text
    created = response.json()
    metadata = created["metadata"]
    assert metadata["namespace"] == "default"
    assert metadata["generation"] == 1
    assert len(metadata["uid"]) == 36
    assert metadata["resourceVersion"].isdigit()
    assert metadata["creationTimestamp"].endswith("Z")
    assert created["apiVersion"] == "stable.example.com/v1" and created["kind"] == "CronTab"
    fetched = client.get(f"{CRONTABS}/meta").json()
    assert fetched == created


def test_generate_name_gets_a_random_suffix(client: httpx.Client) -> None:
    body = crontab("")
    body["metadata"] = {"generateName": "gen-"}
    first = client.post(CRONTABS, json=body).json()["metadata"]["name"]
    second = client.post(CRONTABS, json=body).json()["metadata"]["name"]
    assert first.startswith("gen-") and len(first) == len("gen-") + 5
    assert first != second


def test_already_exists_is_409(client: httpx.Client) -> None:
    client.post(CRONTABS, json=crontab("twice"))
    status = assert_status(client.post(CRONTABS, json=crontab("twice")), 409, "AlreadyExists")
    assert status["message"] == 'crontabs.stable.example.com "twice" already exists'
    assert status["details"] == {"name": "twice", "group": "stable.example.com", "kind": "crontabs"}


def test_missing_object_is_404_with_details(client: httpx.Client) -> None:
    status = assert_status(client.get(f"{CRONTABS}/nope"), 404, "NotFound")
    assert status["message"] == 'crontabs.stable.example.com "nope" not found'


def test_stale_resource_version_on_update_is_409_conflict(client: httpx.Client) -> None:
    created = client.post(CRONTABS, json=crontab("stale")).json()
    fresh = dict(created, spec={**created["spec"], "replicas": 2})
    updated = client.put(f"{CRONTABS}/stale", json=fresh)
    assert updated.status_code == 200, updated.text
    assert int(updated.json()["metadata"]["resourceVersion"]) > int(
        created["metadata"]["resourceVersion"]
    )
    assert updated.json()["metadata"]["generation"] == 2
    stale = dict(created, spec={**created["spec"], "replicas": 3})
    status = assert_status(client.put(f"{CRONTABS}/stale", json=stale), 409, "Conflict")
    assert status["message"].startswith(
        'Operation cannot be fulfilled on crontabs.stable.example.com "stale": the object has been modified'
    )


def test_malformed_json_is_400(client: httpx.Client) -> None:
    response = client.post(
        CRONTABS, content=b'{"apiVersion": ', headers={"content-type": "application/json"}
    )
    assert_status(response, 400, "BadRequest")


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
    client: httpx.Client, method: str, path: str, body: Any, content_type: str
) -> None:
    client.post(CRONTABS, json=crontab("malformed"))
    response = client.request(method, path, json=body, headers={"content-type": content_type})
    assert_status(response, 400, "BadRequest")


def test_body_without_content_type_is_json(client: httpx.Client) -> None:
    import orjson

    response = client.post(CRONTABS, content=orjson.dumps(crontab("no-content-type")))
    assert response.status_code == 201, response.text


def test_yaml_body_reads_as_kube_reads_it(client: httpx.Client) -> None:
    body = b"""\
apiVersion: v1
kind: ConfigMap
metadata:
  name: yaml-body
data:
  day: 2024-01-01
  1: one
"""
    response = client.post(
        "/api/v1/namespaces/default/configmaps",
        content=body,
        headers={"content-type": "application/yaml"},
    )
    assert response.status_code == 201, response.text
    assert response.json()["data"] == {"day": "2024-01-01", "1": "one"}


def test_unknown_kind_is_404(client: httpx.Client) -> None:
    status = assert_status(
        client.get("/apis/stable.example.com/v1/namespaces/default/widgets"), 404, "NotFound"
    )
    assert status["message"] == "the server could not find the requested resource"
    assert_status(client.get("/apis/nosuch.example.com/v1/widgets"), 404, "NotFound")


def test_unknown_non_api_path_is_plain_404(client: httpx.Client) -> None:
    response = client.get("/no/such/path")
    assert response.status_code == 404
    assert response.text == "404 page not found\n"


def test_schema_violation_is_422_with_causes(client: httpx.Client) -> None:
    response = client.post(CRONTABS, json=crontab("invalid", replicas="many"))
    status = assert_status(response, 422, "Invalid")
    causes = status["details"]["causes"]
    assert any(cause["field"] == "spec.replicas" for cause in causes), causes
    assert status["message"].startswith('CronTab.stable.example.com "invalid" is invalid: ')


def test_strict_field_validation_rejects_unknown_fields(client: httpx.Client) -> None:
    response = client.post(f"{CRONTABS}?fieldValidation=Strict", json=crontab("strict", bogus=1))
    status = assert_status(response, 400, "BadRequest")
    assert status["message"] == (
        'CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.bogus"'
    )


def test_warn_field_validation_prunes_and_warns(client: httpx.Client) -> None:
    response = client.post(CRONTABS, json=crontab("warned", bogus=1))
    assert response.status_code == 201
    assert response.headers["warning"] == '299 - "unknown field \\"spec.bogus\\""'
    assert "bogus" not in response.json()["spec"]


def test_v1beta1_round_trip_through_v1(client: httpx.Client) -> None:
    beta = {
        "apiVersion": "stable.example.com/v1beta1",
        "kind": "CronTab",
        "metadata": {"name": "converted"},
        "spec": {"schedule": "*/5 * * * *", "image": "img"},
    }
    created = client.post(CRONTABS_BETA, json=beta)
    assert created.status_code == 201, created.text
    assert created.json()["spec"] == {"schedule": "*/5 * * * *", "image": "img", "replicas": 1}
    assert "deprecated" in created.headers["warning"]
    as_v1 = client.get(f"{CRONTABS}/converted").json()
    assert as_v1["apiVersion"] == "stable.example.com/v1"
    assert as_v1["spec"] == {"cronSpec": "*/5 * * * *", "image": "img", "replicas": 1}
    back = client.get(f"{CRONTABS_BETA}/converted").json()
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
def test_patch(client: httpx.Client, content_type: str, patch: Any, replicas: int) -> None:
    client.post(CRONTABS, json=crontab(f"patched-{replicas}"))
    response = client.patch(
        f"{CRONTABS}/patched-{replicas}", json=patch, headers={"content-type": content_type}
    )
    assert response.status_code == 200, response.text
    assert response.json()["spec"]["replicas"] == replicas


def test_strategic_merge_patch_on_custom_kind_is_415(client: httpx.Client) -> None:
    client.post(CRONTABS, json=crontab("smp"))
    response = client.patch(
        f"{CRONTABS}/smp",
        json={"spec": {"replicas": 2}},
        headers={"content-type": "application/strategic-merge-patch+json"},
    )
    status = assert_status(response, 415, "UnsupportedMediaType")
    assert status["message"].startswith("the body of the request was in an unknown format")


def test_no_op_patch_keeps_resource_version(client: httpx.Client) -> None:
    created = client.post(CRONTABS, json=crontab("noop")).json()
    response = client.patch(
        f"{CRONTABS}/noop",
        json={"spec": {"replicas": 1}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert response.json()["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_delete_returns_the_object_and_removes_it(client: httpx.Client) -> None:
    client.post(CRONTABS, json=crontab("doomed"))
    response = client.delete(f"{CRONTABS}/doomed")
    assert response.status_code == 200
    assert response.json()["metadata"]["name"] == "doomed"
    assert client.get(f"{CRONTABS}/doomed").status_code == 404


def test_create_in_missing_namespace_is_404(client: httpx.Client) -> None:
    response = client.post(
        "/apis/stable.example.com/v1/namespaces/absent/crontabs", json=crontab("lost")
    )
    status = assert_status(response, 404, "NotFound")
    assert status["message"] == 'namespaces "absent" not found'


def test_status_subresource_splits_spec_and_status(client: httpx.Client) -> None:
    client.post(CRONTABS, json=crontab("split"))
    patch = {"status": {"replicas": 4, "labelSelector": "app=split"}, "spec": {"replicas": 5}}
    response = client.patch(
        f"{CRONTABS}/split/status",
        json=patch,
        headers={"content-type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"]["replicas"] == 4
    assert body["spec"]["replicas"] == 1  # the status endpoint ignores spec
    assert body["metadata"]["generation"] == 1  # and status writes do not move generation
    main = client.patch(
        f"{CRONTABS}/split",
        json={"status": {"replicas": 0}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert main.json()["status"]["replicas"] == 4  # the main resource ignores status


def test_scale_subresource(client: httpx.Client) -> None:
    client.post(CRONTABS, json=crontab("scaled", replicas=2))
    scale = client.get(f"{CRONTABS}/scaled/scale").json()
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 2}
    response = client.patch(
        f"{CRONTABS}/scaled/scale",
        json={"spec": {"replicas": 6}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text
    assert client.get(f"{CRONTABS}/scaled").json()["spec"]["replicas"] == 6


def test_list_pagination_is_consistent(client: httpx.Client) -> None:
    for index in range(5):
        client.post(
            "/apis/stable.example.com/v1/namespaces/default/crontabs",
            json=crontab(f"page-{index}", image="paged"),
        )
    names: list[str] = []
    url = f"{CRONTABS}?limit=2"
    while True:
        page = client.get(url).json()
        assert page["kind"] == "CronTabList"
        names.extend(item["metadata"]["name"] for item in page["items"])
        token = page["metadata"].get("continue")
        if not token:
            break
        client.post(
            CRONTABS, json=crontab(f"late-{len(names)}")
        )  # writes between pages are not seen
        url = f"{CRONTABS}?limit=2&continue={token}"
    assert len(names) == len(set(names))
    assert not any(name.startswith("late-") for name in names)


def test_label_selector(client: httpx.Client) -> None:
    labelled = crontab("labelled")
    labelled["metadata"]["labels"] = {"tier": "gold"}
    client.post(CRONTABS, json=labelled)
    found = client.get(f"{CRONTABS}?labelSelector=tier%3Dgold").json()["items"]
    assert [item["metadata"]["name"] for item in found] == ["labelled"]
    assert client.get(f"{CRONTABS}?labelSelector=tier+notin+(gold)").json()["items"]
