"""The admission.k8s.io/v1 AdmissionReview a webhook is sent and the checks on its answer (kube's
webhook/request package: CreateV1AdmissionReview and VerifyAdmissionResponse), in kube's words."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from apiserver.admission.interface import Attributes, Operation
from apiserver.machinery.objects import Object
from builtin.admissionregistration.equivalents import Matched

_OPTIONS_KIND = {
    Operation.CREATE: "CreateOptions",
    Operation.UPDATE: "UpdateOptions",
    Operation.DELETE: "DeleteOptions",
}


class InvalidResponse(ValueError):
    """The webhook's answer is not a valid AdmissionReview response (kube: "received invalid webhook
    response: ...")."""


@dataclass(slots=True)
class Verdict:
    """A webhook's verified answer."""

    allowed: bool
    status: dict[str, Any]
    patch: Any = None
    """The decoded JSONPatch operations, None when the webhook sent none."""
    warnings: list[str] = field(default_factory=list)
    audit_annotations: dict[str, str] = field(default_factory=dict)


def admission_review(
    attributes: Attributes,
    matched: Matched,
    obj: Object | None,
    old: Object | None,
) -> dict[str, Any]:
    """The AdmissionReview of one write, its objects in the resource and version the webhook matched;
    ``requestKind`` and ``requestResource`` are what was written."""
    resource, version = matched.resource, matched.version
    written = attributes.resource
    requested = attributes.request_version or attributes.version
    user = attributes.user.as_json()
    request: dict[str, Any] = {
        "uid": str(uuid.uuid4()),
        "kind": {"group": resource.group, "version": version.name, "kind": resource.kind},
        "resource": {"group": resource.group, "version": version.name, "resource": resource.plural},
        "requestKind": {"group": written.group, "version": requested.name, "kind": written.kind},
        "requestResource": {
            "group": written.group,
            "version": requested.name,
            "resource": written.plural,
        },
        "name": attributes.name,
        "operation": attributes.operation.value,
        "userInfo": user,
        "object": obj,
        "oldObject": old,
        "dryRun": attributes.dry_run,
    }
    if attributes.subresource:
        request["subResource"] = request["requestSubResource"] = attributes.subresource
    if attributes.namespace:
        request["namespace"] = attributes.namespace
    options_kind = _OPTIONS_KIND.get(attributes.operation)
    if options_kind is not None:
        request["options"] = {"kind": options_kind, "apiVersion": "meta.k8s.io/v1"}
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def verify_response(review: Any, uid: str, mutating: bool) -> Verdict:
    """kube's VerifyAdmissionResponse for admission.k8s.io/v1: the kind, the uid echoed, a patch only from
    a mutating webhook and only as JSONPatch."""
    if not isinstance(review, dict):
        raise InvalidResponse("expected an AdmissionReview object")
    api_version, kind = review.get("apiVersion"), review.get("kind")
    if (api_version, kind) != ("admission.k8s.io/v1", "AdmissionReview"):
        raise InvalidResponse(
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got "
            f"{api_version}, Kind={kind}"
        )
    response = review.get("response")
    if not isinstance(response, dict):
        raise InvalidResponse("webhook response was absent")
    if response.get("uid") != uid:
        raise InvalidResponse(f'expected response.uid="{uid}", got "{response.get("uid") or ""}"')
    allowed = response.get("allowed")
    if not isinstance(allowed, bool):
        raise InvalidResponse("response.allowed must be a boolean")
    status = response.get("status")
    verdict = Verdict(allowed, status if isinstance(status, dict) else {})
    patch_type, patch = response.get("patchType"), response.get("patch")
    if patch is not None or patch_type is not None:
        if not mutating:
            raise InvalidResponse(f"validating webhook may not return response.patch: {patch!r}")
        if patch_type != "JSONPatch":
            raise InvalidResponse(f'response.patchType must be "JSONPatch", got "{patch_type}"')
        verdict.patch = patch
    warnings = response.get("warnings") or []
    annotations = response.get("auditAnnotations") or {}
    if not isinstance(warnings, list) or not isinstance(annotations, dict):
        raise InvalidResponse("response.warnings must be a list and auditAnnotations a map")
    verdict.warnings = [w for w in (str(w).strip() for w in warnings) if w]
    verdict.audit_annotations = {str(k): str(v) for k, v in annotations.items()}
    return verdict
