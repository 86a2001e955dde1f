"""A create's field set: everything the new object sets, built in FieldsV1's order in one walk.

On a create the object is compared with nothing (or with a built-in kind's Go zero value, which holds
nothing a set can name), so SMD's ``Compare`` adds every path of the new object and modifies or removes
none (typed/compare.go, with ``postItemHook`` adding every granular node). Building that added set
directly, member by member in the order ``fieldpath.encode_fields_v1`` sorts them, gives a set that is its
own encoding: no compare, no set algebra, no sort of the result.

Most of a create's set depends on the object's keys alone: a map's set names its keys, a member owned
whole adds nothing below it, and only the items of a granular list add values (a set's strings, a keyed
list's keys). So sets are remembered per type by a *shape*: the keys of every granular map, in their
order, and the strings of every set; an object whose shape was seen gets the very set made then, after a
walk that only takes tuples of keys. A keyed list has no shape (its items' keys would have to be encoded
to tell them apart: no cheaper than the walk), and then only its parts are remembered: maps whose members
are all owned whole (labels, annotations, a struct of scalar fields) and sets of strings.

Sets are immutable (see :mod:`.fieldpath`: every operation copies on write), so objects may share such
nodes, as a stored entry's ``fieldsV1`` is already shared with the sets read from it.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

from apiserver.fieldmanager.fieldpath import SELF, Node, pe_order
from apiserver.fieldmanager.typed import METADATA, STRIPPED_META, first_index, item_pes, root_skip
from apiserver.fieldmanager.typeinfo import LIST, MAP, OBJECT_META, TypeNode

__all__ = ["created_fields"]

_F_METADATA: Final = "f:" + METADATA
_MEMO_SIZE: Final = 128
"""Shapes remembered per type before its memo starts over (a kind's objects repeat few)."""

Shape = tuple[Any, ...]
"""Equal shapes of one type, equal sets. Empty: an empty set. A map whose members are all owned whole: its
keys. Another map: a tuple of its keys, then the shape of each member not owned whole. A set of strings:
``None``, then its strings. None of these equals another (keys are strings, never a tuple or ``None``)."""

_EMPTY: Final[Shape] = ()


def created_fields(
    live: dict[str, Any], new: dict[str, Any], root: TypeNode, ignored: Collection[str] = ()
) -> Node | None:
    """``Compare(live, new)``'s added set when ``live`` holds nothing a set can name (a create: the empty
    object, or a built-in kind's zero value, whose only member is the stripped ``creationTimestamp``),
    else None; in FieldsV1's order, so that it is its own encoding. Stripped and ``ignored`` top-level
    fields are left out, as in every set. The result may be shared: never change it.

    Raises :class:`~apiserver.fieldmanager.typed.TypedError` when a list item of ``new`` cannot be keyed.
    """
    skip = root_skip(ignored)
    if live:
        live_meta = live.get(METADATA)
        if not live.keys() <= skip or (
            isinstance(live_meta, dict) and not live_meta.keys() <= STRIPPED_META
        ):
            return None
    meta = new.get(METADATA)
    if not isinstance(meta, dict):
        meta = {}
    shape = _object_shape(root, new, meta, skip)
    memo = root.created
    if shape is not None:
        node = memo.get(shape)
        if node is not None:
            return node
    meta_node = _members(OBJECT_META, meta, STRIPPED_META)
    keys = new.keys() - skip
    if meta_node:
        keys.add(METADATA)
    fields = root.fields
    other = root.other
    node = {}
    for key in sorted(keys):
        if key == METADATA:
            node[_F_METADATA] = meta_node
            continue
        child = fields.get(key) or other
        node["f:" + key] = {} if child.leaf else _created(child, new[key])
    if shape is not None:
        _remember(memo, shape, node)
    return node


def _object_shape(
    root: TypeNode, new: dict[str, Any], meta: dict[str, Any], skip: frozenset[str]
) -> Shape | None:
    """The shape of a whole object, ``skip`` included (None: it has none)."""
    top = _members_shape(root, new, skip)
    if top is None:
        return None
    members = _members_shape(OBJECT_META, meta, STRIPPED_META)
    return None if members is None else (skip, top, members)


def _members_shape(t: TypeNode, value: dict[str, Any], skip: Collection[str]) -> Shape | None:
    """A map's keys, then the shapes of its members not owned whole (those ``skip`` names left out)."""
    parts: list[Shape] = [tuple(value)]
    shape: Shape | None
    if value.keys() <= t.declared:
        # the common case, as the schema has it: only the fields that could be more than a key
        for name, child_type in t.granular:
            if name in skip:
                continue
            child = value.get(name)
            # what _shape finds, without the call for the common members of ObjectMeta
            if child is None:
                shape = _EMPTY
            elif child_type.leaf_values and type(child) is dict:
                shape = tuple(child)  # labels, annotations
            elif child_type.string_items and type(child) is list:
                shape = _strings_shape(child) if child else _EMPTY  # finalizers
            else:
                shape = _shape(child_type, child)
            if shape is None:
                return None
            parts.append(shape)
    else:
        fields = t.fields
        other = t.other
        for key, child in value.items():
            if key in skip:
                continue
            child_type = fields.get(key) or other
            if not child_type.leaf:
                shape = _shape(child_type, child)
                if shape is None:
                    return None
                parts.append(shape)
    return tuple(parts)


def _shape(t: TypeNode, value: Any) -> Shape | None:
    if isinstance(value, dict):
        if t.dict_how != MAP or not value:
            return _EMPTY
        if t.leaf_values or value.keys() <= t.leaf_fields:
            return tuple(value)
        return _members_shape(t, value, ())
    if isinstance(value, list) and value and t.list_how == LIST:
        return _strings_shape(value) if t.string_items else None
    return _EMPTY  # a scalar, a null, an empty list, or a list owned whole


def _strings_shape(items: list[Any]) -> Shape | None:
    """The shape of a set's items owned whole: None unless all are strings (1, 1.0 and True are equal
    but are different items)."""
    for item in items:
        if type(item) is not str:
            return None
    return (None, *items)


def _remember(memo: dict[Shape, Node], shape: Shape, node: Node) -> None:
    if len(memo) >= _MEMO_SIZE:
        memo.clear()
    memo[shape] = node


def _members(t: TypeNode, value: dict[str, Any], skip: Collection[str]) -> Node:
    """The members of a map that is not itself owned (metadata: a declared field)."""
    fields = t.fields
    other = t.other
    node: Node = {}
    for key in sorted(value.keys() - skip):
        child = fields.get(key) or other
        node["f:" + key] = {} if child.leaf else _created(child, value[key])
    return node


def _created(t: TypeNode, value: Any) -> Node:
    """Every path of ``value`` added, as the node for ``value`` itself (``t`` is not ``leaf``)."""
    if isinstance(value, dict):
        if t.dict_how != MAP or not value:
            return {}
        if t.leaf_values or value.keys() <= t.leaf_fields:
            return _owned_keys(t, value)
        node: Node = {SELF: {}}
        fields = t.fields
        other = t.other
        for key in sorted(value):
            child = fields.get(key) or other
            node["f:" + key] = {} if child.leaf else _created(child, value[key])
        return node
    if isinstance(value, list) and value and t.list_how == LIST:
        return _items(t, value)
    return {}  # a scalar, a null, an empty list, or a list owned whole


def _owned_keys(t: TypeNode, value: dict[str, Any]) -> Node:
    """A granular map whose members are all owned whole: ``.`` and its keys, remembered by its keys."""
    keys = tuple(value)
    node = t.created.get(keys)
    if node is None:
        node = {SELF: {}}
        for key in sorted(keys):
            node["f:" + key] = {}
        _remember(t.created, keys, node)
    return node


def _items(t: TypeNode, value: list[Any]) -> Node:
    """A granular list's items, in FieldsV1's order; a set of strings remembered by its strings."""
    shape = _strings_shape(value) if t.string_items else None
    if shape is not None:
        node = t.created.get(shape)
        if node is not None:
            return node
    item = t.item_type()
    first = first_index(item_pes(t, value), strict=False)
    node = {SELF: {}}
    for pe in sorted(first, key=pe_order):  # a repeated item keeps its first place, as compare.go
        node[pe] = {} if item.leaf else _created(item, value[first[pe]])
    if shape is not None:
        _remember(t.created, shape, node)
    return node
