"""A create's audit objectRef names the object from its body (the URL names none), as kube's
audit.LogRequestObject completes it at every level from Metadata (k8s.io/apiserver pkg/audit/request.go):
the event of a create refused later (an RBAC escalation, a conflict) still says what was to be created."""

from __future__ import annotations

from apiserver.endpoints.http import SCOPE_AUDIT_OBJECT_REF, Message, Request


async def _receive() -> Message:
    return {"type": "http.request", "body": b""}


def request(object_ref: dict[str, str] | None) -> Request:
    scope = {"method": "POST", "path": "/x", "headers": [], SCOPE_AUDIT_OBJECT_REF: object_ref}
    return Request.from_scope(scope, _receive)


def test_a_create_names_its_object_in_kubes_field_order() -> None:
    ref = {"resource": "roles", "namespace": "default", "apiGroup": "rbac.authorization.k8s.io"}
    request(ref).audit_request_object({"name": "all-secrets", "namespace": "default"})
    assert list(ref.items()) == [
        ("resource", "roles"),
        ("namespace", "default"),
        ("name", "all-secrets"),
        ("apiGroup", "rbac.authorization.k8s.io"),
    ]


def test_what_the_url_named_is_kept_and_a_generated_name_is_absent() -> None:
    named = {"resource": "configmaps", "namespace": "default", "name": "a"}
    request(named).audit_request_object({"name": "b", "namespace": "other"})
    assert named == {"resource": "configmaps", "namespace": "default", "name": "a"}
    cluster = {"resource": "namespaces"}
    request(cluster).audit_request_object({"generateName": "ns-"})
    assert cluster == {"resource": "namespaces"}


def test_an_unaudited_request_has_nothing_to_complete() -> None:
    unaudited = request(None)
    unaudited.audit_request_object({"name": "x"})
    assert unaudited.audit_object_ref is None
