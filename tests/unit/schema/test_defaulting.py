"""Tests of apiserver.schema.apply_defaults and prune_nulls against the rules of apiextensions-apiserver
pkg/apiserver/schema/defaulting/algorithm.go (Default) and prunenulls.go
(PruneNonNullableNullsWithoutDefaults), and the documented CronTab defaulting example."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from apiserver.schema import apply_defaults, prune, prune_nulls, validate
from apiserver.schema.structural import MISSING, Schema
from tests.serverproc import FIXTURES

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader is 5x faster on big CRDs


def load_yaml(path: Path) -> Any:
    return yaml.load(path.read_text(), Loader=LOADER)


def load_yaml_all(path: Path) -> list[Any]:
    return list(yaml.load_all(path.read_text(), Loader=LOADER))


def obj_schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def test_crontab_defaulting_matches_the_kubernetes_docs() -> None:
    crd = load_yaml(FIXTURES / "crds" / "k8s-docs-crontab" / "crontab-defaulting.yaml")
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    docs = FIXTURES / "custom-resources" / "k8s-docs-crontab"
    obj = load_yaml(docs / "my-crontab-defaulting-input.yaml")
    apply_defaults(obj, schema)
    assert obj == load_yaml(docs / "my-crontab-defaulting-expected.yaml")
    assert validate(obj, schema) == []


def test_defaults_apply_only_inside_objects_that_exist() -> None:
    schema = obj_schema(spec=obj_schema(replicas={"type": "integer", "default": 1}))
    obj: dict[str, Any] = {}
    apply_defaults(obj, schema)
    assert obj == {}
    obj = {"spec": {}}
    apply_defaults(obj, schema)
    assert obj == {"spec": {"replicas": 1}}


def test_a_defaulted_object_is_defaulted_further() -> None:
    schema = obj_schema(
        spec={"type": "object", "default": {}, "properties": {"replicas": {"default": 1}}}
    )
    obj: dict[str, Any] = {}
    apply_defaults(obj, schema)
    assert obj == {"spec": {"replicas": 1}}


def test_existing_values_are_kept_even_when_falsy() -> None:
    schema = obj_schema(a={"default": 5}, b={"default": "x"}, c={"default": True})
    obj = {"a": 0, "b": "", "c": False}
    apply_defaults(obj, schema)
    assert obj == {"a": 0, "b": "", "c": False}


def test_null_counts_as_missing_unless_nullable() -> None:
    schema = obj_schema(
        a={"type": "string", "default": "x"}, b={"type": "string", "default": "y", "nullable": True}
    )
    obj: dict[str, Any] = {"a": None, "b": None}
    apply_defaults(obj, schema)
    assert obj == {"a": "x", "b": None}


def test_defaults_are_copied() -> None:
    default = {"nested": [1, 2]}
    schema = obj_schema(
        a={"type": "object", "default": default}, b={"type": "object", "default": default}
    )
    obj: dict[str, Any] = {}
    apply_defaults(obj, schema)
    obj["a"]["nested"].append(3)
    assert obj["b"] == {"nested": [1, 2]}
    assert default == {"nested": [1, 2]}


def test_array_items_and_nulls_in_arrays() -> None:
    item = {
        "type": "object",
        "default": {"port": 80},
        "properties": {"port": {"type": "integer"}, "proto": {"default": "TCP"}},
    }
    schema = obj_schema(ports={"type": "array", "items": item})
    obj: dict[str, Any] = {"ports": [{"port": 1}, None]}
    apply_defaults(obj, schema)
    assert obj == {"ports": [{"port": 1, "proto": "TCP"}, {"port": 80, "proto": "TCP"}]}


def test_additional_properties_values_are_defaulted() -> None:
    value = {
        "type": "object",
        "default": {},
        "properties": {"enabled": {"type": "boolean", "default": True}},
    }
    schema = obj_schema(features={"type": "object", "additionalProperties": value})
    obj: dict[str, Any] = {"features": {"a": {}, "b": None, "c": {"enabled": False}}}
    apply_defaults(obj, schema)
    assert obj == {
        "features": {"a": {"enabled": True}, "b": {"enabled": True}, "c": {"enabled": False}}
    }


def test_preserve_unknown_fields_is_defaulted_only_where_declared() -> None:
    schema = obj_schema(
        spec={
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {"mode": {"type": "string", "default": "auto"}},
        }
    )
    obj: dict[str, Any] = {"spec": {"free": {"form": None}}}
    apply_defaults(obj, schema)
    assert obj == {"spec": {"free": {"form": None}, "mode": "auto"}}


def test_value_validations_do_not_default() -> None:
    # Defaults inside anyOf/allOf/oneOf/not are ignored by the apiserver (and rejected in CRDs).
    schema = obj_schema(a={"type": "object", "anyOf": [{"properties": {"x": {"default": 1}}}]})
    obj: dict[str, Any] = {"a": {}}
    apply_defaults(obj, schema)
    assert obj == {"a": {}}


def test_schemas_without_defaults_leave_everything_untouched() -> None:
    schema = obj_schema(spec=obj_schema(a={"type": "string"}))
    obj = {"spec": {"a": None, "b": [None]}}
    before = copy.deepcopy(obj)
    apply_defaults(obj, schema)
    assert obj == before


def test_prune_nulls_drops_nulls_that_are_neither_nullable_nor_defaulted() -> None:
    schema = obj_schema(
        a={"type": "string"},
        b={"type": "string", "nullable": True},
        c={"type": "string", "default": "x"},
        spec=obj_schema(d={"type": "integer"}),
        items={"type": "array", "items": obj_schema(e={"type": "string"})},
        free={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    )
    obj: dict[str, Any] = {
        "a": None,
        "b": None,
        "c": None,
        "spec": {"d": None},
        "items": [{"e": None}, None],
        "free": {"unknown": None},
    }
    prune_nulls(obj, schema)
    assert obj == {"b": None, "c": None, "spec": {}, "items": [{}, None], "free": {"unknown": None}}
    apply_defaults(obj, schema)
    assert obj["c"] == "x"


def test_prune_nulls_in_maps() -> None:
    schema = obj_schema(labels={"type": "object", "additionalProperties": {"type": "string"}})
    obj: dict[str, Any] = {"labels": {"a": None, "b": "x"}}
    prune_nulls(obj, schema)
    assert obj == {"labels": {"b": "x"}}


def test_the_apiserver_sequence_on_a_real_crd() -> None:
    """Gateway API defaults (listeners' allowedRoutes) on the gateway example, as kube applies them."""
    crd = load_yaml(FIXTURES / "crds" / "gateway.networking.k8s.io_gateways.yaml")
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")["schema"][
        "openAPIV3Schema"
    ]
    docs = load_yaml_all(FIXTURES / "custom-resources" / "gateway-api" / "basic-http.yaml")
    gateway = next(d for d in docs if d["kind"] == "Gateway")
    assert prune(gateway, schema) == []
    prune_nulls(gateway, schema)
    apply_defaults(gateway, schema)
    listener = gateway["spec"]["listeners"][0]
    assert listener["allowedRoutes"] == {"namespaces": {"from": "Same"}}
    assert validate(gateway, schema) == []


