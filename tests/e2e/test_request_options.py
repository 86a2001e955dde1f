"""A write's or a read's query options that kube does not accept are a 422 Invalid of the options kind, with
kube's causes (k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go ValidateCreateOptions,
ValidateUpdateOptions, ValidatePatchOptions, ValidateDeleteOptions; pkg/apis/meta/internalversion/validation
ValidateListOptions), through a real server process and the kubernetes Python client."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from kubernetes.client.rest import ApiException

from tests.pyclient import core_v1
from tests.serverproc import ServerProcess

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
MERGE = {"Content-Type": "application/merge-patch+json"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}


@pytest.fixture(scope="module")
def existing(client: httpx.Client) -> str:
    response = client.post(CONFIGMAPS, json={"metadata": {"name": "opts"}, "data": {"a": "1"}})
    assert response.status_code == 201
    return f"{CONFIGMAPS}/opts"


def assert_invalid(response: httpx.Response, kind: str, *causes: tuple[str, str, str]) -> None:
    """A 422 of ``<kind>.meta.k8s.io ""`` whose causes are (reason, field, message), in kube's order."""
    assert response.status_code == 422, response.text
    status = response.json()
    assert status["reason"] == "Invalid"
    assert status["details"] == {
        "group": "meta.k8s.io",
        "kind": kind,
        "causes": [{"reason": r, "message": m, "field": f} for r, f, m in causes],
    }
    described = [f"{f}: {m}" for _, f, m in causes]
    joined = described[0] if len(described) == 1 else "[" + ", ".join(described) + "]"
    assert status["message"] == f'{kind}.meta.k8s.io "" is invalid: {joined}'


DRY_SOME = (
    "FieldValueNotSupported",
    "dryRun",
    'Unsupported value: ["Some"]: supported values: "All"',
)
DRY_EMPTY = ("FieldValueNotSupported", "dryRun", 'Unsupported value: [""]: supported values: "All"')
LOOSE = (
    "FieldValueNotSupported",
    "fieldValidation",
    'Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"',
)


def test_create_with_a_bad_dry_run_and_field_validation(client: httpx.Client) -> None:
    body = {"metadata": {"name": "never"}}
    response = client.post(f"{CONFIGMAPS}?dryRun=Some&fieldValidation=strict", json=body)
    assert_invalid(response, "CreateOptions", DRY_SOME, LOOSE)
    assert client.get(f"{CONFIGMAPS}/never").status_code == 404


def test_an_empty_dry_run_is_refused_not_a_real_create(client: httpx.Client) -> None:
    response = client.post(f"{CONFIGMAPS}?dryRun=", json={"metadata": {"name": "empty-dry"}})
    assert_invalid(response, "CreateOptions", DRY_EMPTY)
    assert client.get(f"{CONFIGMAPS}/empty-dry").status_code == 404


def test_the_options_are_judged_before_the_body(client: httpx.Client) -> None:
    response = client.post(f"{CONFIGMAPS}?dryRun=Some", content=b"{not json")
    assert_invalid(response, "CreateOptions", DRY_SOME)


def test_update_with_a_bad_dry_run(client: httpx.Client, existing: str) -> None:
    body = client.get(existing).json()
    assert_invalid(client.put(f"{existing}?dryRun=Some", json=body), "UpdateOptions", DRY_SOME)


@pytest.mark.parametrize(
    ("query", "cause"),
    [
        (
            "force=true&fieldManager=bob",
            ("FieldValueForbidden", "force", "Forbidden: may not be specified for non-apply patch"),
        ),
        (
            "fieldManager=a%07b",
            (
                "FieldValueInvalid",
                "fieldManager",
                'Invalid value: "a\\ab": invalid character U+0007 (at position 1)',
            ),
        ),
    ],
)
def test_a_merge_patch_with_options_kube_refuses(
    client: httpx.Client, existing: str, query: str, cause: tuple[str, str, str]
) -> None:
    response = client.patch(f"{existing}?{query}", content=b'{"data":{"b":"2"}}', headers=MERGE)
    assert_invalid(response, "PatchOptions", cause)
    assert "b" not in client.get(existing).json()["data"]


def test_an_apply_without_a_manager_and_a_bad_dry_run(client: httpx.Client, existing: str) -> None:
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: opts}\n"
    response = client.patch(f"{existing}?dryRun=Some", content=body, headers=APPLY)
    required = ("FieldValueRequired", "fieldManager", "Required value: is required for apply patch")
    assert_invalid(response, "PatchOptions", required, DRY_SOME)


