"""Request bodies, in process: JSON and YAML read as kube reads them, built-in kinds' type defaults, and the
Status a body that cannot be read gets: 415 for a media type the endpoint does not take, 400 for bytes that do
not parse or name another kind, namespace or version, 413 past the size limit (API-CONVENTIONS.md §1, §9).
Messages are kube's where the client shows them: k8s.io/apiserver pkg/endpoints/handlers (create.go,
patch.go) and negotiation/errors.go."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from tests.shipped import CONFIGMAPS, CRONTABS, assert_status, crontab

UNKNOWN_FORMAT = "the body of the request was in an unknown format - accepted media types include: "


def post(api: httpx.Client, path: str, body: bytes, content_type: str | None) -> httpx.Response:
    headers = {"content-type": content_type} if content_type is not None else {}
    return api.post(path, content=body, headers=headers)


def test_a_json_body(api: httpx.Client) -> None:
    created = post(api, CRONTABS, orjson.dumps(crontab("json-body")), "application/json")
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["image"] == "my-awesome-cron-image"


def test_a_body_without_content_type_is_json(api: httpx.Client) -> None:
    """kubectl scale --current-replicas and typed Python calls send no Content-Type (§1)."""
    created = post(api, CRONTABS, orjson.dumps(crontab("untyped-body")), None)
    assert created.status_code == 201, created.text


def test_a_yaml_body_is_read_as_kube_reads_it(api: httpx.Client) -> None:
    """Timestamps stay strings and scalar keys become strings, as sigs.k8s.io/yaml converts them."""
    body = b"""\
apiVersion: v1
kind: ConfigMap
metadata:
  name: yaml-body
data:
  day: 2024-01-01
  1: one
"""
    created = post(api, CONFIGMAPS, body, "application/yaml")
    assert created.status_code == 201, created.text
    assert created.json()["data"] == {"day": "2024-01-01", "1": "one"}


def test_a_built_in_body_may_leave_out_its_type(api: httpx.Client) -> None:
    """kube decodes built-in kinds with the endpoint's kind and version as defaults (gvkWithDefaults):
    CoreV1Api.create_namespaced_config_map sends no apiVersion or kind when the model has none."""
    created = post(api, CONFIGMAPS, b'{"metadata": {"name": "typeless"}}', "application/json")
    assert created.status_code == 201, created.text
    assert (created.json()["apiVersion"], created.json()["kind"]) == ("v1", "ConfigMap")


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/xml", "application/merge-patch+json"]
)
def test_a_custom_resource_body_in_another_format_is_415(
    api: httpx.Client, content_type: str
) -> None:
    """A custom resource is read as JSON or YAML only (kube's apiextensions serializers)."""
    response = post(api, CRONTABS, orjson.dumps(crontab("x")), content_type)
    status = assert_status(response, 415, "UnsupportedMediaType")
    assert status["message"] == UNKNOWN_FORMAT + "application/json, application/yaml"


def test_a_built_in_body_in_another_format_is_415(api: httpx.Client) -> None:
    response = post(api, CONFIGMAPS, b"name=x", "application/x-www-form-urlencoded")
    status = assert_status(response, 415, "UnsupportedMediaType")
    assert status["message"].startswith(UNKNOWN_FORMAT + "application/json, application/yaml")


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b'{"apiVersion": ', "application/json"),  # cut short
        (b"", "application/json"),  # empty
        (b"[1, 2]", "application/json"),  # not an object
        (b'"a string"', "application/json"),
        (b"kind: [", "application/yaml"),  # YAML that does not parse
        (b"- a\n- b\n", "application/yaml"),  # a YAML list
    ],
)
def test_a_body_that_is_not_an_object_is_400(
    api: httpx.Client, body: bytes, content_type: str
) -> None:
    assert_status(post(api, CRONTABS, body, content_type), 400, "BadRequest")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"kind": "Secret"}, None),
        ({"apiVersion": "stable.example.com/v1beta1"}, None),
        ({"kind": None}, None),
        (
            {"metadata": {"name": "elsewhere", "namespace": "other"}},
            "the namespace of the provided object does not match the namespace sent on the request",
        ),
    ],
)
def test_a_body_for_another_kind_version_or_namespace_is_400(
    api: httpx.Client, changes: dict[str, Any], message: str | None
) -> None:
    body = {**crontab("mismatched"), **changes}
    body = {key: value for key, value in body.items() if value is not None}
    status = assert_status(api.post(CRONTABS, json=body), 400, "BadRequest")
    if message is not None:
        assert status["message"] == message  # kube's rest.BeforeCreate
    assert api.get(f"{CRONTABS}/mismatched").status_code == 404


def test_a_body_past_the_limit_is_413(api: httpx.Client) -> None:
    """kube-apiserver refuses request bodies over 3 MiB (--max-request-bytes' JSON default)."""
    padding = "x" * (3 * 1024 * 1024)
    body = orjson.dumps(
        {**crontab("huge"), "metadata": {"name": "huge", "annotations": {"a": padding}}}
    )
    assert_status(post(api, CRONTABS, body, "application/json"), 413, "RequestEntityTooLarge")


def test_a_patch_body_must_name_a_patch_type(api: httpx.Client) -> None:
    """PATCH takes JSON patch, merge patch, strategic merge patch (compiled kinds; never custom resources)
    and apply, in kube's order; plain JSON is not a patch type (kube's patch.go)."""
    assert api.post(CRONTABS, json=crontab("patched")).status_code == 201
    response = api.patch(f"{CRONTABS}/patched", json={"spec": {"replicas": 2}})
    status = assert_status(response, 415, "UnsupportedMediaType")
    assert status["message"] == UNKNOWN_FORMAT + (
        "application/json-patch+json, application/merge-patch+json, "
        "application/strategic-merge-patch+json, application/apply-patch+yaml"
    )
    response = api.patch(
        f"{CONFIGMAPS}/typeless",
        json={"data": {"a": "b"}},
        headers={"content-type": "application/json"},
    )
    status = assert_status(response, 415, "UnsupportedMediaType")
    assert "application/strategic-merge-patch+json" in status["message"]


def test_a_yaml_patch_body_of_a_merge_patch_is_read_as_json(api: httpx.Client) -> None:
    """A merge patch is JSON: YAML under that media type is unreadable, a 400 BadRequest (kube's
    patch.go answers a patch that does not decode with 400)."""
    assert api.post(CRONTABS, json=crontab("yaml-patched")).status_code == 201
    response = api.patch(
        f"{CRONTABS}/yaml-patched",
        content=b"spec:\n  replicas: 2\n",
        headers={"content-type": "application/merge-patch+json"},
    )
    assert_status(response, 400, "BadRequest")