def _reference_prune_nulls(x: Any, s: Schema) -> None:
    """prunenulls.go's PruneNonNullableNullsWithoutDefaults, node by node (apiextensions-apiserver
    pkg/apiserver/schema/defaulting): what the compiled drop must do."""
    if isinstance(x, dict):
        for key in list(x):
            child = s.field_schema(key)
            if child is None:
                continue
            value = x[key]
            if value is None:
                if not child.nullable and child.default is MISSING:
                    del x[key]
            elif isinstance(value, dict | list):
                _reference_prune_nulls(value, child)
    elif isinstance(x, list) and s.items is not None:
        for value in x:
            if isinstance(value, dict | list):
                _reference_prune_nulls(value, s.items)


NULL_SCHEMAS = {
    "properties": obj_schema(
        a={"type": "string"},
        n={"type": "string", "nullable": True},
        d={"type": "string", "default": "x"},
        o=obj_schema(a={"type": "string"}, n={"type": "integer", "nullable": True}),
        leaf={"type": "object"},
    ),
    "map": {"type": "object", "additionalProperties": obj_schema(a={"type": "string"})},
    "nullable map": {
        "type": "object",
        "additionalProperties": {"type": "string", "nullable": True},
    },
    "map beside properties": {
        **obj_schema(a={"type": "string", "nullable": True}),
        "additionalProperties": {"type": "string"},
    },
    "arrays": obj_schema(
        a={"type": "array", "items": obj_schema(a={"type": "string"})},
        b={"type": "array", "items": {"type": "array", "items": obj_schema(a={"type": "string"})}},
        c={"type": "array"},
    ),
    "preserved": {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {"a": obj_schema(a={"type": "string"})},
    },
}
NULL_VALUES = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(max_size=2)),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(
            st.sampled_from(["a", "n", "d", "o", "b", "c", "leaf", "z"]), children, max_size=4
        ),
    ),
    max_leaves=12,
)


@pytest.mark.parametrize("schema", NULL_SCHEMAS.values(), ids=NULL_SCHEMAS.keys())
@settings(max_examples=100, deadline=None)
@given(obj=NULL_VALUES)
def test_nulls_go_as_prunenulls_drops_them(schema: dict[str, Any], obj: Any) -> None:
    expected = copy.deepcopy(obj)
    _reference_prune_nulls(expected, Schema(schema))
    prune_nulls(obj, schema)
    assert obj == expected
