"""The JSONPath subset printer columns use (CRD additionalPrinterColumns): `.a.b`, `.a[0]`, `.a[*].b`,
and filters such as `.status.conditions[?(@.type=="Ready")].status`.

Kubernetes evaluates these with k8s.io/client-go/util/jsonpath; a column whose path finds nothing is empty.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

_TOKEN = re.compile(
    r"""\.(?P<field>[A-Za-z0-9_\-$]+)"""
    r"""|\[(?P<index>-?\d+|\*)\]"""
    r"""|\[\?\(@\.(?P<filter_path>[A-Za-z0-9_.\-]+)\s*(?P<op>==|!=)\s*(?P<quote>["']?)(?P<value>[^"')]*)(?P=quote)\)\]"""
    r"""|\['(?P<quoted>[^']+)'\]"""
)

Step = tuple[str, Any]


class JSONPathError(ValueError):
    """The expression is outside the supported subset."""


@lru_cache(maxsize=1024)
def compile_path(expression: str) -> tuple[Step, ...]:
    text = expression.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    text = text.removeprefix("$")
    steps: list[Step] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise JSONPathError(f"unsupported JSONPath {expression!r} at {text[position:]!r}")
        if match.group("field") is not None:
            steps.append(("field", match.group("field")))
        elif match.group("quoted") is not None:
            steps.append(("field", match.group("quoted")))
        elif match.group("index") is not None:
            index = match.group("index")
            steps.append(("all", None) if index == "*" else ("index", int(index)))
        else:
            path = tuple(match.group("filter_path").split("."))
            steps.append(("filter", (path, match.group("op"), match.group("value"))))
        position = match.end()
    return tuple(steps)


def _lookup(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _walk(value: Any, steps: tuple[Step, ...]) -> Iterator[Any]:
    if not steps:
        yield value
        return
    kind, argument = steps[0]
    rest = steps[1:]
    if kind == "field":
        if isinstance(value, dict) and argument in value:
            yield from _walk(value[argument], rest)
    elif kind == "index":
        if isinstance(value, list) and -len(value) <= argument < len(value):
            yield from _walk(value[argument], rest)
    elif kind == "all":
        items = (
            value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
        )
        for item in items:
            yield from _walk(item, rest)
    elif isinstance(value, list):
        path, op, expected = argument
        for item in value:
            found = _lookup(item, path)
            matched = found is not None and _text(found) == expected
            if matched == (op == "=="):
                yield from _walk(item, rest)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def find(obj: Any, expression: str) -> list[Any]:
    """Every value ``expression`` selects in ``obj``, in document order."""
    return list(_walk(obj, compile_path(expression)))
