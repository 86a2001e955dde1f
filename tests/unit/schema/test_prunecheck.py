"""``is_pruned`` answers whether ``prune_resource`` would remove anything, without changing the object: it must
agree with the full prune (apiextensions-apiserver pkg/apiserver/schema/pruning/algorithm.go and the ObjectMeta
coercion of schema/objectmeta/coerce.go) for every kind of schema node, or a read would serve a field kube
prunes."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apiserver.schema import is_pruned, prune_nulls, prune_resource
from apiserver.schema.metafields import is_clean
from apiserver.schema.structural import compile_schema
from tests.unit.schema.test_pruning import crd_samples, obj_schema

EMBEDDED = {
    "type": "object",
    "x-kubernetes-embedded-resource": True,
    "properties": {"spec": obj_schema(replicas={"type": "integer"})},
}
PRESERVED = {
    "type": "object",
    "x-kubernetes-preserve-unknown-fields": True,
    "properties": {"known": obj_schema(a={"type": "string"})},
}
ITEMS = obj_schema(name={"type": "string"}, inner=obj_schema(a={"type": "string"}))

# one schema per kind of node the prune walks
SCHEMAS: dict[str, dict[str, Any]] = {
    "properties": obj_schema(spec=obj_schema(a={"type": "string"}, n={"type": "integer"})),
    "array of objects": obj_schema(spec=obj_schema(list={"type": "array", "items": ITEMS})),
    "array without items": obj_schema(spec=obj_schema(list={"type": "array"})),
    "additionalProperties schema": obj_schema(
        spec={"type": "object", "additionalProperties": obj_schema(value={"type": "string"})}
    ),
    "additionalProperties true": obj_schema(spec={"type": "object", "additionalProperties": True}),
    "additionalProperties false": obj_schema(
        spec={"type": "object", "additionalProperties": False}
    ),
    "preserve below": obj_schema(spec=PRESERVED),
    "preserve at the root": {**PRESERVED, "properties": {"spec": obj_schema(a={"type": "string"})}},
    "preserve array": obj_schema(
        spec={"type": "array", "x-kubernetes-preserve-unknown-fields": True, "items": ITEMS}
    ),
    "embedded resource": obj_schema(spec=obj_schema(template=EMBEDDED)),
    "embedded resources in an array": obj_schema(
        spec=obj_schema(items={"type": "array", "items": EMBEDDED})
    ),
    "embedded resources in a map": obj_schema(
        spec={"type": "object", "additionalProperties": EMBEDDED}
    ),
    "scalar": obj_schema(spec=obj_schema(n={"type": "integer"}, s={"type": "string"})),
}

KEYS = st.sampled_from(
    [
        "a",
        "n",
        "s",
        "list",
        "name",
        "inner",
        "known",
        "value",
        "template",
        "items",
        "spec",
        "replicas",
        "apiVersion",
        "kind",
        "metadata",
        "bogus",
        "x",
    ]
)
META_KEYS = st.sampled_from(
    ["name", "labels", "ownerReferences", "managedFields", "uid", "bogusMeta", "clusterName"]
)


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(children, max_size=3), st.dictionaries(KEYS, children, max_size=4))


VALUES = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(max_size=3)), _containers, max_leaves=12
)
METADATA = st.dictionaries(
    META_KEYS,
    st.one_of(
        VALUES, st.lists(st.dictionaries(st.sampled_from(["uid", "bogus"]), VALUES), max_size=2)
    ),
    max_size=4,
)
OBJECTS = st.fixed_dictionaries(
    {"apiVersion": st.just("x/v1"), "kind": st.just("X")},
    optional={"metadata": METADATA, "spec": VALUES, "bogus": VALUES},
)


def _agrees(obj: dict[str, Any], schema: dict[str, Any]) -> bool:
    before = copy.deepcopy(obj)
    answer = is_pruned(obj, schema)
    assert obj == before  # the check leaves the object as it is
    pruned = copy.deepcopy(obj)
    removed = prune_resource(pruned, schema)
    assert answer == (not removed) == (pruned == before), (removed, obj)
    return answer


@pytest.mark.parametrize(
    ("name", "schema", "obj", "clean"),
    [
        ("declared", SCHEMAS["properties"], {"spec": {"a": "x", "n": 1}}, True),
        ("unknown member", SCHEMAS["properties"], {"spec": {"a": "x", "b": 1}}, False),
        ("unknown at the root", SCHEMAS["properties"], {"status": {}}, False),
        ("meta fields below the root", SCHEMAS["properties"], {"spec": {"kind": "x"}}, False),
        ("object where a scalar is declared", SCHEMAS["scalar"], {"spec": {"n": {"a": 1}}}, False),
        ("empty object where a scalar is", SCHEMAS["scalar"], {"spec": {"n": {}}}, True),
        ("item member", SCHEMAS["array of objects"], {"spec": {"list": [{"bogus": 1}]}}, False),
        ("nested item member", SCHEMAS["array of objects"], {"spec": {"list": [{"inner": {"b": 1}}]}}, False),
        ("items without a schema", SCHEMAS["array without items"], {"spec": {"list": [{"a": 1}]}}, False),
        ("scalars without a schema", SCHEMAS["array without items"], {"spec": {"list": [1, "a"]}}, True),
        ("map value", SCHEMAS["additionalProperties schema"], {"spec": {"k": {"value": "v", "b": 1}}}, False),
        ("map key", SCHEMAS["additionalProperties schema"], {"spec": {"k": {"value": "v"}}}, True),
        ("true keeps keys", SCHEMAS["additionalProperties true"], {"spec": {"k": "v"}}, True),
        ("true prunes inside", SCHEMAS["additionalProperties true"], {"spec": {"o": {"x": 1}}}, False),
        ("false keeps keys", SCHEMAS["additionalProperties false"], {"spec": {"k": "v"}}, True),
        ("preserved unknowns", SCHEMAS["preserve below"], {"spec": {"free": {"x": [{"y": 1}]}}}, True),
        ("preserved, declared pruned", SCHEMAS["preserve below"], {"spec": {"known": {"b": 1}}}, False),
        ("preserved root", SCHEMAS["preserve at the root"], {"status": {"x": 1}}, True),
        ("preserved root, declared", SCHEMAS["preserve at the root"], {"spec": {"b": 1}}, False),
        ("preserved array", SCHEMAS["preserve array"], {"spec": [{"free": 1}]}, True),
        ("preserved array, declared", SCHEMAS["preserve array"], {"spec": [{"inner": {"b": 1}}]}, False),
        ("embedded meta kept", SCHEMAS["embedded resource"], {"spec": {"template": {"kind": "P", "metadata": {"name": "a"}}}}, True),
        ("embedded member", SCHEMAS["embedded resource"], {"spec": {"template": {"bogus": 1}}}, False),
        ("embedded metadata", SCHEMAS["embedded resource"], {"spec": {"template": {"metadata": {"bogus": 1}}}}, False),
        ("embedded in an array", SCHEMAS["embedded resources in an array"], {"spec": {"items": [{"metadata": {"x": 1}}]}}, False),
        ("embedded in a map", SCHEMAS["embedded resources in a map"], {"spec": {"k": {"metadata": {"ownerReferences": [{"bogus": 1}]}}}}, False),
        ("ObjectMeta", SCHEMAS["properties"], {"metadata": {"name": "a", "labels": {"x": "y"}}}, True),
        ("ObjectMeta member", SCHEMAS["properties"], {"metadata": {"clusterName": "a"}}, False),
        ("owner reference", SCHEMAS["properties"], {"metadata": {"ownerReferences": [{"uid": "u", "x": 1}]}}, False),
        ("managed fields entry", SCHEMAS["properties"], {"metadata": {"managedFields": [{"manager": "m", "x": 1}]}}, False),
        ("malformed metadata", SCHEMAS["properties"], {"metadata": "text"}, True),
    ],
)  # fmt: skip
def test_each_rule_of_the_prune(
    name: str, schema: dict[str, Any], obj: dict[str, Any], clean: bool
) -> None:
    assert _agrees({"apiVersion": "x/v1", "kind": "X", **obj}, schema) is clean, name


@pytest.mark.parametrize(
    ("name", "obj", "schema"), crd_samples(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_published_examples_of_real_crds_are_clean_and_any_added_member_is_not(
    name: str, obj: dict[str, Any], schema: dict[str, Any]
) -> None:
    assert _agrees(obj, schema)
    for mapping in _mappings(obj):
        mapping["zzBogus"] = 1
        _agrees(obj, schema)
        del mapping["zzBogus"]


def _mappings(value: Any) -> list[dict[str, Any]]:
    """Every object inside ``value``, outermost first."""
    if isinstance(value, dict):
        return [value, *(m for child in value.values() for m in _mappings(child))]
    if isinstance(value, list):
        return [m for child in value for m in _mappings(child)]
    return []


NULL_SCHEMAS = {
    **SCHEMAS,
    "nullable and defaulted": obj_schema(
        spec=obj_schema(
            a={"type": "string", "nullable": True},
            n={"type": "integer", "default": 1},
            s={"type": "string"},
            inner=obj_schema(a={"type": "string"}),
        )
    ),
    "metadata with members": {
        **obj_schema(spec=obj_schema(a={"type": "string"})),
        "properties": {
            "metadata": obj_schema(name={"type": "string"}),
            "spec": obj_schema(a={"type": "string"}),
        },
    },
}


@pytest.mark.parametrize("schema", NULL_SCHEMAS.values(), ids=NULL_SCHEMAS.keys())
@settings(max_examples=80, deadline=None)
@given(obj=OBJECTS)
def test_the_checks_agree_with_the_prune_and_the_drop_of_nulls_on_any_object(
    schema: dict[str, Any], obj: dict[str, Any]
) -> None:
    """``is_pruned`` answers as the prune; a clean object is left as it is by the prune and the nulls'
    drop."""
    _agrees(obj, schema)
    compiled = compile_schema(schema)
    before = copy.deepcopy(obj)
    if is_clean(obj, compiled):
        assert obj == before
        assert prune_resource(obj, compiled) == [] and obj == before
        prune_nulls(obj, compiled)
        assert obj == before


@pytest.mark.parametrize(
    ("schema", "spec", "clean"),
    [
        ("nullable and defaulted", {"s": "x", "inner": {"a": "y"}}, True),
        ("nullable and defaulted", {"s": None}, False),
        ("nullable and defaulted", {"inner": {"a": None}}, False),
        ("nullable and defaulted", {"a": None}, False),  # kept, but the prune is asked
        ("preserve below", {"known": {"a": None}}, False),
        ("embedded resource", {"template": {"spec": {}}}, False),  # not answered: unsure
        ("metadata with members", {"a": "x"}, False),
    ],
)
def test_which_objects_are_clean(schema: str, spec: dict[str, Any], clean: bool) -> None:
    obj = {"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"}, "spec": spec}
    assert is_clean(obj, compile_schema(NULL_SCHEMAS[schema])) is clean
