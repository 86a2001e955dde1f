"""The Kubernetes CEL string library (cel-go's strings extension, as k8s.io/apiserver/pkg/cel enables it):
``split``, ``lowerAscii``, ``upperAscii``, ``trim``, ``replace``, ``indexOf``, ``lastIndexOf``, ``join``."""

from __future__ import annotations

import string
from collections.abc import Callable
from typing import Any, Final

_LOWER: Final = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_UPPER: Final = str.maketrans(string.ascii_lowercase, string.ascii_uppercase)
"""ASCII-only case maps: str.translate runs them at C speed (a character at a time in Python cost ~1 µs
per cost unit the budget charges for them)."""


def _index_of(text: str, needle: str, start: int = 0) -> int:
    if not 0 <= start <= len(text):
        raise IndexError(f"index out of range: {start}")
    return text.find(needle, start)


def _last_index_of(text: str, needle: str, end: int | None = None) -> int:
    if end is None:
        return text.rfind(needle)
    if not 0 <= end < max(len(text), 1):
        raise IndexError(f"index out of range: {end}")
    return text.rfind(needle, 0, end + len(needle))


def _split(text: str, separator: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    if separator == "":
        parts = list(text)
        return parts if limit < 0 else [*parts[: limit - 1], "".join(parts[limit - 1 :])]
    return text.split(separator, limit - 1 if limit > 0 else -1)


STRINGS: Final[dict[str, Callable[..., Any]]] = {
    "indexOf": _index_of,
    "join": lambda items, separator="": separator.join(str(item) for item in items),
    "lastIndexOf": _last_index_of,
    "lowerAscii": lambda text: text.translate(_LOWER),
    "replace": lambda text, old, new, count=-1: text.replace(old, new, count),
    "split": _split,
    "trim": str.strip,
    "upperAscii": lambda text: text.translate(_UPPER),
}
"""The Kubernetes CEL string library (cel-go's strings extension, as k8s.io/apiserver/pkg/cel enables it)."""
