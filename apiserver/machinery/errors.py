"""Errors as values with a Kubernetes reason; the HTTP layer renders each as a ``metav1.Status``.

Messages follow kube-apiserver's wording (k8s.io/apimachinery/pkg/api/errors/errors.go), because kubectl prints
them verbatim and clients branch on ``reason`` and ``code``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class StatusCause:
    reason: str
    message: str
    field: str = ""

    def to_dict(self) -> dict[str, str]:
        out = (
            {"reason": self.reason, "message": self.message}
            if self.reason
            else {"message": self.message}
        )
        if self.field:
            out["field"] = self.field
        return out


@dataclass
class APIError(Exception):
    """A request failed in a way the client must be told about with a Status object."""

    code: int
    reason: str
    message: str
    name: str = ""
    group: str = ""
    kind: str = ""
    uid: str = ""
    causes: list[StatusCause] = field(default_factory=list)
    retry_after_seconds: int = 0
    details_always: bool = False
    """kube's errors made with a StatusDetails (NewGenericServerResponse, NewNotFound of no resource,
    NewMethodNotSupported) send ``details: {}`` when every field is empty; NewBadRequest's and the like
    send none."""

    def __str__(self) -> str:
        return f"{self.code} {self.reason}: {self.message}"

    def status(self) -> dict[str, Any]:
        details: dict[str, Any] = {}
        for key in ("name", "group", "kind", "uid"):
            value = getattr(self, key)
            if value:
                details[key] = value
        if self.causes:
            details["causes"] = [cause.to_dict() for cause in self.causes]
        if self.retry_after_seconds:
            details["retryAfterSeconds"] = self.retry_after_seconds
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if not self.reason:  # StatusReasonUnknown is "", which Go's omitempty leaves out
            del status["reason"]
        if details or self.details_always:
            status["details"] = details
        return status


def _qualified(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


def not_found(resource: str, group: str, name: str) -> APIError:
    return APIError(
        404,
        "NotFound",
        f'{_qualified(resource, group)} "{name}" not found',
        name=name,
        group=group,
        kind=resource,
    )


def resource_not_found() -> APIError:
    """An unknown resource under a served prefix: 404 with empty details, as kube-apiserver answers."""
    return APIError(
        404, "NotFound", "the server could not find the requested resource", details_always=True
    )


def already_exists(resource: str, group: str, name: str) -> APIError:
    return APIError(
        409,
        "AlreadyExists",
        f'{_qualified(resource, group)} "{name}" already exists',
        name=name,
        group=group,
        kind=resource,
    )


def conflict(resource: str, group: str, name: str, detail: str) -> APIError:
    message = f'Operation cannot be fulfilled on {_qualified(resource, group)} "{name}": {detail}'
    return APIError(409, "Conflict", message, name=name, group=group, kind=resource)


MODIFIED = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def invalid(
    kind: str, group: str, name: str, causes: list[StatusCause], *, empty_paths: bool = False
) -> APIError:
    """422 Invalid, with the message kube builds: `<Kind>.<group> "<name>" is invalid: [a, b]`.
    ``empty_paths``: the causes are field.Errors on ``field.NewPath("")`` (the whole object), whose
    ``Error()`` prints the empty path too (``": Too long: ..."``)."""
    described = [f"{c.field}: {c.message}" if c.field or empty_paths else c.message for c in causes]
    joined = described[0] if len(described) == 1 else "[" + ", ".join(described) + "]"
    qualified = f"{kind}.{group}" if group else kind
    return APIError(
        422,
        "Invalid",
        f'{qualified} "{name}" is invalid: {joined}',
        name=name,
        group=group,
        kind=kind,
        causes=causes,
    )


def unauthorized(message: str = "Unauthorized") -> APIError:
    """401, as kube's authentication filter answers a request whose credentials fail (NewUnauthorized)."""
    return APIError(401, "Unauthorized", message or "not authorized")


def forbidden(resource: str, group: str, name: str, detail: str) -> APIError:
    """403 with the message kube's NewForbidden builds: `<resource>[.<group>] ["<name>"] is forbidden: ...`."""
    if not resource and not group:
        message = f"forbidden: {detail}"
    elif not name:
        message = f"{_qualified(resource, group)} is forbidden: {detail}"
    else:
        message = f'{_qualified(resource, group)} "{name}" is forbidden: {detail}'
    return APIError(403, "Forbidden", message, name=name, group=group, kind=resource)


def bad_request(message: str, causes: list[StatusCause] | None = None) -> APIError:
    return APIError(400, "BadRequest", message, causes=causes or [])


def method_not_allowed() -> APIError:
    return APIError(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        details_always=True,
    )


def terminating_create(group: str, resource: str) -> APIError:
    """kube's crdHandler for a create while the CustomResourceDefinition is terminating: a MethodNotSupported
    error (details: group and kind = the resource) whose message it replaces."""
    message = "create not allowed while custom resource definition is terminating"
    return APIError(405, "MethodNotAllowed", message, group=group, kind=resource)


def unsupported_media_type(accepted: list[str]) -> APIError:
    message = f"the body of the request was in an unknown format - accepted media types include: {', '.join(accepted)}"
    return APIError(415, "UnsupportedMediaType", message)


def not_acceptable(served: list[str]) -> APIError:
    """kube's negotiation.NewNotAcceptableError."""
    message = f"only the following media types are accepted: {', '.join(served)}"
    return APIError(406, "NotAcceptable", message)


def expired(message: str) -> APIError:
    return APIError(410, "Expired", message)


def gone(message: str) -> APIError:
    return APIError(410, "Gone", message)


def request_entity_too_large(message: str) -> APIError:
    return APIError(413, "RequestEntityTooLarge", message)


def internal_error(message: str) -> APIError:
    return APIError(500, "InternalError", f"Internal error occurred: {message}")


def unknown_error(message: str) -> APIError:
    """A plain Go error that reached kube-apiserver's response writer: ErrorToAPIStatus answers 500 with the
    error's own text and no reason (StatusReasonUnknown; k8s.io/apiserver/pkg/endpoints/handlers/
    responsewriters/status.go)."""
    return APIError(500, "", message)


def service_unavailable(message: str) -> APIError:
    return APIError(503, "ServiceUnavailable", message)


def request_timeout() -> APIError:
    """What kube answers when storage gives no answer in time (its request deadline passes): a 504
    Timeout, which clients render as "the server was unable to return a response in the time allotted,
    but may still be processing the request" (k8s.io/apiserver/pkg/endpoints/handlers/finisher/
    finisher.go: NewTimeoutError)."""
    return APIError(
        504,
        "Timeout",
        "Timeout: request did not complete within requested timeout - context deadline exceeded",
    )


def too_large_resource_version(wanted: int, current: int, retry_after_seconds: int = 1) -> APIError:
    """kube's NewTooLargeResourceVersionError (k8s.io/apiserver/pkg/storage/errors.go): a Timeout (504) with
    the ResourceVersionTooLarge cause, which client-go's reflector retries after ``retryAfterSeconds`` (1: kube's
    resourceVersionTooHighRetrySeconds)."""
    return APIError(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {wanted}, current: {current}",
        causes=[StatusCause("ResourceVersionTooLarge", "Too large resource version")],
        retry_after_seconds=retry_after_seconds,
    )
