"""A resource schema compiled into the type tree the field manager walks objects with.

This is what k8s.io/kube-openapi pkg/schemaconv/openapi.go (``ToSchemaFromOpenAPI``) makes of a CRD's
OpenAPI v3 schema for structured-merge-diff, reduced to what ownership depends on:

* lists are atomic unless ``x-kubernetes-list-type`` is ``set`` or ``map`` (with
  ``x-kubernetes-list-map-keys``); without a list type, ``x-kubernetes-patch-strategy: merge`` makes a
  set, or a map keyed by ``x-kubernetes-patch-merge-key`` (``getListElementRelationship``);
* objects are granular unless ``x-kubernetes-map-type: atomic``;
* keys an object does not declare take the type of ``additionalProperties``, or are *deduced* from
  their value (maps granular, lists atomic) when ``additionalProperties`` is ``true``, when the object
  declares no properties, or below ``x-kubernetes-preserve-unknown-fields``;
* a schema without ``type`` accepts a scalar, a list or a map, whichever the value is.

``metadata`` at the root is always ``ObjectMeta``, as the apiextensions OpenAPI builder makes it for
CRDs: ``labels`` and ``annotations`` are granular maps, ``finalizers`` a set, ``ownerReferences`` a map
keyed by ``uid`` of atomic items, ``managedFields`` atomic.

Compiled trees are cached by schema identity, like :func:`apiserver.schema.compile_schema`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final

from apiserver.schema.structural import Schema

__all__ = [
    "ATOMIC",
    "DEDUCED",
    "KEYED",
    "LEAF",
    "LIST",
    "MAP",
    "OBJECT_META",
    "SET",
    "UNTYPED_ATOMIC",
    "TypeNode",
    "compile_types",
]

# How a value is walked (TypeNode.how).
MAP: Final = 0
LIST: Final = 1
LEAF: Final = 2

# List kinds (TypeNode.list_kind).
ATOMIC: Final = 0
SET: Final = 1
KEYED: Final = 2


class TypeNode:
    """One type: which of scalar, list and map it accepts, and how each is owned."""

    __slots__ = (
        "created",
        "declared",
        "dict_how",
        "elem",
        "fields",
        "granular",
        "item",
        "key_defaults",
        "keys",
        "leaf",
        "leaf_fields",
        "leaf_values",
        "list_how",
        "list_kind",
        "null_how",
        "other",
        "scalar",
        "sorted_keys",
        "string_items",
    )

    def __init__(self) -> None:
        self.scalar: bool = False
        # Map facet: declared fields, the type of other keys, and how a dict value is walked.
        self.fields: dict[str, TypeNode] = {}
        self.elem: TypeNode | None = None
        self.dict_how: int = LEAF
        # List facet.
        self.list_kind: int = ATOMIC
        self.item: TypeNode | None = None
        self.keys: tuple[str, ...] = ()
        self.sorted_keys: tuple[str, ...] = ()  # as they appear in a serialized key (k:{...})
        self.key_defaults: dict[str, Any] = {}
        self.list_how: int = LEAF
        # A JSON null is walked as an empty granular map or list when the type has one (SMD handles
        # the Map facet first, then Scalar, then List), else it is a leaf.
        self.null_how: int = LEAF
        # Derived by ``_finish`` so the walks need not re-derive them at every value: the type of
        # undeclared keys, whether every value is owned whole (``how`` is always ``LEAF``), and
        # whether this is a granular map of such values alone (labels, annotations).
        self.other: TypeNode = self
        self.leaf: bool = True
        self.leaf_values: bool = False
        self.string_items: bool = False  # a set of values owned whole (finalizers, tags)
        self.leaf_fields: frozenset[str] = frozenset()  # the declared fields owned whole
        self.declared: frozenset[str] = frozenset()  # every declared field
        self.granular: tuple[tuple[str, TypeNode], ...] = ()  # the declared fields not owned whole
        # A create's sets of values of this type, by their shape (:mod:`.created`).
        self.created: dict[tuple[Any, ...], dict[str, Any]] = {}

    def how(self, value: Any) -> int:
        """``MAP``, ``LIST`` or ``LEAF``: whether ``value`` is walked into or owned as a whole."""
        if isinstance(value, dict):
            return self.dict_how
        if isinstance(value, list):
            return self.list_how
        if value is None:
            return self.null_how
        return LEAF

    def field(self, name: str) -> tuple[TypeNode, bool]:
        """The type of member ``name`` and whether it is a declared (named) field."""
        declared = self.fields.get(name)
        if declared is not None:
            return declared, True
        return self.other, False

    def item_type(self) -> TypeNode:
        return self.item if self.item is not None else UNTYPED_ATOMIC


def _finish(node: TypeNode, has_map: bool, map_atomic: bool, has_list: bool) -> TypeNode:
    node.dict_how = MAP if has_map and not map_atomic else LEAF
    node.list_how = LIST if has_list and node.list_kind != ATOMIC else LEAF
    if has_map:
        node.null_how = node.dict_how
    elif node.scalar:
        node.null_how = LEAF
    elif has_list:
        node.null_how = node.list_how
    return _derive(node)


def _derive(node: TypeNode) -> TypeNode:
    """Set the derived attributes of ``node`` (after its facets, or its ``fields``, changed)."""
    node.other = node.elem if node.elem is not None else DEDUCED
    node.leaf = node.dict_how == node.list_how == node.null_how == LEAF
    node.leaf_values = node.dict_how == MAP and not node.fields and node.other.leaf
    node.string_items = node.list_how == LIST and node.list_kind == SET and node.item_type().leaf
    node.leaf_fields = frozenset(name for name, field in node.fields.items() if field.leaf)
    node.declared = frozenset(node.fields)
    node.granular = tuple((name, field) for name, field in node.fields.items() if not field.leaf)
    return node


def _make_untyped_atomic() -> TypeNode:
    # schema/elements.go "__untyped_atomic_": everything owned as a whole.
    node = TypeNode()
    node.scalar = True
    node.item = node
    node.elem = node
    return _finish(node, has_map=True, map_atomic=True, has_list=True)


def _make_deduced() -> TypeNode:
    # schema/elements.go "__untyped_deduced_": maps granular with deduced values, lists atomic.
    node = TypeNode()
    node.scalar = True
    node.elem = node
    node.item = UNTYPED_ATOMIC
    return _finish(node, has_map=True, map_atomic=False, has_list=True)


UNTYPED_ATOMIC: Final = _make_untyped_atomic()
DEDUCED: Final = _make_deduced()

_SCALAR_TYPES: Final = frozenset({"string", "integer", "number", "boolean"})


def _list_relationship(raw: Mapping[str, Any]) -> tuple[int, tuple[str, ...]]:
    list_type = raw.get("x-kubernetes-list-type")
    if list_type is not None:
        if list_type == "set":
            return SET, ()
        if list_type == "map":
            keys = raw.get("x-kubernetes-list-map-keys")
            names = tuple(k for k in keys if isinstance(k, str)) if isinstance(keys, list) else ()
            # A map without keys is rejected by CRD validation; own it whole rather than guess.
            return (KEYED, names) if names else (ATOMIC, ())
        return ATOMIC, ()
    strategy = raw.get("x-kubernetes-patch-strategy")
    if strategy in ("merge", "merge,retainKeys"):
        key = raw.get("x-kubernetes-patch-merge-key")
        if isinstance(key, str):
            return KEYED, (key,)
        return SET, ()
    return ATOMIC, ()


def _compile(raw: Mapping[str, Any], preserve: bool) -> TypeNode:
    if raw.get("x-kubernetes-preserve-unknown-fields") is True:
        preserve = True
    node = TypeNode()
    declared = raw.get("type")
    typ = declared if isinstance(declared, str) else ""
    if raw.get("x-kubernetes-int-or-string") is True or typ in _SCALAR_TYPES:
        node.scalar = True
        return _finish(node, has_map=False, map_atomic=False, has_list=False)
    has_map = typ in ("object", "")
    has_list = typ in ("array", "")
    node.scalar = typ == ""
    map_atomic = False
    if has_map:
        props = raw.get("properties")
        if isinstance(props, Mapping):
            node.fields = {
                name: _compile(sub, preserve)
                for name, sub in props.items()
                if isinstance(sub, Mapping)
            }
        additional = raw.get("additionalProperties")
        if isinstance(additional, Mapping):
            node.elem = _compile(additional, preserve)
        elif additional is True or (additional is None and (preserve or not node.fields)):
            node.elem = DEDUCED
        map_atomic = raw.get("x-kubernetes-map-type") == "atomic"
    if has_list:
        node.list_kind, node.keys = _list_relationship(raw)
        node.sorted_keys = tuple(sorted(node.keys))
        items = raw.get("items")
        node.item = _compile(items, preserve) if isinstance(items, Mapping) else UNTYPED_ATOMIC
        if node.keys:
            node.key_defaults = {
                key: sub.raw_default
                for key in node.keys
                if (sub := _key_schema(items, key)) is not None and sub.has_default
            }
    return _finish(node, has_map, map_atomic, has_list)


class _KeySchema:
    __slots__ = ("has_default", "raw_default")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.has_default = "default" in raw
        self.raw_default = raw.get("default")


def _key_schema(items: Any, key: str) -> _KeySchema | None:
    # typed/helpers.go getAssociativeKeyDefault: the default of the key field in the item schema.
    if not isinstance(items, Mapping):
        return None
    props = items.get("properties")
    if not isinstance(props, Mapping):
        return None
    sub = props.get(key)
    return _KeySchema(sub) if isinstance(sub, Mapping) else None


_STRING: Final[Mapping[str, Any]] = {"type": "string"}
_OBJECT_META_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "annotations": {"type": "object", "additionalProperties": _STRING},
        "creationTimestamp": _STRING,
        "deletionGracePeriodSeconds": {"type": "integer"},
        "deletionTimestamp": _STRING,
        "finalizers": {"type": "array", "items": _STRING, "x-kubernetes-list-type": "set"},
        "generateName": _STRING,
        "generation": {"type": "integer"},
        "labels": {"type": "object", "additionalProperties": _STRING},
        "managedFields": {
            "type": "array",
            "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "x-kubernetes-list-type": "atomic",
        },
        "name": _STRING,
        "namespace": _STRING,
        "ownerReferences": {
            "type": "array",
            "items": {
                "type": "object",
                "x-kubernetes-map-type": "atomic",
                "properties": {
                    "apiVersion": _STRING,
                    "blockOwnerDeletion": {"type": "boolean"},
                    "controller": {"type": "boolean"},
                    "kind": _STRING,
                    "name": _STRING,
                    "uid": _STRING,
                },
            },
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["uid"],
        },
        "resourceVersion": _STRING,
        "selfLink": _STRING,
        "uid": _STRING,
    },
}

OBJECT_META: Final = _compile(_OBJECT_META_SCHEMA, preserve=False)
"""``io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`` (checked against the apps/v1 OpenAPI v3 document)."""

_TYPE_META: Final = frozenset({"apiVersion", "kind"})
_CACHE_SIZE: Final = 512
_cache: OrderedDict[int, tuple[Mapping[str, Any], TypeNode]] = OrderedDict()
_last: tuple[Mapping[str, Any], TypeNode] | None = None


def compile_types(schema: Mapping[str, Any] | Schema) -> TypeNode:
    """The type tree of a whole resource schema (``openAPIV3Schema``), cached by identity; the one asked
    for last without the LRU's reordering (writes of one kind follow each other)."""
    global _last
    raw = schema.raw if isinstance(schema, Schema) else schema
    if _last is not None and _last[0] is raw:
        return _last[1]
    key = id(raw)
    hit = _cache.get(key)
    if hit is not None and hit[0] is raw:
        _cache.move_to_end(key)
        _last = hit
        return hit[1]
    root = _compile(raw, preserve=False)
    root.fields = {**root.fields, "metadata": OBJECT_META}
    root.dict_how = MAP  # the object itself is always walked into
    _derive(root)
    root.declared |= _TYPE_META  # every kind has them, declared or not (and nobody owns them)
    _last = _cache[key] = (raw, root)
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return root
