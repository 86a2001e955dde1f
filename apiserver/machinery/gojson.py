"""How Go's encoding/json names a JSON value in its errors, shared by every place that words them as kube
does (a JSON patch, the audit policy file, a built-in kind's body)."""

from __future__ import annotations

from typing import Any

__all__ = ["go_json_kind"]


def go_json_kind(value: Any) -> str:
    """The JSON kind encoding/json names in "cannot unmarshal <kind> into Go value of type ..."."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
