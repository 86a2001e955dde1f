"""The rewrite of mutation expressions' object literals (builtin/admissionregistration/celliterals.py) and
the JSONPatch library, evaluated by cel-rust: kube's examples (MutatingAdmissionPolicy v1beta1 reference,
spec.mutations.applyConfiguration/jsonPatch.expression) give what kube's would, and nothing else changes."""

from __future__ import annotations

from typing import Any

import cel
import pytest

from apiserver.schema.celparse import CelParseError
from builtin.admissionregistration.celenv import escape_key
from builtin.admissionregistration.celliterals import rewritten, type_of, untagged


def evaluate(source: str, **variables: Any) -> Any:
    context = cel.Context()
    context.add_function("escapeKey", escape_key)
    for name, value in {"jsonpatch": {}, **variables}.items():
        context.add_variable(name, value)
    return cel.compile(rewritten(source)).execute(context)


def test_kubes_apply_configuration_example() -> None:
    result = evaluate('Object{spec: Object.spec{serviceAccountName: "example"}}')
    assert type_of(result) == "Object"
    assert type_of(result["spec"]) == "Object.spec"
    assert untagged(result) == {"spec": {"serviceAccountName": "example"}}


def test_kubes_json_patch_examples() -> None:
    result = evaluate(
        '[JSONPatch{op: "test", path: "/spec/example", value: "Red"},'
        ' JSONPatch{op: "add", path: "/spec/selector",'
        ' value: Object.spec.selector{matchLabels: {"environment": "test"}}},'
        ' JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("example.com/a~b"),'
        ' value: "test"},]'
    )
    assert [type_of(op) for op in result] == ["JSONPatch"] * 3
    assert untagged(result) == [
        {"op": "test", "path": "/spec/example", "value": "Red"},
        {"op": "add", "path": "/spec/selector", "value": {"matchLabels": {"environment": "test"}}},
        {"op": "add", "path": "/metadata/labels/example.com~1a~0b", "value": "test"},
    ]


@pytest.mark.parametrize(
    "source",
    [
        '{"a": 1}',
        'x in {"a{": 1}',
        "'Object{spec: 1}'",
        "f(x).size() > 0 ? [1] : []",
    ],
)
def test_expressions_without_literals_are_left_as_written(source: str) -> None:
    assert rewritten(source) == source


def test_literals_inside_maps_lists_and_calls_are_rewritten() -> None:
    source = '{"k": [Object{a: {"b": size([1, 2])}, c: "x{y"}]}'
    assert untagged(evaluate(source)) == {"k": [{"a": {"b": 2}, "c": "x{y"}]}


def test_an_empty_literal_and_a_leading_dot() -> None:
    assert evaluate("Object{}") == {"@type": "Object"}
    assert type_of(evaluate(".Object.spec{replicas: 1}")) == "Object.spec"


def test_optional_field_initializers_are_refused() -> None:
    with pytest.raises(CelParseError):
        rewritten("Object{?spec: optional.none()}")


def test_untagged_keeps_other_maps_tags() -> None:
    quantity = {"@type": "quantity", "value": "1Gi"}
    assert untagged({"@type": "Object", "q": quantity}) == {"q": quantity}
