"""What of each admission variable a policy's expressions can read: the evaluator converts every value
bound to it (about 7 µs per string here), so a policy is handed ``object`` and the others cut down to the
fields its expressions select (``object.spec.replicas`` binds ``{"spec": {"replicas": 3}}``), which keeps a
policy's cost near its expressions' own rather than the object's size.

The fields come from the expressions' text: each use of a variable followed by ``.field`` steps. Where a
chain ends (an index, a macro, a method such as ``size()``, or the variable alone) the whole value there is
kept; a step the value lacks keeps the whole map it was looked up in (it may be a method on the map, or a
``has()`` that must stay false). Strings that merely look like a chain only keep more than needed."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

ROOTS: Final = ("object", "oldObject", "request", "params", "namespaceObject", "authorizer")
_CHAIN: Final = re.compile(
    r"(?<![\w.])(" + "|".join(ROOTS) + r")\b((?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*)"
)
WHOLE: Final = True
Fields = dict[str, Any]
"""A trie of field names; a leaf of WHOLE keeps the whole value there."""


def _add(trie: Fields, steps: list[str]) -> None:
    node = trie
    for step in steps[:-1]:
        child = node.get(step)
        if child is WHOLE:
            return
        node = node.setdefault(step, {})
    if steps:
        node[steps[-1]] = WHOLE


def needed_fields(sources: Iterable[str]) -> dict[str, Fields | bool]:
    """Per variable the expressions read: WHOLE, or the trie of the fields they select."""
    needed: dict[str, Fields | bool] = {}
    for source in sources:
        for match in _CHAIN.finditer(source):
            root = match.group(1)
            steps = [s.strip() for s in match.group(2).split(".")[1:]]
            current = needed.get(root)
            if current is WHOLE:
                continue
            if not steps:
                needed[root] = WHOLE
                continue
            trie = current if isinstance(current, dict) else {}
            _add(trie, steps)
            needed[root] = trie
    return needed


def project(value: Any, fields: Fields | bool) -> Any:
    """``value`` cut down to ``fields`` (shared, not copied: the evaluator copies what it is given)."""
    if fields is WHOLE or not isinstance(value, dict) or not isinstance(fields, dict):
        return value
    out = {}
    for key, sub in fields.items():
        if key not in value:
            return value
        out[key] = project(value[key], sub)
    return out
