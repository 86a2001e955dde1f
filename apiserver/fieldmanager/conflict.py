"""Server-side apply conflicts and the 409 kube answers with.

The text follows k8s.io/apimachinery/pkg/util/managedfields/internal/conflict.go (``NewConflictError``,
``getConflictMessage``, ``printManager``) and the ``Status`` of ``errors.NewApplyConflict``: kubectl and
the Python clients print the message as it is, and ``details.causes`` carries one
``FieldManagerConflict`` per field, so both must match kube's wording exactly::

    Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using stable.example.com/v1: .spec.image
    Apply failed with 2 conflicts: conflicts with "m" using v1:
    - .spec.a
    - .spec.b
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from apiserver.fieldmanager.fieldpath import Path
from apiserver.fieldmanager.managed import UPDATE, identifier
from apiserver.machinery.errors import APIError, StatusCause
from apiserver.schema.causes import go_quote

__all__ = ["FIELD_MANAGER_CONFLICT", "ApplyConflict", "Conflict", "conflict_message"]

FIELD_MANAGER_CONFLICT = "FieldManagerConflict"  # metav1.CauseTypeFieldManagerConflict


@dataclass(frozen=True, slots=True)
class Conflict:
    """A field the applied configuration changes although another manager owns it.

    ``field`` is the path as kube prints it (``.spec.containers[name="a"].image``); ``path`` is the
    same path as serialized path elements.
    """

    manager: str
    api_version: str
    field: str
    operation: str = UPDATE
    subresource: str = ""
    path: Path = ()

    @property
    def manager_identifier(self) -> str:
        """The manager as SMD names it, which is what kube sorts conflicts by."""
        return identifier(self.manager, self.operation, self.api_version, self.subresource)

    def describe_manager(self) -> str:
        """``printManager``: ``"name"``, plus ``with subresource "s"`` and, for updaters,
        ``using <apiVersion>`` (the time is never part of a manager identifier, so never printed)."""
        text = go_quote(self.manager)
        if self.subresource:
            text = f"{text} with subresource {go_quote(self.subresource)}"
        if self.operation == UPDATE:
            text = f"{text} using {self.api_version}"
        return text


def conflict_message(conflicts: Sequence[Conflict]) -> tuple[str, list[dict[str, str]]]:
    """kube's message and ``details.causes`` for ``conflicts`` (in the order given)."""
    causes = [
        {
            "reason": FIELD_MANAGER_CONFLICT,
            "message": f"conflict with {c.describe_manager()}",
            "field": c.field,
        }
        for c in conflicts
    ]
    if len(conflicts) == 1:
        only = conflicts[0]
        return (
            f"Apply failed with 1 conflict: conflict with {only.describe_manager()}: {only.field}",
            causes,
        )
    by_manager: dict[str, list[Conflict]] = {}
    for c in conflicts:
        by_manager.setdefault(c.manager_identifier, []).append(c)
    lines: list[str] = []
    for key in sorted(by_manager):
        group = by_manager[key]
        lines.append(f"conflicts with {group[0].describe_manager()}:")
        lines.extend(f"- {c.field}" for c in group)
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines), causes


class ApplyConflict(APIError):
    """409 Conflict for a non-forced apply; ``status()`` is kube's ``Status`` for it."""

    def __init__(self, conflicts: Sequence[Conflict]) -> None:
        message, causes = conflict_message(conflicts)
        super().__init__(
            409,
            "Conflict",
            message,
            causes=[StatusCause(c["reason"], c["message"], c["field"]) for c in causes],
        )
        self.conflicts: list[Conflict] = list(conflicts)
