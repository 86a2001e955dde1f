"""Field paths, field sets and their ``FieldsV1`` wire form.

The analog of sigs.k8s.io/structured-merge-diff ``fieldpath`` (element.go, set.go, serialize.go,
serialize-pe.go, path.go). A set is stored *in its FieldsV1 shape*: a dict from serialized path elements
to child nodes, where a child that is itself owned is ``{}`` (a leaf) or carries the ``"."`` key next to
its own children, and a child that only leads to owned fields has no ``"."``::

    {"f:spec": {"f:image": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}}

Keeping that shape means the stored ``managedFields[].fieldsV1`` objects are the sets themselves: decoding
a stored entry costs nothing, and the set operations below return their first operand *unchanged (the
same object)* when they change nothing, so an entry nobody touched is written back as the very object
that was read. Writes happen on every request, so this matters more than a tidier representation.

Path elements are the strings FieldsV1 uses as keys (serialize-pe.go): ``f:<name>`` for a field,
``k:<json object>`` for an item of a list-type map (key fields sorted, Go JSON encoding), ``v:<json>``
for an item of a list-type set, and ``i:<n>`` for an index (which SMD only produces for lists it cannot
key, never for the atomic lists kube owns as a whole). Producing them canonically makes string equality
the same as SMD's ``PathElement.Equals``; client-supplied FieldsV1 is canonicalized when decoded.
Everything here treats sets as immutable.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any, Final, TypeAlias

import orjson

from apiserver.encoding.limits import load_json
from apiserver.schema.causes import go_json, go_quote, go_value

__all__ = [
    "SELF",
    "FieldSet",
    "FieldsV1Error",
    "Node",
    "Path",
    "decode_fields_v1",
    "encode_fields_v1",
    "path_string",
]

Node: TypeAlias = dict[str, "Node"]
"""One level of a set in FieldsV1 shape (see the module docstring)."""

Path: TypeAlias = tuple[str, ...]
"""A field path as a tuple of serialized path elements, e.g. ``("f:spec", 'k:{"name":"a"}')``."""

SELF: Final = "."
"""The FieldsV1 key saying "this node is itself in the set" (serialize.go ``emitContentsV1``)."""


class FieldsV1Error(ValueError):
    """FieldsV1 that SMD's ``Set.FromJSON`` would reject."""


def is_member(node: Mapping[str, Any]) -> bool:
    """Whether the path leading to ``node`` is itself in the set (a leaf, or one marked ``"."``)."""
    return not node or SELF in node


def has_children(node: Mapping[str, Any]) -> bool:
    """Whether ``node`` leads to further members."""
    return len(node) > (1 if SELF in node else 0)


def _normalize(node: Node, member: bool) -> Node | None:
    """``node`` made canonical for the membership ``member``: ``{}`` for a childless member, ``"."``
    present exactly when a node with children is a member, ``None`` when nothing is left."""
    children = has_children(node)
    if not children:
        if not member:
            return None
        return node if not node else {}
    if member == (SELF in node):
        return node
    out = dict(node)
    if member:
        out[SELF] = {}
    else:
        del out[SELF]
    return out


# --- set algebra on children maps -----------------------------------------------------------------
# The ``_c_*`` functions combine the children of two nodes (keys other than ``"."``) and keep the first
# operand's own ``"."`` untouched, so they also serve for the root of a set, which is never a member.
# The ``_n_*`` functions combine two child nodes including their membership. All return the first
# operand itself when the result equals it.


def _c_union(a: Node, b: Node) -> Node:
    out: Node | None = None
    for key, b_child in b.items():
        if key == SELF:
            continue
        a_child = a.get(key)
        merged = b_child if a_child is None else _n_union(a_child, b_child)
        if merged is not a_child:
            if out is None:
                out = dict(a)
            out[key] = merged
    return a if out is None else out


def _n_union(a: Node, b: Node) -> Node:
    if a is b:
        return a
    member = is_member(a) or is_member(b)
    out = _c_union(a, b)
    result = _normalize(out, member)
    assert result is not None  # a union of non-empty nodes is never empty
    return result


def _c_difference(a: Node, b: Node) -> Node:
    out: Node | None = None
    small, large = (a, b) if len(a) < len(b) else (b, a)
    for key in small:
        if key == SELF or key not in large:
            continue
        a_child = a[key]
        reduced = _n_difference(a_child, b[key])
        if reduced is not a_child:
            if out is None:
                out = dict(a)
            if reduced is None:
                del out[key]
            else:
                out[key] = reduced
    return a if out is None else out


def _n_difference(a: Node, b: Node) -> Node | None:
    member = is_member(a) and not is_member(b)
    return _normalize(_c_difference(a, b), member)


