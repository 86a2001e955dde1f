"""Table cells of the admissionregistration.k8s.io kinds, as kube's printers write them
(pkg/printers/internalversion/printers.go: printValidatingWebhook, printValidatingAdmissionPolicy,
printValidatingAdmissionPolicyBinding and their mutating twins): counts of the webhooks, validations or
mutations, and the param kind or reference, ``<unset>`` when there is none."""

from __future__ import annotations

from datetime import datetime
from typing import Any

UNSET = "<unset>"


def webhooks(obj: dict[str, Any], now: datetime) -> int:
    return len(obj.get("webhooks") or [])


def validations(obj: dict[str, Any], now: datetime) -> int:
    return len((obj.get("spec") or {}).get("validations") or [])


def mutations(obj: dict[str, Any], now: datetime) -> int:
    return len((obj.get("spec") or {}).get("mutations") or [])


def param_kind(obj: dict[str, Any], now: datetime) -> str:
    kind = (obj.get("spec") or {}).get("paramKind")
    if not kind:
        return UNSET
    return f"{kind.get('apiVersion', '')}/{kind.get('kind', '')}"


def param_ref(obj: dict[str, Any], now: datetime) -> str:
    """``namespace/name``, ``*/name`` when the binding names no namespace (kube cannot tell there whether
    the param is cluster-scoped), else the selector as a label selector string."""
    ref = (obj.get("spec") or {}).get("paramRef")
    if not ref:
        return UNSET
    if ref.get("name"):
        return f"{ref.get('namespace') or '*'}/{ref['name']}"
    if ref.get("selector") is not None:
        return _selector(ref["selector"])
    return UNSET


def _selector(selector: dict[str, Any]) -> str:
    """metav1.LabelSelectorAsSelector(...).String(): requirements sorted by key."""
    parts: list[tuple[str, str]] = [
        (key, f"{key}={value}") for key, value in (selector.get("matchLabels") or {}).items()
    ]
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression.get("key", ""), expression.get("operator", "")
        values = ",".join(sorted(expression.get("values") or []))
        text = {
            "In": f"{key} in ({values})",
            "NotIn": f"{key} notin ({values})",
            "Exists": key,
            "DoesNotExist": f"!{key}",
        }.get(operator, key)
        parts.append((key, text))
    return ",".join(text for _, text in sorted(parts)) or "<none>"
