"""Metadata causes worded as kube words them. A built-in kind of kube's own groups refuses a finalizer name without a '/' that is not a standard one
(k8s.io/kubernetes/pkg/apis/core/validation/validation.go validateKubeFinalizerName), on create and update;
a Lease, validated by apimachinery's ValidateObjectMeta alone (pkg/apis/coordination/validation), keeps it.
Owner references print in metav1.OwnerReference's Go field order (apimachinery pkg/api/validation/objectmeta.go
ValidateOwnerReferences). Through a real server process."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
ROLES = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
NEITHER = "name is neither a standard finalizer name nor is it fully qualified"


def test_a_configmap_with_an_unqualified_finalizer_is_refused(client: httpx.Client) -> None:
    body = {"metadata": {"name": "badfin", "finalizers": ["example.com/ok", "no-slash"]}}
    response = client.post(CONFIGMAPS, json=body)
    assert response.status_code == 422, response.text
    status = response.json()
    message = f'Invalid value: "no-slash": {NEITHER}'
    assert status["message"] == f'ConfigMap "badfin" is invalid: metadata.finalizers[1]: {message}'
    assert status["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": message, "field": "metadata.finalizers[1]"}
    ]
    assert client.get(f"{CONFIGMAPS}/badfin").status_code == 404


def test_standard_and_qualified_finalizers_are_kept(client: httpx.Client) -> None:
    finalizers = ["orphan", "kubernetes", "example.com/ok"]
    body = {"metadata": {"name": "goodfin", "finalizers": finalizers}}
    response = client.post(CONFIGMAPS, json=body)
    assert response.status_code == 201, response.text
    assert response.json()["metadata"]["finalizers"] == finalizers


def test_an_update_adding_one_is_refused(client: httpx.Client) -> None:
    assert client.post(CONFIGMAPS, json={"metadata": {"name": "later"}}).status_code == 201
    patch = b'{"metadata":{"finalizers":["late"]}}'
    headers = {"Content-Type": "application/merge-patch+json"}
    response = client.patch(f"{CONFIGMAPS}/later", content=patch, headers=headers)
    assert response.status_code == 422, response.text
    assert response.json()["details"]["causes"][0]["field"] == "metadata.finalizers[0]"


@pytest.mark.parametrize(
    ("path", "kind", "refused"), [(ROLES, "Role", True), (LEASES, "Lease", False)]
)
def test_which_groups_check_it(client: httpx.Client, path: str, kind: str, refused: bool) -> None:
    body: dict[str, Any] = {"metadata": {"name": "fin", "finalizers": ["no-slash"]}}
    if kind == "Role":
        body["rules"] = []
    response = client.post(path, json=body)
    assert response.status_code == (422 if refused else 201), response.text
    if refused:
        assert NEITHER in response.json()["message"]


def test_owner_references_print_in_go_field_order(client: httpx.Client) -> None:
    """Sent with their keys sorted and an unknown one; printed as kube's Go struct marshals them."""
    refs = [
        {"apiVersion": "v1", "controller": True, "kind": "ConfigMap", "name": "a", "uid": "u1"},
        {"blockOwnerDeletion": False, "controller": True, "kind": "ConfigMap", "uid": "u2", "x": 1},
    ]
    response = client.post(
        CONFIGMAPS, json={"metadata": {"name": "twoctl", "ownerReferences": refs}}
    )
    assert response.status_code == 422, response.text
    printed = (
        '[{"apiVersion":"v1","kind":"ConfigMap","name":"a","uid":"u1","controller":true},'
        '{"apiVersion":"","kind":"ConfigMap","name":"","uid":"u2","controller":true,"blockOwnerDeletion":false}]'
    )
    messages = [c["message"] for c in response.json()["details"]["causes"]]
    assert (
        f"Invalid value: {printed}: Only one reference can have Controller set to true. "
        'Found "true" in references for ConfigMap/a and ConfigMap/'
    ) in messages