def test_delete_with_a_bad_dry_run_in_the_query_or_the_body(
    client: httpx.Client, existing: str
) -> None:
    assert_invalid(client.delete(f"{existing}?dryRun=Some"), "DeleteOptions", DRY_SOME)
    body: dict[str, Any] = {"dryRun": ["All", "Some"]}
    response = client.request("DELETE", existing, json=body)
    every = (
        "FieldValueNotSupported",
        "dryRun",
        'Unsupported value: ["All","Some"]: supported values: "All"',
    )
    assert_invalid(response, "DeleteOptions", every)
    assert client.get(existing).status_code == 200


def test_send_initial_events_on_a_list(client: httpx.Client) -> None:
    forbidden = (
        "FieldValueForbidden",
        "sendInitialEvents",
        "Forbidden: sendInitialEvents is forbidden for list",
    )
    response = client.get(f"{CONFIGMAPS}?sendInitialEvents=true")
    assert_invalid(response, "ListOptions", forbidden)


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        (
            "sendInitialEvents=true",
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
        (
            "resourceVersionMatch=NotOlderThan&resourceVersion=1",
            "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        ),
    ],
)
def test_watch_options_kube_refuses(client: httpx.Client, query: str, detail: str) -> None:
    response = client.get(f"{CONFIGMAPS}?watch=true&timeoutSeconds=5&{query}")
    forbidden = ("FieldValueForbidden", "resourceVersionMatch", f"Forbidden: {detail}")
    assert_invalid(response, "ListOptions", forbidden)


def test_watch_with_initial_events_and_exact(client: httpx.Client) -> None:
    query = "sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1"
    response = client.get(f"{CONFIGMAPS}?watch=true&timeoutSeconds=5&{query}")
    assert_invalid(
        response,
        "ListOptions",
        (
            "FieldValueForbidden",
            "resourceVersionMatch",
            "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
        (
            "FieldValueNotSupported",
            "resourceVersionMatch",
            'Unsupported value: "Exact": supported values: "NotOlderThan"',
        ),
    )


def test_the_python_client_reads_the_invalid_dry_run(server: ServerProcess) -> None:
    with core_v1(server.kubeconfig) as api:
        with pytest.raises(ApiException) as refused:
            api.create_namespaced_config_map(
                "default", {"metadata": {"name": "py-dry"}}, dry_run="Some"
            )
        created = api.create_namespaced_config_map(
            "default", {"metadata": {"name": "py-dry"}}, dry_run="All"
        )
    assert refused.value.status == 422
    assert "dryRun: Unsupported value" in refused.value.body
    assert created.metadata.name == "py-dry"


@pytest.mark.parametrize(
    ("limit", "error"),
    [
        ("many", "invalid syntax"),
        ("9223372036854775808", "value out of range"),
        ("1.5", "invalid syntax"),
    ],
)
def test_a_limit_that_is_not_an_int64(client: httpx.Client, limit: str, error: str) -> None:
    """Parsed with strconv.ParseInt by kube's parameter codec, whose error is the 400's message."""
    response = client.get(CONFIGMAPS, params={"limit": limit})
    assert response.status_code == 400
    assert response.json()["message"] == f'strconv.ParseInt: parsing "{limit}": {error}'


def test_a_continued_page_takes_no_resource_version(client: httpx.Client) -> None:
    """k8s.io/apiserver/pkg/storage/interfaces.go ValidateListOptions: only "" or "0" beside continue."""
    for name in ("page-a", "page-b"):
        assert client.post(CONFIGMAPS, json={"metadata": {"name": name}}).status_code == 201
    first = client.get(CONFIGMAPS, params={"limit": "1"}).json()
    token, revision = first["metadata"]["continue"], first["metadata"]["resourceVersion"]
    refused = client.get(
        CONFIGMAPS, params={"limit": "1", "continue": token, "resourceVersion": revision}
    )
    assert refused.status_code == 400
    assert (
        refused.json()["message"]
        == "specifying resource version is not allowed when using continue"
    )
    page = client.get(CONFIGMAPS, params={"limit": "1", "continue": token, "resourceVersion": "0"})
    assert page.status_code == 200
    assert page.json()["items"]


@pytest.mark.parametrize(
    ("selector", "error"),
    [
        (
            "a=" + "b" * 64,
            f'values[0][a]: Invalid value: "{"b" * 64}": must be no more than 63 characters',
        ),
        (
            "a>b",
            "values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            "a in (x,-bad)",
            'values[0][a]: Invalid value: "-bad": a valid label must be an empty string or consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
    ],
)
def test_a_label_selector_requirement_kube_refuses(
    client: httpx.Client, selector: str, error: str
) -> None:
    """kube's labels.NewRequirement validates each key and value (k8s.io/apimachinery/pkg/labels)."""
    response = client.get(CONFIGMAPS, params={"labelSelector": selector})
    assert response.status_code == 400
    assert response.json()["message"] == f"unable to parse requirement: {error}"
