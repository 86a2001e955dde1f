"""Validation ratcheting of a custom resource's schema errors on update (KEP-4008, CRDValidationRatcheting:
beta and on by default since Kubernetes 1.30, GA in 1.33).

kube's ratcheting validator drops the errors of a schema node whose value the update left as it was, so an
object stored before its CRD's schema got stricter can still be updated elsewhere. A value is unchanged
when it equals the old object's value at the same place, correlated as kube's ``common.CorrelatedObject``
does: object properties and map values by name, the items of a ``x-kubernetes-list-type: map`` list by
their keys and those of a plain list by index; a set's items do not correlate, so only an unchanged set
(or an unchanged ancestor) ratchets them. An error is ratcheted when its node, or any node above it, is
unchanged; a ``required`` error belongs to the object that lacks the field.

Not ratcheted, as in kube: list-type uniqueness (``Duplicate``), the ObjectMeta of embedded resources, and
the root's errors (the object as a whole always changes: its metadata does). The CEL rules ratchet on their
own (apiserver.schema.cel).
"""

from __future__ import annotations

import re
from typing import Any, Final

from apiserver.schema import causes
from apiserver.schema.causes import Cause
from apiserver.schema.structural import Schema, compile_schema

__all__ = ["ratchet"]

_STEP: Final = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]|\.")
_MISSING: Final = object()


def ratchet(found: list[Cause], new: Any, old: Any, schema: Any) -> list[Cause]:
    """``found`` without the errors of values ``new`` left as ``old`` had them (``old``: None on a create)."""
    if old is None or not found:
        return found
    compiled = compile_schema(schema)
    return [c for c in found if not _unchanged(c, new, old, compiled)]


def _steps(field: str) -> list[tuple[str, str]] | None:
    """``spec.a[0].b`` as (kind, token) steps: ("name", "spec"), ("name", "a"), ("index", "0")..."""
    steps: list[tuple[str, str]] = []
    position = 0
    for match in _STEP.finditer(field):
        if match.start() != position:
            return None
        position = match.end()
        name, index = match.group(1), match.group(2)
        if name is not None:
            steps.append(("name", name))
        elif index is not None:
            steps.append(("index", index))
    return steps if position == len(field) and steps else None


def _unchanged(cause: Cause, new: Any, old: Any, s: Schema | None) -> bool:
    if cause.reason == causes.DUPLICATE:
        return False
    steps = _steps(cause.field)
    if steps is None:
        return (
            False  # "<nil>": the root, or a path this cannot follow (never ratcheted, as is safe)
        )
    for kind, token in steps:
        if new is not _MISSING and old is not _MISSING and old == new and new is not None:
            return True
        if s is not None and s.embedded_resource and token == "metadata":
            return False
        if kind == "name" and isinstance(new, dict):
            new, old = (
                new.get(token, _MISSING),
                old.get(token, _MISSING) if isinstance(old, dict) else _MISSING,
            )
            s = s.field_schema(token) if s is not None else None
        elif (
            kind == "index" and isinstance(new, list) and token.isdigit() and int(token) < len(new)
        ):
            item = new[int(token)]
            old = _correlated_item(s, item, int(token), old)
            new, s = item, s.items if s is not None else None
        else:
            return False
        if new is _MISSING or old is _MISSING:
            return False  # an added field, or one the object lacks (required): nothing to compare
    return bool(old == new)


def _correlated_item(s: Schema | None, item: Any, index: int, old: Any) -> Any:
    if not isinstance(old, list) or s is None or s.list_type == "set":
        return _MISSING
    if s.list_type == "map" and s.list_map_keys:
        if not isinstance(item, dict):
            return _MISSING
        key = [item.get(k) for k in s.list_map_keys]
        for candidate in old:
            if isinstance(candidate, dict) and [candidate.get(k) for k in s.list_map_keys] == key:
                return candidate
        return _MISSING
    return old[index] if index < len(old) else _MISSING
