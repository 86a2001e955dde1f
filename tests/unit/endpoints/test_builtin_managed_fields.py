"""managedFields of built-in kinds through the server, as kube-apiserver 1.34 records them: a create starts
from the kind's Go zero value, so a non-pointer struct (a Lease's spec) is no one's own field, an omitempty
field sent empty (an access review's group "") is no one's, and an atomic map or struct (a Service's
selector, +mapType=atomic in k8s.io/api core/v1 types.go; an Event's involvedObject, an ObjectReference,
+structType=atomic) is owned whole."""

from __future__ import annotations

from typing import Any

import httpx


def _fields(obj: dict[str, Any]) -> dict[str, Any]:
    (entry,) = obj["metadata"]["managedFields"]
    fields: dict[str, Any] = entry["fieldsV1"]
    return fields


def test_a_lease_create_owns_its_spec_fields_not_the_spec(api: httpx.Client) -> None:
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "held"},
        "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15},
    }
    answer = api.post("/apis/coordination.k8s.io/v1/namespaces/default/leases", json=lease)
    assert answer.status_code == 201, answer.text
    assert _fields(answer.json())["f:spec"] == {
        "f:holderIdentity": {},
        "f:leaseDurationSeconds": {},
    }


def test_an_access_review_does_not_own_an_empty_group(api: httpx.Client) -> None:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "resourceAttributes": {"verb": "get", "group": "", "resource": "pods"},
            "user": "alice",
        },
    }
    answer = api.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", json=review)
    assert answer.status_code == 201, answer.text
    assert _fields(answer.json())["f:spec"] == {
        "f:resourceAttributes": {".": {}, "f:resource": {}, "f:verb": {}},
        "f:user": {},
    }


def test_a_service_selector_is_owned_whole(api: httpx.Client) -> None:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    }
    answer = api.post("/api/v1/namespaces/default/services", json=service)
    assert answer.status_code == 201, answer.text
    spec = _fields(answer.json())["f:spec"]
    assert "." not in spec
    assert spec["f:selector"] == {}


def test_an_events_involved_object_is_owned_whole(api: httpx.Client) -> None:
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "seen"},
        "involvedObject": {"kind": "Pod", "name": "web-0", "namespace": "default"},
        "reason": "Seen",
        "message": "seen",
    }
    answer = api.post("/api/v1/namespaces/default/events", json=event)
    assert answer.status_code == 201, answer.text
    fields = _fields(answer.json())
    assert fields["f:involvedObject"] == {}
    assert "f:source" not in fields


def test_a_policy_binding_create_owns_its_spec_fields_not_the_spec(api: httpx.Client) -> None:
    # Served without protobuf: its top-level struct comes from the definition's openapiTypes.
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "names"},
        "spec": {"policyName": "names", "validationActions": ["Deny"]},
    }
    answer = api.post(
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", json=binding
    )
    assert answer.status_code == 201, answer.text
    assert _fields(answer.json())["f:spec"] == {
        "f:policyName": {},
        "f:validationActions": {".": {}, 'v:"Deny"': {}},
    }