def _c_intersection(a: Node, b: Node) -> Node:
    out: Node = {}
    small, large = (a, b) if len(a) < len(b) else (b, a)
    for key in small:
        if key == SELF or key not in large:
            continue
        both = _n_intersection(a[key], b[key])
        if both is not None:
            out[key] = both
    return out


def _n_intersection(a: Node, b: Node) -> Node | None:
    return _normalize(_c_intersection(a, b), is_member(a) and is_member(b))


def _c_recursive_difference(a: Node, b: Node) -> Node:
    out: Node | None = None
    for key, b_child in b.items():
        if key == SELF or key not in a:
            continue
        a_child = a[key]
        reduced = (
            None
            if is_member(b_child)
            else _normalize(_c_recursive_difference(a_child, b_child), is_member(a_child))
        )
        if reduced is not a_child:
            if out is None:
                out = dict(a)
            if reduced is None:
                del out[key]
            else:
                out[key] = reduced
    return a if out is None else out


# --- path elements ---------------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def _parsed(pe: str) -> Any:
    return load_json(pe[2:])


def _value_order(value: Any) -> tuple[Any, ...]:
    """A sort key reproducing SMD ``value.Compare``: numbers (compared numerically) < strings <
    booleans < lists < maps < null."""
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, int | float):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    if isinstance(value, list):
        return (3, tuple(_value_order(v) for v in value))
    if isinstance(value, dict):
        return (4, tuple((k, _value_order(value[k])) for k in sorted(value)))
    return (5,)


@lru_cache(maxsize=65536)
def pe_order(pe: str) -> tuple[Any, ...]:
    """The sort key of a path element: SMD ``PathElement.Compare`` orders fields < keys < values <
    indexes, fields by name, keys field by field, values by ``value.Compare``."""
    kind = pe[0]
    if kind == "f":
        return (0, pe[2:])
    if kind == "k":
        fields = _parsed(pe)
        return (1, tuple((name, _value_order(fields[name])) for name in sorted(fields)))
    if kind == "v":
        return (2, _value_order(_parsed(pe)))
    return (3, int(pe[2:]))


def _to_string(value: Any) -> str:
    # SMD value.ToString: strings %q, numbers and booleans %v, lists bracketed, maps as k=v pairs.
    if value is None:
        return "null"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool | int | float):
        return go_value(value)
    if isinstance(value, list):
        return "[" + ",".join(_to_string(v) for v in value) + "]"
    if isinstance(value, dict):
        return "".join(f"{k}={_to_string(value[k])}" for k in sorted(value))
    return str(value)


def pe_string(pe: str) -> str:
    """SMD ``PathElement.String``: ``.name``, ``[k=v,...]``, ``[=v]`` or ``[i]``."""
    kind = pe[0]
    if kind == "f":
        return "." + pe[2:]
    if kind == "k":
        fields = _parsed(pe)
        return "[" + ",".join(f"{name}={_to_string(fields[name])}" for name in sorted(fields)) + "]"
    if kind == "v":
        return "[=" + _to_string(_parsed(pe)) + "]"
    return "[" + pe[2:] + "]"


def path_string(path: Path) -> str:
    """A path the way kube prints it in conflicts: ``.spec.containers[name="nginx"].image``."""
    return "".join(pe_string(pe) for pe in path)


def _canonical_pe(key: str) -> str | None:
    """``key`` re-serialized canonically (serialize-pe.go ``DeserializePathElement`` then
    ``SerializePathElement``); ``None`` for an unknown element type, which SMD drops."""
    if len(key) < 2:
        raise FieldsV1Error(f"key must be 2 characters long: {key}")
    if key[1] != ":":
        raise FieldsV1Error(f"missing colon: {key}")
    kind = key[0]
    if kind == "f":
        return key
    if kind in ("k", "v"):
        try:
            value = load_json(key[2:])
        except orjson.JSONDecodeError as err:
            raise FieldsV1Error(f"parsing key as path element: {err}") from None
        if kind == "k":
            if not isinstance(value, dict):
                raise FieldsV1Error(f"parsing key as path element: not an object: {key}")
            return "k:" + go_json(value)
        return "v:" + go_json(value)
    if kind == "i":
        try:
            return f"i:{int(key[2:])}"
        except ValueError:
            raise FieldsV1Error(f"parsing key as path element: {key}") from None
    return None


def _decode_node(raw: Any) -> tuple[Node, bool]:
    # readIterV1: a value with no (understood) children is a member; "." marks a member with children.
    if not isinstance(raw, dict):
        raise FieldsV1Error(f"expected an object, got {go_json(raw)}")
    member = False
    out: Node = {}
    for key, value in raw.items():
        if key == SELF:
            member = True
            continue
        pe = _canonical_pe(key)
        if pe is None:
            continue
        child, child_member = _decode_node(value)
        node = _normalize(child, child_member)
        if node is None:
            continue
        previous = out.get(pe)
        out[pe] = node if previous is None else _n_union(previous, node)
    if not out:
        member = True
    return out, member


