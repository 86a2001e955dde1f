"""The compiled check that a value passes validation (apiserver.schema.acceptance) must answer as the full
kube-openapi walk does (k8s.io/kube-openapi pkg/validation/validate): a "yes" it gives wrongly would store
an object kube refuses, a "no" only costs the walk. Checked for every keyword the check compiles or leaves
to the walk, on any value, and on the published examples of real CRDs."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apiserver.schema import validate
from apiserver.schema.acceptance import accepts
from apiserver.schema.openapi import _passes
from apiserver.schema.structural import Schema
from tests.unit.schema.test_pruning import crd_samples, obj_schema

STRING = {"type": "string", "maxLength": 3, "minLength": 1, "pattern": "^[a-c]*$"}
SCHEMAS: dict[str, dict[str, Any]] = {
    "types": obj_schema(
        s={"type": "string"},
        i={"type": "integer"},
        n={"type": "number"},
        b={"type": "boolean"},
        o={"type": "object"},
        a={"type": "array"},
    ),
    "strings": obj_schema(
        s=STRING,
        f={"type": "string", "format": "date-time"},
        bad={"type": "string", "pattern": "(unclosed"},
    ),
    "unchecked format": obj_schema(
        i={"type": "integer", "format": "int32"}, s={"type": "string", "format": "uuid"}
    ),
    "numbers": obj_schema(
        i={"type": "integer", "minimum": 0, "maximum": 9, "exclusiveMaximum": True},
        n={"type": "number", "minimum": -1.5, "exclusiveMinimum": True},
        m={"type": "integer", "multipleOf": 3},
    ),
    "integer bounds": obj_schema(
        i={"type": "integer", "minimum": -2.5, "exclusiveMinimum": True, "maximum": 2.5},
        j={"type": "integer", "maximum": 2, "exclusiveMaximum": True},
        k={"type": "integer", "minimum": 2**63},
    ),
    "required and closed": {
        **obj_schema(a={"type": "string"}),
        "required": ["a"],
        "additionalProperties": False,
    },
    "map": {"type": "object", "additionalProperties": STRING, "maxProperties": 2},
    "map values": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
    "arrays": obj_schema(
        a={"type": "array", "items": STRING},
        u={"type": "array", "uniqueItems": True, "maxItems": 2},
    ),
    "untyped": obj_schema(x={"maxLength": 1, "minimum": 0}),
    "nullable": obj_schema(x={"type": "string", "nullable": True}, y={"type": "string"}),
    "int-or-string": obj_schema(x={"x-kubernetes-int-or-string": True, "pattern": "^a"}),
    "enum and composition": obj_schema(
        e={"type": "string", "enum": ["a", "b"]},
        any={"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 1}]},
        one={"oneOf": [{"required": ["a"]}, {"required": ["b"]}], "type": "object"},
        no={"not": {"type": "integer"}},
    ),
}

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([2**63, -(2**63) - 1, 3, -3]),
    st.floats(allow_nan=False),
    st.sampled_from(["", "a", "abc", "abcd", "x", "2026-01-01T00:00:00Z"]),
)
KEYS = st.sampled_from(
    [
        "s",
        "i",
        "j",
        "k",
        "n",
        "b",
        "o",
        "a",
        "f",
        "bad",
        "m",
        "u",
        "x",
        "y",
        "e",
        "any",
        "one",
        "no",
        "z",
    ]
)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(KEYS, children, max_size=4)
    ),
    max_leaves=10,
)


def _agrees(schema: dict[str, Any], value: Any) -> None:
    compiled = Schema(schema)
    assert accepts(compiled, _passes)(value) == _passes(compiled, value), value


@pytest.mark.parametrize("schema", SCHEMAS.values(), ids=SCHEMAS.keys())
@settings(max_examples=150, deadline=None)
@given(value=VALUES)
def test_the_check_answers_as_the_walk_on_any_value(schema: dict[str, Any], value: Any) -> None:
    _agrees(schema, value)


COMPILED = {name: Schema(schema) for name, schema in SCHEMAS.items()}
"""One compiled check per schema for every example: what a check remembers (a pattern's matches) must not
change its later answers."""


@pytest.mark.parametrize("name", SCHEMAS)
@settings(max_examples=100, deadline=None)
@given(values=st.lists(VALUES, max_size=4))
def test_a_check_asked_again_answers_as_the_walk(name: str, values: list[Any]) -> None:
    compiled = COMPILED[name]
    for value in values:
        assert accepts(compiled, _passes)(value) == _passes(compiled, value), value


def test_a_pattern_remembers_only_the_strings_it_matched() -> None:
    check = accepts(Schema(obj_schema(s=STRING)), _passes)
    for _ in range(2):
        assert check({"s": "abc"}) and not check({"s": "d"}) and not check({"s": "abcd"})


@pytest.mark.parametrize(
    ("schema", "value", "valid"),
    [
        (SCHEMAS["types"], {"s": "x", "i": 1, "n": 1, "b": True, "o": {}, "a": []}, True),
        (SCHEMAS["types"], {"i": True}, False),  # a boolean is not an integer
        (SCHEMAS["types"], {"i": 2**63}, False),  # beyond int64, Go decodes a float64
        (SCHEMAS["types"], {"i": 1.0}, True),  # a float that is an integer is one
        (SCHEMAS["strings"], {"s": "abcd"}, False),
        (SCHEMAS["strings"], {"s": "d"}, False),
        (SCHEMAS["strings"], {"f": "yesterday"}, False),
        (SCHEMAS["strings"], {"bad": "x"}, False),  # a pattern that does not compile fails all
        (SCHEMAS["numbers"], {"i": 9}, False),
        (SCHEMAS["numbers"], {"n": -1.5}, False),
        (SCHEMAS["numbers"], {"m": 4}, False),
        (SCHEMAS["integer bounds"], {"i": -2, "j": 1}, False),  # int(-2.5), exclusive
        (SCHEMAS["integer bounds"], {"i": -1, "j": 2}, False),
        (SCHEMAS["integer bounds"], {"i": 2, "j": 1}, True),
        (SCHEMAS["integer bounds"], {"i": 3}, False),
        (SCHEMAS["integer bounds"], {"k": 2**63 - 1}, False),
        (SCHEMAS["required and closed"], {}, False),
        (SCHEMAS["required and closed"], {"a": "x", "b": 1}, False),
        (SCHEMAS["map"], {"a": "a", "b": "b", "c": "c"}, False),
        (SCHEMAS["map values"], {"a": -1}, False),
        (SCHEMAS["arrays"], {"a": ["a", "d"]}, False),
        (SCHEMAS["arrays"], {"u": [1, 1]}, False),
        (SCHEMAS["nullable"], {"x": None}, True),
        (SCHEMAS["nullable"], {"y": None}, False),
        (SCHEMAS["enum and composition"], {"e": "c"}, False),
        (SCHEMAS["enum and composition"], {"any": "ab"}, False),
        (SCHEMAS["enum and composition"], {"any": 5, "one": {"a": 1}, "no": "x"}, True),
    ],
)
def test_the_check_refuses_what_kube_refuses(
    schema: dict[str, Any], value: Any, valid: bool
) -> None:
    assert accepts(Schema(schema), _passes)(value) is valid
    assert (validate(value, schema) == []) is valid


@pytest.mark.parametrize(
    ("name", "obj", "schema"), crd_samples(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_published_examples_of_real_crds_pass_both(
    name: str, obj: dict[str, Any], schema: dict[str, Any]
) -> None:
    compiled = Schema(schema)
    assert accepts(compiled, _passes)(obj) == _passes(compiled, obj)
