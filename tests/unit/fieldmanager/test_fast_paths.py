"""The shortcuts of the write path against straightforward references, on random sets and objects:

* ``encode_fields_v1`` sorts with a plain string sort unless a key, value or index is present; the
  reference sorts every level with ``pe_order``;
* ``compare_objects`` skips equal containers and compares leaf-typed members inline; the reference is
  a literal transcription of SMD compare.go's walk (every member visited, ``value.Equals`` on leaves);
* ``update_managed_fields`` keeps the set of a manager that only changed fields it owns; the
  reference is ``(fields - lost) | (taken - removed)`` computed every time;
* a create builds its set in FieldsV1's order in one walk (``created_fields``); the reference is
  ``compare_objects`` against the empty object, encoded.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from fm_schemas import WIDGET, WIDGET_GV
from hypothesis import given, settings
from hypothesis import strategies as st

from apiserver.fieldmanager import update_managed_fields
from apiserver.fieldmanager.created import created_fields
from apiserver.fieldmanager.fieldpath import (
    SELF,
    FieldSet,
    Node,
    c_difference,
    c_union,
    encode_fields_v1,
    pe_order,
)
from apiserver.fieldmanager.typed import (
    STRIPPED_META,
    STRIPPED_ROOT,
    TypedError,
    compare_objects,
    item_pes,
)
from apiserver.fieldmanager.typeinfo import LEAF, MAP, OBJECT_META, TypeNode, compile_types

ROOT = compile_types(WIDGET)
NOW = "2024-01-01T00:00:09Z"

# --- encode_fields_v1 ------------------------------------------------------------------------------

pes = st.one_of(
    st.sampled_from(["f:a", "f:b", "f:B", "f:é", "f:a.b", "f:"]),
    st.builds(lambda n: f"i:{n}", st.integers(0, 12)),
    st.builds(lambda v: "v:" + json.dumps(v), st.one_of(st.integers(-3, 3), st.text(max_size=2))),
    st.builds(
        lambda n, p: 'k:{"name":' + json.dumps(n) + ',"port":' + str(p) + "}",
        st.sampled_from(["a", "b"]),
        st.integers(0, 3),
    ),
)
nodes = st.recursive(
    st.just({}),
    lambda children: st.builds(
        lambda d, member: {**({SELF: {}} if member and d else {}), **d},
        st.dictionaries(pes, children, max_size=5),
        st.booleans(),
    ),
    max_leaves=20,
)


def reference_encode(node: Node) -> Node:
    out: Node = {SELF: {}} if SELF in node else {}
    for key in sorted((k for k in node if k != SELF), key=pe_order):
        out[key] = reference_encode(node[key])
    return out if len(out) > (1 if SELF in out else 0) else {}


@settings(max_examples=300, deadline=None)
@given(nodes)
def test_encoding_matches_a_full_pe_order_sort(root: Node) -> None:
    root.pop(SELF, None)  # the root of a set is never a member
    assert json.dumps(encode_fields_v1(root)) == json.dumps(reference_encode(root))


# --- compare_objects -------------------------------------------------------------------------------

scalars = st.one_of(
    st.none(), st.booleans(), st.sampled_from([0, 1, 2, 1.0, "", "a", "b", "TCP", "UDP"])
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), children, max_size=3),
    ),
    max_leaves=8,
)
string_maps = st.dictionaries(st.sampled_from(["a", "b", "x/y"]), st.sampled_from(["1", "2"]))
specs = st.fixed_dictionaries(
    {},
    optional={
        "replicas": st.one_of(st.integers(0, 2), st.booleans(), st.none()),
        "image": st.sampled_from(["i1", "i2"]),
        "args": st.lists(st.sampled_from(["a", "b"]), max_size=2),
        "tags": st.lists(st.sampled_from(["t1", "t2", 1]), max_size=3, unique=True),
        "ports": st.lists(
            st.fixed_dictionaries(
                {"port": st.sampled_from([80, 443])},
                optional={"protocol": st.sampled_from(["TCP", "UDP"]), "name": st.just("h")},
            ),
            max_size=3,
        ),
        "containers": st.lists(
            st.fixed_dictionaries(
                {"name": st.sampled_from(["c1", "c2", "c3"])},
                optional={"image": st.sampled_from(["i1", "i2"]), "env": string_maps},
            ),
            max_size=3,
            unique_by=lambda c: c["name"],
        ),
        "selector": string_maps,
        "config": string_maps,
        "template": st.fixed_dictionaries({}, optional={"a": st.just("1"), "b": st.just("2")}),
        "extra": values,
    },
)
metas = st.fixed_dictionaries(
    {"name": st.just("w")},
    optional={
        "labels": string_maps,
        "annotations": string_maps,
        "finalizers": st.lists(st.sampled_from(["f1", "f2"]), max_size=2, unique=True),
    },
)
objects = st.fixed_dictionaries(
    {"apiVersion": st.just(WIDGET_GV), "kind": st.just("Widget"), "metadata": metas},
    optional={
        "spec": specs,
        "status": st.fixed_dictionaries({}, optional={"phase": st.sampled_from(["a", "b"])}),
    },
)


def _leaf_equal(a: Any, b: Any) -> bool:
    return a == b and isinstance(a, bool) == isinstance(b, bool)


def _everything(t: TypeNode, value: Any) -> Node:
    how = t.how(value)
    if how == LEAF or not value:
        return {}
    return {**_children(t, how, value), SELF: {}}


def _first_items(t: TypeNode, items: list[Any]) -> dict[str, Any]:
    first: dict[str, Any] = {}
    for pe, item in zip(item_pes(t, items), items, strict=True):
        first.setdefault(pe, item)
    return first


def _children(t: TypeNode, how: int, value: Any) -> Node:
    if how == MAP:
        return {"f:" + k: _everything(t.field(k)[0], v) for k, v in value.items()}
    return {pe: _everything(t.item_type(), item) for pe, item in _first_items(t, value).items()}


def _ref_cmp(t: TypeNode, lhs: Any, rhs: Any, out: tuple[Node, Node, Node], pe: str) -> None:
    added, modified, removed = out
    how, rhs_how = t.how(lhs), t.how(rhs)
    if how != rhs_how:
        modified[pe] = {}
        if how != LEAF and lhs:
            removed[pe] = _children(t, how, lhs)
        if rhs_how != LEAF and rhs:
            added[pe] = _children(t, rhs_how, rhs)
        return
    if how == LEAF or (not lhs and not rhs):
        if not _leaf_equal(lhs, rhs):
            modified[pe] = {}
        return
    if lhs == rhs:  # compare.go's shortcut, kept as the implementation has it
        return
    sub: tuple[Node, Node, Node] = ({}, {}, {})
    if how == MAP:
        _ref_cmp_map(t, lhs or {}, rhs or {}, sub, frozenset())
    else:
        left = _first_items(t, lhs or [])
        right = _first_items(t, rhs or [])
        for key in {**left, **right}:
            if key not in right:
                sub[2][key] = _everything(t.item_type(), left[key])
            elif key not in left:
                sub[0][key] = _everything(t.item_type(), right[key])
            else:
                _ref_cmp(t.item_type(), left[key], right[key], sub, key)
    for part, whole in zip(sub, out, strict=True):
        if part:
            whole[pe] = part


def _ref_cmp_map(
    t: TypeNode, lhs: dict[str, Any], rhs: dict[str, Any], out: tuple[Node, Node, Node], skip: Any
) -> None:
    for key in {**lhs, **rhs}:
        if key in skip:
            continue
        child = t.field(key)[0]
        if key not in rhs:
            out[2]["f:" + key] = _everything(child, lhs[key])
        elif key not in lhs:
            out[0]["f:" + key] = _everything(child, rhs[key])
        else:
            _ref_cmp(child, lhs[key], rhs[key], out, "f:" + key)


def reference_compare(live: dict[str, Any], new: dict[str, Any]) -> tuple[Node, Node, Node]:
    out: tuple[Node, Node, Node] = ({}, {}, {})
    _ref_cmp_map(ROOT, live, new, out, STRIPPED_ROOT | {"metadata", "status"})
    meta: tuple[Node, Node, Node] = ({}, {}, {})
    _ref_cmp_map(OBJECT_META, live.get("metadata", {}), new["metadata"], meta, STRIPPED_META)
    for part, whole in zip(meta, out, strict=True):
        if part:
            whole["f:metadata"] = part
    return out


def _same(a: Node, b: Node) -> bool:
    return FieldSet(a) == FieldSet(b)


@settings(max_examples=300, deadline=None)
@given(objects, objects)
def test_compare_matches_a_literal_walk(live: dict[str, Any], new: dict[str, Any]) -> None:
    got = compare_objects(live, new, ROOT, ("status",))
    want = reference_compare(live, new)
    assert all(_same(g, w) for g, w in zip(got, want, strict=True)), (got, want)


# --- created_fields --------------------------------------------------------------------------------

BLANK_LIVES = [{}, {"metadata": {"creationTimestamp": None}}, {"apiVersion": "v1", "kind": "K"}]
"""What a create compares with: nothing, a built-in kind's Go zero value, or type meta alone."""