def decode_fields_v1(raw: Any) -> Node:
    """Canonical children of the root for a client-supplied ``fieldsV1`` (``None`` is empty)."""
    if raw is None:
        return {}
    root, _ = _decode_node(raw)
    return root


def _sorted(node: Node, source: Node | None) -> Node:
    # Subtrees that are still the (canonical) ones of ``source`` are reused as they are, so encoding
    # a set derived from a stored one costs what changed, not the size of the set. Path elements
    # sort as plain strings by kind ("." < "f:" < "i:" < "k:" < "v:") and fields by name, so a plain
    # sort is SMD's order unless a key, value or index is present; only then is ``pe_order`` needed.
    keys = sorted(node)
    out: Node = {}
    if keys[0] == SELF:
        del keys[0]
        if not keys:
            return out
        out[SELF] = {}
    if keys[-1][0] != "f":
        keys.sort(key=pe_order)
    for key in keys:
        child = node[key]
        if not child:
            out[key] = {}
            continue
        previous = source.get(key) if source is not None else None
        out[key] = child if child is previous else _sorted(child, previous)
    return out


def encode_fields_v1(root: Node, source: Node | None = None) -> Node:
    """The ``fieldsV1`` object for a set, keys in SMD's order (``"."`` first, then path elements).

    ``source`` is a canonical ``fieldsV1`` the set was derived from; parts shared with it are reused.
    """
    if root is source:
        return root
    return _sorted(root, source) if root else {}


def _iterate(node: Node, prefix: Path) -> Iterator[Path]:
    # Set.Iterate: the members of a level (in order), then each child's subtree (in order).
    keys = sorted((k for k in node if k != SELF), key=pe_order)
    for key in keys:
        if is_member(node[key]):
            yield (*prefix, key)
    for key in keys:
        child = node[key]
        if has_children(child):
            yield from _iterate(child, (*prefix, key))


class FieldSet:
    """An immutable set of field paths (SMD ``fieldpath.Set``).

    ``root`` is the FieldsV1-shaped children map of the root. Trusted, already canonical maps (those
    this package produced) are wrapped as they are; use :meth:`from_fields_v1` for anything else.
    """

    __slots__ = ("root",)

    def __init__(self, root: Node | None = None) -> None:
        self.root: Node = {} if root is None else root

    @classmethod
    def from_fields_v1(cls, fields: Any) -> FieldSet:
        """Decode a ``fieldsV1`` object, canonicalizing its keys; raises :class:`FieldsV1Error`."""
        return cls(decode_fields_v1(fields))

    @classmethod
    def from_paths(cls, *paths: Path) -> FieldSet:
        """A set holding exactly ``paths``."""
        root: Node = {}
        for path in paths:
            node: Node = {}
            for pe in reversed(path[1:]):
                node = {pe: node}
            root = _c_union(root, {path[0]: node}) if path else root
        return cls(root)

    def to_fields_v1(self) -> Node:
        """The canonical ``fieldsV1`` object (a new dict)."""
        return encode_fields_v1(self.root)

    def union(self, other: FieldSet) -> FieldSet:
        return FieldSet(_c_union(self.root, other.root))

    def difference(self, other: FieldSet) -> FieldSet:
        return FieldSet(_c_difference(self.root, other.root))

    def intersection(self, other: FieldSet) -> FieldSet:
        return FieldSet(_c_intersection(self.root, other.root))

    def recursive_difference(self, other: FieldSet) -> FieldSet:
        """The paths not in ``other`` and not below a path in ``other``."""
        return FieldSet(_c_recursive_difference(self.root, other.root))

    def has(self, path: Path) -> bool:
        node = self.root
        for pe in path:
            child = node.get(pe) if pe != SELF else None
            if child is None:
                return False
            node = child
        return bool(path) and is_member(node)

    def paths(self) -> Iterator[Path]:
        """Every path, in SMD's ``Set.Iterate`` order."""
        return _iterate(self.root, ())

    def empty(self) -> bool:
        return not self.root

    def __bool__(self) -> bool:
        return bool(self.root)

    def __len__(self) -> int:
        return sum(1 for _ in self.paths())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldSet) and self.root == other.root

    def __hash__(self) -> int:
        raise TypeError("FieldSet is not hashable")

    def __repr__(self) -> str:
        return f"FieldSet({[path_string(p) for p in self.paths()]!r})"


# Exported for the walkers in this package; they work on raw children maps to avoid wrapping.
c_union = _c_union
c_difference = _c_difference
c_intersection = _c_intersection
c_recursive_difference = _c_recursive_difference
normalize = _normalize
