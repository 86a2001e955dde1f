"""Whether pruning would remove anything from an object, answered without changing it.

A write asks this of the value it stores (registry.codec.Codec): a value its schema leaves as it is needs
no prune when it is read back, and reads are many. The check mirrors ``pruning._prune``, ``_prune_object``
and ``_skip_prune`` branch for branch, with one C-level subset test of an object's keys against its declared
properties and a walk into nested containers only, and builds no field paths. The checks are closures
compiled once per schema tree (kept on the root :class:`Schema`, as CEL's compiled rules are).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from apiserver.schema.defaulting import has_members
from apiserver.schema.structural import Schema

__all__ = ["tree_is_clean", "tree_is_pruned"]

Check = Callable[[Any], bool]

_META_FIELDS: Final = frozenset({"apiVersion", "kind", "metadata"})
_ARRAYS: Final = (list, tuple)
"""What JSON encodes as an array: a value the server built may hold a tuple, which a read parses as a list."""
_CONTAINERS: Final = (dict, list, tuple)


def _always(_x: Any) -> bool:
    return True


def _empty(x: Any) -> bool:
    """``_prune(x, None)``: an object without a schema loses every member, arrays are walked."""
    if isinstance(x, dict):
        return not x
    if isinstance(x, _ARRAYS):
        return all(_empty(item) for item in x if isinstance(item, _CONTAINERS))
    return True


def _children_clean(
    x: dict[str, Any], children: dict[str, Check], other: Check | None, skipped: frozenset[str]
) -> bool:
    """Every container member of ``x`` is clean by its property's check (else ``other``'s, if any)."""
    for key, value in x.items():
        if isinstance(value, _CONTAINERS) and key not in skipped:
            child = children.get(key, other)
            if child is not None and not child(value):
                return False
    return True


class _Compiler:
    """Builds the checks of one schema tree; a schema reached twice shares its check. With ``nulls``, a
    member that is null anywhere the check looks makes it answer False too: what ``defaulting.prune_nulls``
    could drop is then never left unseen (a null it keeps, nullable or defaulted, only costs the prune)."""

    def __init__(self, nulls: bool = False) -> None:
        self._nulls = nulls
        self._memo: dict[tuple[int, str, bool], Check] = {}
        self._keep: list[
            Schema
        ] = []  # the memo keys on ids: keep the schemas alive while compiling

    def _memoized(self, s: Schema, kind: str, keep_meta: bool, build: Callable[[], Check]) -> Check:
        key = (id(s), kind, keep_meta)
        check = self._memo.get(key)
        if check is None:
            self._keep.append(s)
            check = self._memo[key] = build()
        return check

    def value(self, s: Schema | None) -> Check:
        """``pruning._prune(x, s)``."""
        if s is None:
            return _empty
        if s.preserve_unknown_fields:
            return self.skip(s, s.embedded_resource)
        return self._memoized(s, "value", False, lambda: self._value(s))

    def _value(self, s: Schema) -> Check:
        members = self.members(s, s.embedded_resource)
        items = self.value(s.items)

        def check(x: Any) -> bool:
            if isinstance(x, dict):
                return members(x)
            if isinstance(x, _ARRAYS):
                return all(items(item) for item in x if isinstance(item, _CONTAINERS))
            return True

        return check

    def members(self, s: Schema, keep_meta: bool) -> Check:
        """``pruning._prune_object(x, s, keep_meta)`` for a dict ``x``."""
        return self._memoized(s, "members", keep_meta, lambda: self._members(s, keep_meta))

    def _members(self, s: Schema, keep_meta: bool) -> Check:
        children = {key: self.value(prop) for key, prop in s.properties.items()}
        # additionalProperties of any kind keeps a member and prunes it with its schema (none: everything)
        other: Check | None = (
            self.value(s.additional_properties)
            if s.additional_properties_allowed is not None
            else None
        )
        known = frozenset(children) | (_META_FIELDS if keep_meta else frozenset())
        skipped = _META_FIELDS if keep_meta else frozenset()
        nulls = self._nulls

        def check(x: dict[str, Any]) -> bool:
            if other is None and not x.keys() <= known:
                return False
            for key, value in x.items():  # _children_clean, inlined: this runs on every write
                if isinstance(value, _CONTAINERS):
                    if key not in skipped:
                        child = children.get(key, other)
                        if child is not None and not child(value):
                            return False
                elif value is None and nulls:
                    return False
            return True

        return check

    def skip(self, s: Schema, keep_meta: bool) -> Check:
        """``pruning._skip_prune(x, s, keep_meta)``: unknown members stay, declared ones are pruned."""
        return self._memoized(s, "skip", keep_meta, lambda: self._skip(s, keep_meta))

    def _skip(self, s: Schema, keep_meta: bool) -> Check:
        has_additional = s.additional_properties_allowed is not None
        children = {key: self.value(prop) for key, prop in s.properties.items()}
        other = self.value(s.additional_properties) if has_additional else None
        skipped = _META_FIELDS if keep_meta else frozenset()
        items = self.skip(s.items, s.items.embedded_resource) if s.items is not None else _always
        nulls = self._nulls

        def check(x: Any) -> bool:
            if isinstance(x, dict):
                if nulls and None in x.values():
                    return False
                return _children_clean(x, children, other, skipped)
            if isinstance(x, _ARRAYS):
                return all(items(item) for item in x if isinstance(item, _CONTAINERS))
            return True

        return check

    def root(self, s: Schema) -> Check:
        """``pruning.prune(obj, s)``: the root keeps apiVersion, kind and metadata whatever the schema."""
        members = self.skip(s, True) if s.preserve_unknown_fields else self.members(s, True)
        items = self.value(s)

        def check(obj: Any) -> bool:
            if isinstance(obj, dict):
                return members(obj)
            if isinstance(obj, _ARRAYS):
                return items(obj)
            return True

        return check


class _Checks:
    """What is kept on a schema's root: the prune check, and the one that also finds nulls (None where
    the nulls' drop walks what the prune check skips: embedded resources, a root metadata with members)."""

    __slots__ = ("nulls", "plain")

    def __init__(self, schema: Schema) -> None:
        self.plain = _Compiler().root(schema)
        metadata = schema.properties.get("metadata")
        self.nulls = (
            None
            if schema.has_embedded_below or (metadata is not None and has_members(metadata))
            else _Compiler(nulls=True).root(schema)
        )


def _checks(schema: Schema) -> _Checks:
    checks = schema.prune_check
    if checks is None:
        checks = schema.prune_check = _Checks(schema)
    return checks  # type: ignore[no-any-return]


def tree_is_pruned(obj: Any, schema: Schema) -> bool:
    """True when ``pruning.prune(obj, schema)`` would remove nothing (metadata's own rules apart)."""
    return bool(_checks(schema).plain(obj))


def tree_is_clean(obj: Any, schema: Schema) -> bool:
    """True when ``tree_is_pruned`` and no member the check looks at is null, so that neither the prune
    nor the drop of disallowed nulls (``defaulting.prune_nulls``) would change ``obj``; False when unsure."""
    check = _checks(schema).nulls
    return check is not None and bool(check(obj))