def _compared(live: dict[str, Any], new: dict[str, Any], ignored: tuple[str, ...]) -> Any:
    try:
        added, modified, removed = compare_objects(live, new, ROOT, ignored)
    except TypedError as error:
        return type(error)
    assert not modified and not removed
    return json.dumps(encode_fields_v1(added))


@settings(max_examples=300, deadline=None)
@given(objects, st.sampled_from(BLANK_LIVES), st.sampled_from([(), ("status",), ("spec",)]))
def test_a_create_builds_the_compared_set_in_its_encoded_order(
    new: dict[str, Any], live: dict[str, Any], ignored: tuple[str, ...]
) -> None:
    try:
        created = created_fields(live, new, ROOT, ignored)
    except TypedError as error:
        assert _compared(live, new, ignored) is type(error)
        return
    assert created is not None
    # the same members in the same order: the set is its own encoding
    assert (
        json.dumps(created)
        == json.dumps(encode_fields_v1(created))
        == _compared(live, new, ignored)
    )


@settings(max_examples=100, deadline=None)
@given(objects, objects)
def test_a_live_object_with_anything_a_set_names_is_compared_instead(
    live: dict[str, Any], new: dict[str, Any]
) -> None:
    owned = compare_objects({}, live, ROOT, ("status",))[0]
    assert (created_fields(live, new, ROOT, ("status",)) is None) == bool(owned)


