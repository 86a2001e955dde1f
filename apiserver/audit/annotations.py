"""Audit annotations added while a request is served (kube's ``audit.AddAuditAnnotation``): admission
webhooks' ``auditAnnotations`` and the Audit action of admission policies. The audit filter makes the
request's event's annotations the current mapping; outside an audited request adding one does nothing."""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar

CURRENT: ContextVar[dict[str, str] | None] = ContextVar("audit_annotations", default=None)


def add_annotations(annotations: Mapping[str, str]) -> None:
    """Add to the current request's audit event; as kube's, a key already set keeps its first value."""
    current = CURRENT.get()
    if current is None:
        return
    for key, value in annotations.items():
        current.setdefault(key, value)
