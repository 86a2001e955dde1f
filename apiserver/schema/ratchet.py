"""Validation ratcheting of a custom resource's schema errors on update (KEP-4008, CRDValidationRatcheting:
beta and on by default since Kubernetes 1.30, GA in 1.33).

kube's ratcheting validator (k8s.io/apiextensions-apiserver/pkg/apiserver/validation/ratcheting.go) turns
the errors of a schema node whose value the update left as it was into warnings, so that an object stored
before its CRD's schema got stricter can still be updated elsewhere. A value is unchanged when it is
``reflect.DeepEqual`` to the old object's value at the same place (``1``, ``1.0`` and ``true`` differ),
correlated as kube does: object properties and map values by name, and the items of a
``x-kubernetes-list-type: map`` list by their keys (an item missing a key correlates with nothing). Items
of other lists (atomic, set) do not correlate: only an unchanged list, or an unchanged ancestor, ratchets
them. An error is ratcheted when its node or any node above it is unchanged; a ``required`` error belongs to
the object that lacks the field.

Never ratcheted, as in kube: list-type uniqueness (``Duplicate``), an embedded resource's ``apiVersion``,
``kind`` and ``metadata`` (kube checks them on the new object alone), the root's errors and composite
(allOf/anyOf/oneOf/not) errors, which are reported without a field. The CEL rules ratchet on their own
(apiserver.schema.cel).

Causes carry their field as text, map keys joined with a dot (``spec.labels.app.kubernetes.io/name``): the
walk reads a key as the longest key of the object that the path continues with, so keys with dots or
brackets resolve to the value they name; a path it cannot follow is not ratcheted.
"""

from __future__ import annotations

import re
from typing import Any, Final

from apiserver.schema import causes
from apiserver.schema.causes import Cause
from apiserver.schema.openapi import deep_equal
from apiserver.schema.structural import Schema, compile_schema

__all__ = ["index_map_list", "map_list_key", "ratchet"]

_INDEX: Final = re.compile(r"\[([0-9]+)\]", re.ASCII)
_MISSING: Final = object()
_EMBEDDED_FIELDS: Final = frozenset({"apiVersion", "kind", "metadata"})


def map_list_key(item: Any, keys: tuple[str, ...]) -> tuple[Any, ...] | None:
    """A map-list item's key (each part with its JSON type, so 1, 1.0 and true differ), or None when it
    has none: not an object, a key field missing, or a key value that is not a scalar."""
    if not isinstance(item, dict):
        return None
    key = []
    for name in keys:
        part = item.get(name, _MISSING)
        if part is _MISSING or isinstance(part, dict | list):
            return None
        key.append((type(part), part))
    return tuple(key)


def index_map_list(old: list[Any], keys: tuple[str, ...]) -> dict[tuple[Any, ...], Any]:
    """The old items of a map list by their keys (the first of a repeated key; keyless items left out),
    as kube's MakeMapList indexes them to correlate new items with old ones."""
    by_key: dict[tuple[Any, ...], Any] = {}
    for candidate in old:
        key = map_list_key(candidate, keys)
        if key is not None:
            by_key.setdefault(key, candidate)
    return by_key


class _Walk:
    """One ratchet() call: equality and map-list lookups are cached across its causes, so that many
    errors in one large object cost one comparison per node, not one per error and ancestor."""

    def __init__(self, new: Any, old: Any, schema: Schema) -> None:
        self.root = (new, old, schema)
        self.equal: dict[tuple[int, int], bool] = {}
        self.lists: dict[int, dict[tuple[Any, ...], Any]] = {}

    def unchanged(self, new: Any, old: Any) -> bool:
        key = (id(new), id(old))
        hit = self.equal.get(key)
        if hit is None:
            hit = self.equal[key] = deep_equal(new, old)
        return hit

    def correlated_item(self, s: Schema | None, item: Any, old: Any) -> Any:
        if s is None or s.list_type != "map" or not s.list_map_keys or not isinstance(old, list):
            return _MISSING
        by_key = self.lists.get(id(old))
        if by_key is None:
            by_key = self.lists[id(old)] = index_map_list(old, s.list_map_keys)
        key = map_list_key(item, s.list_map_keys)
        return _MISSING if key is None else by_key.get(key, _MISSING)

    def ratcheted(self, cause: Cause) -> bool:
        if cause.reason == causes.DUPLICATE or cause.field == causes.NIL_FIELD:
            return False
        new, old, root_schema = self.root
        s: Schema | None = root_schema
        rest, ancestor_unchanged = cause.field, False
        while rest:
            ancestor_unchanged = ancestor_unchanged or self.unchanged(new, old)
            if s is not None and s.embedded_resource and _first_name(rest) in _EMBEDDED_FIELDS:
                return False
            if isinstance(new, dict):
                key = _longest_key(new, rest)
                if key is None:  # a field the object lacks (required): the object's error
                    return ancestor_unchanged
                rest = rest[len(key) :].removeprefix(".")
                old = old.get(key, _MISSING) if isinstance(old, dict) else _MISSING
                new, s = new[key], s.field_schema(key) if s is not None else None
            elif (
                isinstance(new, list) and (match := _INDEX.match(rest)) and int(match[1]) < len(new)
            ):
                rest = rest[match.end() :].removeprefix(".")
                new = new[int(match[1])]
                old = self.correlated_item(s, new, old)
                s = s.items if s is not None else None
            else:
                return ancestor_unchanged  # a path this cannot follow further
            if old is _MISSING:
                # an added value, or a list item that does not correlate: only an ancestor ratchets it,
                # unless something below is an embedded resource's own field
                return ancestor_unchanged and not self._embedded_below(new, s, rest)
        return ancestor_unchanged or self.unchanged(new, old)

    @staticmethod
    def _embedded_below(new: Any, s: Schema | None, rest: str) -> bool:
        """Whether the rest of the path reaches an embedded resource's apiVersion, kind or metadata."""
        while rest and s is not None:
            if s.embedded_resource and _first_name(rest) in _EMBEDDED_FIELDS:
                return True
            if isinstance(new, dict):
                key = _longest_key(new, rest)
                if key is None:
                    return False
                rest, new, s = rest[len(key) :].removeprefix("."), new[key], s.field_schema(key)
            elif (
                isinstance(new, list) and (match := _INDEX.match(rest)) and int(match[1]) < len(new)
            ):
                rest, new, s = rest[match.end() :].removeprefix("."), new[int(match[1])], s.items
            else:
                return False
        return False


def _first_name(rest: str) -> str:
    return re.split(r"[.\[]", rest, maxsplit=1)[0]


def _longest_key(obj: dict[str, Any], rest: str) -> str | None:
    """The longest key of ``obj`` that ``rest`` names: all of it, or followed by ``.`` or ``[``."""
    best: str | None = None
    for key in obj:
        if (
            rest.startswith(key)
            and (len(rest) == len(key) or rest[len(key)] in ".[")
            and (best is None or len(key) > len(best))
        ):
            best = key
    return best


def ratchet(found: list[Cause], new: Any, old: Any, schema: Any) -> list[Cause]:
    """``found`` without the errors of values ``new`` left as ``old`` had them (``old``: None on a create)."""
    if old is None or not found:
        return found
    walk = _Walk(new, old, compile_schema(schema))
    return [cause for cause in found if not walk.ratcheted(cause)]
