"""The names CEL gives an object's properties (kube's ``cel.Escape``, k8s.io/apiserver/pkg/cel/escaping.go),
shared by the evaluator (:mod:`apiserver.schema.cel`) and the cost estimator (:mod:`apiserver.schema.celcost`)."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["escape"]

_RESERVED: Final = frozenset(
    {
        "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function",
        "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while",
    }
)  # fmt: skip
_ESCAPABLE: Final = re.compile(r"[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*")


def escape(name: str) -> str | None:
    """kube's cel.Escape: the CEL name of a property, or None when no rule can name it."""
    if name in _RESERVED:
        return f"__{name}__"
    if not _ESCAPABLE.fullmatch(name):
        return None
    return (
        name.replace("__", "__underscores__")
        .replace(".", "__dot__")
        .replace("-", "__dash__")
        .replace("/", "__slash__")
    )
