"""A built-in kind's managed fields as kube's field manager records them through the kind's Go struct
(apiserver.fieldmanager.gotyped): a create compares with the Go zero value, in which every non-pointer
struct is already there (k8s.io/apiserver/pkg/endpoints/handlers/create.go ``scope.Creater.New``), and an
omitempty field sent at its zero value is dropped by the decoding (k8s.io/apimachinery/pkg/runtime/
converter.go ``isZero``)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from fm_support import T0, T1

from apiserver.fieldmanager import update_managed_fields
from apiserver.fieldmanager.gotyped import go_view, zero_object
from generated.authorization_k8s_io.v1.protobuf import SUBJECT_ACCESS_REVIEW
from generated.coordination_k8s_io.v1.protobuf import LEASE


def _schema(package: str, kind: str) -> dict[str, Any]:
    text = (resources.files(package) / "schemas.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)[kind]
    return schema


LEASE_SCHEMA = _schema("generated.coordination_k8s_io.v1", "Lease")
SAR_SCHEMA = _schema("generated.authorization_k8s_io.v1", "SubjectAccessReview")


def _fields(entries: list[dict[str, Any]]) -> dict[str, Any]:
    assert len(entries) == 1, entries
    fields: dict[str, Any] = entries[0]["fieldsV1"]
    return fields


def test_the_zero_object_holds_the_non_pointer_structs() -> None:
    # SubjectAccessReview's spec and status are structs; status.allowed is a bool without omitempty.
    assert zero_object(SUBJECT_ACCESS_REVIEW.message) == {
        "metadata": {"creationTimestamp": None},
        "spec": {},
        "status": {"allowed": False},
    }


def test_go_view_drops_omitempty_zeros_only() -> None:
    review = {"spec": {"resourceAttributes": {"group": "", "verb": "get"}, "user": "alice"}}
    viewed = go_view(review, SUBJECT_ACCESS_REVIEW.message)
    assert viewed == {"spec": {"resourceAttributes": {"verb": "get"}, "user": "alice"}}
    assert review["spec"]["resourceAttributes"] == {"group": "", "verb": "get"}  # not mutated
    # A pointer keeps its zero value: Lease's holderIdentity is a *string.
    lease = {"spec": {"holderIdentity": ""}}
    assert go_view(lease, LEASE.message) is lease


def test_create_of_a_lease_owns_its_spec_fields_but_not_the_spec() -> None:
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "held"},
        "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15},
    }
    typed = update_managed_fields(
        None, lease, LEASE_SCHEMA, "tool", api_version="coordination.k8s.io/v1", now=T0,
        go_type=LEASE.message,
    )  # fmt: skip
    assert _fields(typed) == {"f:spec": {"f:holderIdentity": {}, "f:leaseDurationSeconds": {}}}
    # Without the Go type the create starts from nothing, as a custom resource's does.
    untyped = update_managed_fields(
        None, lease, LEASE_SCHEMA, "tool", api_version="coordination.k8s.io/v1", now=T0
    )
    assert _fields(untyped)["f:spec"]["."] == {}


def test_an_omitempty_field_sent_empty_is_nobodys() -> None:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "metadata": {},
        "spec": {"resourceAttributes": {"group": "", "verb": "get"}, "user": "alice"},
    }
    entries = update_managed_fields(
        None, review, SAR_SCHEMA, "tool", api_version="authorization.k8s.io/v1", now=T0,
        go_type=SUBJECT_ACCESS_REVIEW.message,
    )  # fmt: skip
    assert _fields(entries) == {
        "f:spec": {"f:resourceAttributes": {".": {}, "f:verb": {}}, "f:user": {}}
    }


def test_an_update_that_sets_a_pointer_to_its_zero_value_owns_it() -> None:
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "held"},
        "spec": {"holderIdentity": "me", "strategy": "OldestEmulationVersion"},
    }
    created = update_managed_fields(
        None, lease, LEASE_SCHEMA, "a", api_version="coordination.k8s.io/v1", now=T0,
        go_type=LEASE.message,
    )  # fmt: skip
    stored = {**lease, "metadata": {"name": "held", "managedFields": created}}
    # Lease's strategy is a pointer: sending it "" is a change, owned by the sender.
    updated = {**stored, "spec": {"holderIdentity": "me", "strategy": ""}}
    entries = update_managed_fields(
        stored, updated, LEASE_SCHEMA, "b", api_version="coordination.k8s.io/v1", now=T1,
        go_type=LEASE.message,
    )  # fmt: skip
    assert [entry["manager"] for entry in entries] == ["a", "b"]
    assert entries[1]["fieldsV1"] == {"f:spec": {"f:strategy": {}}}
