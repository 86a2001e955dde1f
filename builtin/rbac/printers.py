"""RoleBinding and ClusterRoleBinding cells as kube prints them (pkg/printers/internalversion printRoleBinding,
with rbac.SubjectsStrings): ROLE is ``Kind/name``; USERS, GROUPS and SERVICEACCOUNTS (wide) list the subjects
of each kind, service accounts as ``namespace/name``, joined by ``", "``."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def role(obj: dict[str, Any], now: datetime) -> str:
    ref = obj.get("roleRef")
    ref = ref if isinstance(ref, dict) else {}
    return f"{ref.get('kind', '')}/{ref.get('name', '')}"


def _subjects(obj: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    subjects = obj.get("subjects")
    return [
        s
        for s in (subjects if isinstance(subjects, list) else [])
        if isinstance(s, dict) and s.get("kind") == kind
    ]


def users(obj: dict[str, Any], now: datetime) -> str:
    return ", ".join(str(s.get("name", "")) for s in _subjects(obj, "User"))


def groups(obj: dict[str, Any], now: datetime) -> str:
    return ", ".join(str(s.get("name", "")) for s in _subjects(obj, "Group"))


def service_accounts(obj: dict[str, Any], now: datetime) -> str:
    return ", ".join(
        f"{s.get('namespace', '')}/{s.get('name', '')}" for s in _subjects(obj, "ServiceAccount")
    )
