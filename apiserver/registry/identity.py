"""An object's identity (namespace, name, uid) cannot change once the request names it: what a client's body,
patch or apply configuration and every mutating admission plugin (webhooks, policies, in-process hooks) may
not do, with kube's answer for each.

kube checks at three points, and so does the registry:
- the handlers, on what the client sent (a POST or PUT body, a patched object, an applied configuration):
  a namespace other than the request's, then a name other than the URL's (``checkName``), is a 400
  (k8s.io/apiserver/pkg/endpoints/handlers/create.go, update.go, patch.go applyPatch, rest.go);
- ``rest.EnsureObjectNamespaceMatchesRequestNamespace`` after mutating admission, in BeforeCreate and
  BeforeUpdate: another namespace is a 400, none is the request's (k8s.io/apiserver/pkg/registry/rest/meta.go);
- ValidateObjectMetaUpdate in BeforeUpdate: a changed name or uid is a 422 ``field is immutable``
  (k8s.io/apimachinery/pkg/api/validation/objectmeta.go), and a PUT body's uid is a storage precondition
  (rest.defaultUpdatedObjectInfo.Preconditions): another object's uid is a 409.
"""

from __future__ import annotations

from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.schema import Cause
from apiserver.schema.causes import invalid

NAMESPACE_MISMATCH = (
    "the namespace of the provided object does not match the namespace sent on the request"
)
IMMUTABLE = "field is immutable"


def check_namespace(metadata: Object, namespace: str | None) -> None:
    """EnsureObjectNamespaceMatchesRequestNamespace on what the client sent, as kube's create, update and
    patch handlers run it first: a namespace other than the request's is a 400 (none is the request's)."""
    body_namespace = metadata.get("namespace") or ""
    if namespace and body_namespace and body_namespace != namespace:
        raise errors.bad_request(NAMESPACE_MISMATCH)


def check_name(metadata: Object, name: str, namespace: str | None) -> None:
    """What kube's update and patch handlers check of what the client sent (a PUT body, a patched object,
    an applied configuration): its namespace (check_namespace), then its name, which must be the URL's
    (checkName; an empty one is not)."""
    check_namespace(metadata, namespace)
    body_name = metadata.get("name") or ""
    if body_name != name:
        raise errors.bad_request(
            f"the name of the object ({body_name}) does not match the name on the URL ({name})"
        )


def ensure_namespace(metadata: Object, namespace: str, namespaced: bool) -> None:
    """kube's EnsureObjectNamespaceMatchesRequestNamespace: a namespaced object without a namespace takes
    the request's, one with another is refused; a cluster-scoped object has none."""
    expected = namespace if namespaced else ""
    actual = metadata.get("namespace") or ""
    if actual == expected:
        return
    if not actual:
        metadata["namespace"] = expected
    elif not expected:
        metadata.pop("namespace", None)
    else:
        raise errors.bad_request(NAMESPACE_MISMATCH)


def identity_changes(metadata: Object, old_metadata: Object) -> list[Cause]:
    """ValidateObjectMetaUpdate's causes for a name or uid other than the stored object's (an update
    without a uid keeps the stored one: BeforeUpdate fills it in first)."""
    causes = []
    for field in ("name", "uid"):
        value = metadata.get(field) or ""
        if field == "uid" and not value:
            continue
        if value != (old_metadata.get(field) or ""):
            causes.append(invalid(f"metadata.{field}", value, IMMUTABLE))
    return causes


def uid_precondition_failed(precondition: str, actual: str) -> str:
    """The detail of a 409 for a uid precondition the stored object does not meet (storage.Preconditions)."""
    return f"Precondition failed: UID in precondition: {precondition}, UID in object meta: {actual}"
