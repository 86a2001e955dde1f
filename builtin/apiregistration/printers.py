"""The cells of kube-aggregator's APIService table (pkg/registry/apiservice/etcd's convertor): SERVICE is
``Local`` for an APIService served here, ``namespace/name`` otherwise; AVAILABLE is the condition's status,
with its reason in parentheses when it is not True."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def service(obj: dict[str, Any], now: datetime) -> str:
    reference = (obj.get("spec") or {}).get("service")
    if not isinstance(reference, dict):
        return "Local"
    return f"{reference.get('namespace', '')}/{reference.get('name', '')}"


def available(obj: dict[str, Any], now: datetime) -> str:
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Available":
            status = str(condition.get("status", ""))
            reason = condition.get("reason")
            if status != "True" and reason:
                return f"{status} ({reason})"
            return status
    return "Unknown"
