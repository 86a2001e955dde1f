"""The API approval of CRDs in the groups the Kubernetes community reserves (``*.k8s.io``,
``*.kubernetes.io``), as kube's apiextensions validation judges it (``validateAPIApproval`` in
apiextensions-apiserver pkg/apis/apiextensions/validation/validation.go, with ``IsProtectedCommunityGroup`` and
``GetAPIApprovalState`` of pkg/apihelpers/helpers.go): such a CRD needs the ``api-approved.kubernetes.io``
annotation, holding the URL of its API review or a reason starting with "unapproved". One judgement for
``apiforge generate`` and for a CRD posted to a running server, with kube's messages."""

from __future__ import annotations

import enum
import re
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "ANNOTATION",
    "ApprovalState",
    "approval_problem",
    "approval_state",
    "is_protected_group",
]

ANNOTATION = "api-approved.kubernetes.io"
_ENHANCEMENT = "see https://github.com/kubernetes/enhancements/pull/1111"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class ApprovalState(enum.Enum):
    INVALID = "invalid"
    APPROVED = "approved"
    BYPASSED = "bypassed"  # "unapproved, ...": allowed, and said so
    MISSING = "missing"


def is_protected_group(group: str) -> bool:
    return any(
        group == domain or group.endswith(f".{domain}") for domain in ("k8s.io", "kubernetes.io")
    )


def _is_request_uri(text: str) -> bool:
    """Go's ``url.ParseRequestURI`` succeeding with a scheme and a host."""
    if _CONTROL.search(text):
        return False
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    return bool(_SCHEME.match(parts.scheme)) and bool(parts.netloc) and " " not in parts.netloc


def approval_state(annotations: Any) -> ApprovalState:
    annotation = annotations.get(ANNOTATION, "") if isinstance(annotations, dict) else ""
    annotation = annotation if isinstance(annotation, str) else ""
    if not annotation:
        return ApprovalState.MISSING
    if annotation.startswith("unapproved"):
        return ApprovalState.BYPASSED
    if _is_request_uri(annotation):
        return ApprovalState.APPROVED
    return ApprovalState.INVALID


def approval_problem(group: Any, annotations: Any) -> str:
    """kube's message (with its field.Error prefix) when a CRD of ``group`` lacks a valid approval; ''
    otherwise. The field is ``metadata.annotations[api-approved.kubernetes.io]``."""
    if not isinstance(group, str) or not is_protected_group(group):
        return ""
    state = approval_state(annotations)
    if state is ApprovalState.MISSING:
        return (
            f'Required value: protected groups must have approval annotation "{ANNOTATION}", '
            f"{_ENHANCEMENT}"
        )
    if state is ApprovalState.INVALID:
        value = annotations[ANNOTATION]
        return (
            f'Invalid value: "{value}": protected groups must have approval annotation "{ANNOTATION}" '
            f'with either a URL or a reason starting with "unapproved", {_ENHANCEMENT}'
        )
    return ""
