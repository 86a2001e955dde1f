"""The Kubernetes CEL string library: cel-go's strings extension at the version kube-apiserver enables it
(``ext.Strings(ext.StringsVersion(2))``, k8s.io/apiserver/pkg/cel/environment/base.go): ``charAt``,
``indexOf``, ``lastIndexOf``, ``lowerAscii``, ``upperAscii``, ``replace``, ``split``, ``substring``,
``trim``, ``join``, ``format`` and ``strings.quote``, with cel-go's results and error messages
(github.com/google/cel-go ext/strings.go). ``reverse`` came with version 3, which kube does not enable.

Indices count code points (Go runes), as Python strings do. ``strings.quote(s)`` is read by the evaluator
(cel-rust, which has no namespaced functions) as the method ``quote`` on a variable ``strings``: contexts
bind it to :data:`ROOT`."""

from __future__ import annotations

import string
from collections.abc import Callable
from typing import Any, Final

from apiserver.schema.celtext import format_string, quote

_LOWER: Final = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_UPPER: Final = str.maketrans(string.ascii_lowercase, string.ascii_uppercase)
"""ASCII-only case maps: str.translate runs them at C speed (a character at a time in Python cost ~1 µs
per cost unit the budget charges for them)."""

TYPE: Final = "@type"
ROOT: Final = {TYPE: "strings-library"}
"""The value of the ``strings`` variable (``strings.quote``)."""
VARIABLE: Final = "strings"


def _out_of_range(index: int) -> IndexError:
    return IndexError(f"index out of range: {index}")


def _char_at(text: str, index: int) -> str:
    if not 0 <= index <= len(text):
        raise _out_of_range(index)
    return text[index : index + 1]


def _index_of(text: str, needle: str, start: int = 0) -> int:
    if needle == "":
        return start
    if not 0 <= start < len(text):
        raise _out_of_range(start)
    return text.find(needle, start)


def _last_index_of(text: str, needle: str, end: int | None = None) -> int:
    if end is None:  # cel-go searches from the last index, so an empty text is out of range
        if needle == "":
            return len(text)
        end = len(text) - 1
    elif needle == "":
        return end
    if not 0 <= end < len(text):
        raise _out_of_range(end)
    return text.rfind(needle, 0, end + len(needle))


def _substring(text: str, start: int, end: int | None = None) -> str:
    if end is not None and start > end:
        raise IndexError(f"invalid substring range. start: {start}, end: {end}")
    for index in (start, end):
        if index is not None and not 0 <= index <= len(text):
            raise _out_of_range(index)
    return text[start:end]


def _split(text: str, separator: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    if separator == "":
        parts = list(text)
        return parts if limit < 0 else [*parts[: limit - 1], "".join(parts[limit - 1 :])]
    return text.split(separator, limit - 1 if limit > 0 else -1)


def _quote(receiver: Any, text: Any) -> str:
    if receiver != ROOT or not isinstance(text, str):
        raise TypeError("no such overload")
    return quote(text)


STRINGS: Final[dict[str, Callable[..., Any]]] = {
    "charAt": _char_at,
    "format": format_string,
    "indexOf": _index_of,
    "join": lambda items, separator="": separator.join(str(item) for item in items),
    "lastIndexOf": _last_index_of,
    "lowerAscii": lambda text: text.translate(_LOWER),
    "quote": _quote,
    "replace": lambda text, old, new, count=-1: text.replace(old, new, count),
    "split": _split,
    "substring": _substring,
    "trim": str.strip,
    "upperAscii": lambda text: text.translate(_UPPER),
}
"""The Kubernetes CEL string library (cel-go's strings extension, as k8s.io/apiserver/pkg/cel enables it)."""