# --- update_managed_fields -------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(objects, objects, objects, st.sampled_from(["a", "b"]))
def test_an_update_moves_exactly_what_it_changed(
    first: dict[str, Any], second: dict[str, Any], third: dict[str, Any], manager: str
) -> None:
    def track(old: dict[str, Any] | None, new: dict[str, Any], who: str) -> dict[str, Any]:
        out = copy.deepcopy(new)
        entries = update_managed_fields(
            old, out, WIDGET, who, api_version=WIDGET_GV, now=NOW, ignored_fields=("status",)
        )
        out["metadata"]["managedFields"] = entries
        return json.loads(json.dumps(out))

    live = track(track(None, first, "a"), second, "b")
    result = track(live, third, manager)["metadata"]["managedFields"]
    if not live["metadata"]["managedFields"]:
        assert result == []  # an untracked object stays untracked
        return

    added, modified, removed = reference_compare(live, third)
    taken = c_union(added, modified)
    lost = c_union(taken, removed)
    want: dict[str, Node] = {}
    for entry in live["metadata"]["managedFields"]:
        left = c_difference(FieldSet.from_fields_v1(entry["fieldsV1"]).root, lost)
        if left:
            want[entry["manager"]] = left
    if taken or removed:
        current = c_difference(taken, removed)
        if current:
            want[manager] = c_union(want.get(manager, {}), current)
    else:
        want = {e["manager"]: e["fieldsV1"] for e in live["metadata"]["managedFields"]}
    got = {e["manager"]: e["fieldsV1"] for e in result}
    assert got.keys() == want.keys()
    for who, fields in want.items():
        assert json.dumps(got[who]) == json.dumps(encode_fields_v1(fields)), who
