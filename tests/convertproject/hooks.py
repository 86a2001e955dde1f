"""Conversion hooks of the Ticket test kind (definitions/moves.example.com/ticket.yaml).

Each adds the converted field and leaves the field it came from in place: what a hook returns is pruned to
the target version's schema by the generated converter, so the leftover must not reach a client or storage.
"""

from __future__ import annotations

from typing import Any


def ticket_to_hub(obj: dict[str, Any]) -> dict[str, Any]:
    """v1alpha1 → v1: spec.level (a string of digits) → spec.priority (an integer)."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("level"), str):
        spec["priority"] = int(spec["level"])
    return obj


def ticket_from_hub(obj: dict[str, Any]) -> dict[str, Any]:
    """v1 → v1alpha1: spec.priority → spec.level."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("priority"), int):
        spec["level"] = str(spec["priority"])
    return obj
