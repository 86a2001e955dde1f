"""x-kubernetes-validations evaluated as kube-apiserver does (apiextensions-apiserver schema/cel/validation.go):
where each rule runs, with which self and oldSelf, and how a failure is worded."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.schema import apply_defaults, prune, validate
from apiserver.schema.causes import Cause, required, too_long
from apiserver.schema.cel import NOT_CHECKED, validate_rules
from tests.unit.schema.test_pruning import crd_samples


def rules(*entries: dict[str, Any], **schema: Any) -> dict[str, Any]:
    return {**schema, "x-kubernetes-validations": list(entries)}


def check(obj: Any, schema: dict[str, Any], old: Any = None) -> list[tuple[str, str, str]]:
    return [(c.reason, c.field, c.message) for c in validate_rules(obj, old, schema, [])]


SPEC = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "replicas": rules(
                    {"rule": "self >= 0", "message": "must not be negative"}, type="integer"
                ),
                "mode": rules({"rule": "self.lowerAscii() == self"}, type="string"),
                "ratio": rules({"rule": "type(self) == double && self < 2.5"}, type="number"),
                "labels": {
                    "type": "object",
                    "additionalProperties": rules({"rule": "size(self) <= 3"}, type="string"),
                },
            },
        }
    },
}


def test_a_scalar_failure_shows_the_value_and_the_message() -> None:
    assert check({"spec": {"replicas": -1}}, SPEC) == [
        ("FieldValueInvalid", "spec.replicas", "Invalid value: -1: must not be negative")
    ]
    assert check({"spec": {"replicas": 2}}, SPEC) == []


def test_without_a_message_the_rule_is_the_message_and_strings_are_quoted() -> None:
    assert check({"spec": {"mode": "Fast"}}, SPEC) == [
        (
            "FieldValueInvalid",
            "spec.mode",
            'Invalid value: "Fast": failed rule: self.lowerAscii() == self',
        )
    ]


def test_a_number_is_a_double_even_when_written_as_an_integer() -> None:
    assert check({"spec": {"ratio": 2}}, SPEC) == []
    assert check({"spec": {"ratio": 3}}, SPEC)[0][1] == "spec.ratio"


def test_map_values_are_addressed_by_key() -> None:
    found = check({"spec": {"labels": {"ok": "abc", "long": "abcd"}}}, SPEC)
    assert found == [
        (
            "FieldValueInvalid",
            "spec.labels[long]",
            'Invalid value: "abcd": failed rule: size(self) <= 3',
        )
    ]


def test_a_root_rule_is_reported_at_nil_without_the_object() -> None:
    schema = rules(
        {"rule": "!has(self.b) || self.b % self.a == 0", "message": "b must be a multiple of a"},
        type="object",
        properties={"a": {"type": "integer"}, "b": {"type": "integer"}},
    )
    assert check({"a": 3, "b": 7}, schema) == [
        ("FieldValueInvalid", "<nil>", "Invalid value: b must be a multiple of a")
    ]
    assert check({"a": 3}, schema) == []


def test_message_expression_reason_and_field_path() -> None:
    schema = rules(
        {
            "rule": "self.min <= self.max",
            # kube's static estimate refuses string(int) in a message (its size is unknown): a string
            # field of bounded length instead
            "messageExpression": "'min is above max ' + self.unit",
            "fieldPath": ".min",
        },
        {"rule": "self.max < 100", "reason": "FieldValueForbidden", "message": "too big"},
        {"rule": "has(self.name)", "reason": "FieldValueRequired", "message": "name it"},
        type="object",
        properties={
            "min": {"type": "integer"},
            "max": {"type": "integer"},
            "name": {"type": "string"},
            "unit": {"type": "string", "maxLength": 8},
        },
    )
    value = {"range": {"min": 150, "max": 120, "unit": "(in cm)"}}
    assert check(value, {"properties": {"range": schema}}) == [
        ("FieldValueInvalid", "range.min", "Invalid value: min is above max (in cm)"),
        ("FieldValueForbidden", "range", "Forbidden: too big"),
        ("FieldValueRequired", "range", "Required value: name it"),
    ]


def test_a_message_expression_that_fails_falls_back_to_the_message() -> None:
    schema = rules(
        {"rule": "self > 0", "message": "positive", "messageExpression": "self.nothing"},
        type="integer",
    )
    assert check({"n": -2}, {"properties": {"n": schema}}) == [
        ("FieldValueInvalid", "n", "Invalid value: -2: positive")
    ]


def test_an_evaluation_error_is_reported_with_the_rule() -> None:
    schema = {"properties": {"spec": rules({"rule": "self.missing > 1"}, type="object")}}
    assert check({"spec": {}}, schema) == [
        (
            "FieldValueInvalid",
            "spec",
            'Invalid value: "object": no such key: missing evaluating rule: self.missing > 1',
        )
    ]


IMMUTABLE = {
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": rules(
                    {"rule": "self == oldSelf", "message": "size is immutable"}, type="string"
                ),
                "floor": rules(
                    {
                        "rule": "!oldSelf.hasValue() || self >= oldSelf.value()",
                        "message": "may only grow",
                        "optionalOldSelf": True,
                    },
                    type="integer",
                ),
            },
        }
    }
}


def test_transition_rules_run_only_on_updates_with_an_old_value() -> None:
    assert check({"spec": {"size": "big"}}, IMMUTABLE) == []  # a create
    assert check({"spec": {"size": "big"}}, IMMUTABLE, old={"spec": {}}) == []  # nothing to compare
    assert check({"spec": {"size": "big"}}, IMMUTABLE, old={"spec": {"size": "big"}}) == []
    assert check({"spec": {"size": "big"}}, IMMUTABLE, old={"spec": {"size": "small"}}) == [
        ("FieldValueInvalid", "spec.size", 'Invalid value: "big": size is immutable')
    ]


def test_optional_old_self_runs_on_creates_too() -> None:
    assert check({"spec": {"floor": 1}}, IMMUTABLE) == []
    assert check({"spec": {"floor": 1}}, IMMUTABLE, old={"spec": {"floor": 3}}) == [
        ("FieldValueInvalid", "spec.floor", "Invalid value: 1: may only grow")
    ]


PORTS = {
    "properties": {
        "ports": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": rules(
                {"rule": "self.port == oldSelf.port", "message": "port is immutable"},
                type="object",
                properties={"name": {"type": "string"}, "port": {"type": "integer"}},
            ),
        },
        "plain": {
            "type": "array",
            "items": rules({"rule": "self == oldSelf", "message": "never checked"}, type="integer"),
        },
    }
}


def test_map_list_items_correlate_by_key_and_other_lists_do_not() -> None:
    old = {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}], "plain": [1, 2]}
    moved = {
        "ports": [{"name": "b", "port": 2}, {"name": "a", "port": 1}, {"name": "c", "port": 9}]
    }
    assert (
        check({**moved, "plain": [5, 6]}, PORTS, old=old) == []
    )  # reordered, added; plain: no oldSelf
    changed = {"ports": [{"name": "b", "port": 3}]}
    assert check(changed, PORTS, old=old) == [
        ("FieldValueInvalid", "ports[0]", "Invalid value: port is immutable")
    ]


def test_an_unchanged_value_is_not_reported_on_update() -> None:
    """Validation ratcheting: a value stored before a rule existed may stay as it is; kube returns the
    failure as a warning (warning.AddWarning with the error's text)."""
    warnings: list[str] = []
    new, old = {"spec": {"replicas": -1}}, {"spec": {"replicas": -1}}
    assert validate_rules(new, old, SPEC, [], warnings) == []
    assert warnings == ["spec.replicas: Invalid value: -1: must not be negative"]
    assert check({"spec": {"replicas": -2}}, SPEC, old={"spec": {"replicas": -1}}) != []


@pytest.mark.parametrize("blocking", [required("spec.x"), too_long("spec.y", 3)])
def test_rules_do_not_run_after_a_blocking_error(blocking: Cause) -> None:
    found = validate_rules({"spec": {"replicas": -1}}, None, SPEC, [blocking])
    assert [c.to_dict() for c in found] == [
        {
            "reason": "FieldValueInvalid",
            "message": f"Invalid value: null: {NOT_CHECKED}",
            "field": "<nil>",
        }
    ]


def test_a_schema_without_rules_costs_nothing() -> None:
    assert validate_rules({"spec": {"replicas": -1}}, None, {"type": "object"}, []) == []


def _admitted_samples() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """The published examples of the conformance CRDs, pruned and defaulted as the server admits them."""
    samples = []
    for name, obj, schema in crd_samples():
        obj = copy.deepcopy(obj)
        prune(obj, schema)
        apply_defaults(obj, schema)
        samples.append((name, obj, schema))
    return samples


@pytest.mark.parametrize(
    ("name", "obj", "schema"), _admitted_samples(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_published_examples_of_real_crds_pass_their_rules(
    name: str, obj: dict[str, Any], schema: dict[str, Any]
) -> None:
    """Gateway API's examples go through 1 to 42 rules each (string, list and macro functions)."""
    assert validate(obj, schema) == []
    assert validate_rules(obj, None, schema, []) == []


def test_a_real_rule_fires_on_a_broken_example() -> None:
    """Gateway API's HTTPRoute: a PathPrefix match must be an absolute path."""
    _name, route, schema = next(
        s for s in _admitted_samples() if s[0] == "basic-http.yaml:HTTPRoute"
    )
    route["spec"]["rules"][0]["matches"][0]["path"]["value"] = "bar"
    assert check(route, schema) == [
        (
            "FieldValueInvalid",
            "spec.rules[0].matches[0].path",
            "Invalid value: value must be an absolute path and start with '/' when type one of"
            " ['Exact', 'PathPrefix']",
        )
    ]


# -- found in review: kube's ratcheting, typing, escaping and wording -----------------------------------


def test_transition_rules_and_evaluation_errors_are_never_ratcheted() -> None:
    schema = {
        "properties": {
            "spec": rules(
                {"rule": "self.x > 1"},
                type="object",
                properties={
                    "n": rules({"rule": "self > oldSelf", "message": "must grow"}, type="integer"),
                    "y": {"type": "integer"},
                },
            )
        }
    }
    old = {"spec": {"n": 1, "y": 1}}
    assert check({"spec": {"n": 1, "y": 1}}, schema, old=old) == [
        (
            "FieldValueInvalid",
            "spec",
            'Invalid value: "object": no such key: x evaluating rule: self.x > 1',
        ),
        ("FieldValueInvalid", "spec.n", "Invalid value: 1: must grow"),
    ]


def test_items_of_plain_lists_and_sets_ratchet_only_with_their_list() -> None:
    """kube's CorrelatedObject does not correlate atomic or set items: the list is their nearest
    correlated node."""
    item = rules({"rule": "self < 5"}, type="integer")
    schema = {
        "properties": {
            "l": {"type": "array", "items": item},
            "s": {"type": "array", "x-kubernetes-list-type": "set", "items": item},
        }
    }
    old = {"l": [9, 1], "s": [7]}
    assert check({"l": [9, 1], "s": [7]}, schema, old=old) == []
    assert [c[1] for c in check({"l": [9, 2], "s": [7, 8]}, schema, old=old)] == [
        "l[0]",
        "s[0]",
        "s[1]",
    ]


def test_a_stored_null_is_no_old_value() -> None:
    schema = {
        "properties": {
            "v": rules({"rule": "self == oldSelf"}, type="string", nullable=True),
            "w": rules(
                {"rule": "!oldSelf.hasValue()", "optionalOldSelf": True},
                type="string",
                nullable=True,
            ),
        }
    }
    assert check({"v": "x", "w": "y"}, schema, old={"v": None, "w": None}) == []


def test_numbers_are_doubles_below_the_rule_too() -> None:
    schema = rules(
        {"rule": "self.ratio * 2.0 <= 10.0 && self.all_.all(x, x * 2.0 < 10.0)"},
        type="object",
        properties={
            "ratio": {"type": "number"},
            "all_": {"type": "array", "items": {"type": "number"}},
        },
    )
    assert check({"ratio": 2, "all_": [2, 3]}, schema) == []


def test_property_names_are_escaped_as_kube_escapes_them() -> None:
    schema = rules(
        {"rule": "has(self.__namespace__) && self.min__dash__size > 0 && self.a__dot__b == 'x'"},
        type="object",
        properties={
            "namespace": {"type": "string"},
            "min-size": {"type": "integer"},
            "a.b": {"type": "string"},
        },
    )
    assert check({"namespace": "n", "min-size": 1, "a.b": "x"}, schema) == []


def test_field_paths_are_normalised_and_evaluation_errors_stay_at_the_node() -> None:
    schema = {
        "properties": {
            "spec": rules(
                {"rule": "self.m.k == 'ok'", "fieldPath": ".m.k"},
                {"rule": "self.n > 0", "fieldPath": "['a.b']"},
                {"rule": "self.missing > 1", "fieldPath": ".n"},
                type="object",
                properties={
                    "m": {"type": "object", "additionalProperties": {"type": "string"}},
                    "a.b": {"type": "string"},
                    "n": {"type": "integer"},
                },
            )
        }
    }
    assert [
        (c[1], c[2].split(": ")[-1]) for c in check({"spec": {"m": {"k": "no"}, "n": 0}}, schema)
    ] == [
        ("spec.m[k]", "self.m.k == 'ok'"),
        ("spec.a.b", "self.n > 0"),
        ("spec", "self.missing > 1"),
    ]


def test_message_expressions_keep_a_scalar_value_and_are_trimmed() -> None:
    schema = {
        "properties": {
            "n": rules(
                {"rule": "self > 0", "messageExpression": "'  n is negative  '"},
                type="integer",
            ),
            "f": rules(
                {
                    "rule": "!oldSelf.hasValue() || self >= oldSelf.value()",
                    "optionalOldSelf": True,
                    "messageExpression": "'was ' + oldSelf",
                },
                type="string",
                maxLength=8,
            ),
        }
    }
    assert check({"n": -1, "f": "b"}, schema, old={"n": 3, "f": "e"}) == [
        ("FieldValueInvalid", "n", "Invalid value: -1: n is negative"),
        ("FieldValueInvalid", "f", 'Invalid value: "b": was e'),
    ]


def test_duplicate_of_an_object_and_errors_of_untyped_nodes() -> None:
    schema = {
        "properties": {
            "o": rules(
                {"rule": "false", "reason": "FieldValueDuplicate"},
                type="object",
                properties={"a": {"type": "string"}},
            ),
            "any": rules({"rule": "self + 1 > 0"}, **{"x-kubernetes-int-or-string": True}),
        }
    }
    assert check({"o": {"a": "x"}, "any": "text"}, schema) == [
        ("FieldValueDuplicate", "o", "Duplicate value"),
        (
            "FieldValueInvalid",
            "any",
            "Invalid value: \"\": 'no such overload': call arguments did not match a supported operator,"
            " function or macro signature for rule: self + 1 > 0",
        ),
    ]


def test_a_message_reads_old_self_only_where_a_transition_rule_declares_it() -> None:
    """kube declares oldSelf for a node only when one of its rules uses it (and there is an old value);
    elsewhere a message expression reading it fails and the message is used, never another node's."""
    schema = {
        "properties": {
            "a": rules({"rule": "self == oldSelf"}, type="integer"),
            "b": rules(
                {"rule": "self < 'm'", "messageExpression": "'was ' + oldSelf"},
                type="string",
                maxLength=8,
            ),
        }
    }
    assert check({"a": 1, "b": "x"}, schema, old={"a": 1, "b": "c"}) == [
        ("FieldValueInvalid", "b", "Invalid value: \"x\": failed rule: self < 'm'")
    ]
    declared = {"properties": {"b": {**schema["properties"]["b"]}}}
    declared["properties"]["b"]["x-kubernetes-validations"] = [
        *schema["properties"]["b"]["x-kubernetes-validations"],
        {"rule": "self >= oldSelf"},
    ]
    assert check({"b": "x"}, declared, old={"b": "c"}) == [
        ("FieldValueInvalid", "b", 'Invalid value: "x": was c')
    ]
    assert check({"b": "x"}, declared) == [
        ("FieldValueInvalid", "b", "Invalid value: \"x\": failed rule: self < 'm'")
    ]


def test_an_old_map_list_item_with_an_object_for_a_key_correlates_with_nothing() -> None:
    """A value stored under an older schema may hold anything: it must not break the correlation."""
    old = {"ports": [{"name": {"odd": 1}, "port": 1}, "junk", {"name": "a", "port": 1}]}
    assert check({"ports": [{"name": "a", "port": 2}]}, PORTS, old=old) == [
        ("FieldValueInvalid", "ports[0]", "Invalid value: port is immutable")
    ]


LIBRARY_SPEC = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "endpoint": rules({"rule": "isURL(self) && url(self).getScheme() == 'https'"},
                                  type="string", maxLength=256),
                "subnet": rules({"rule": "isCIDR(self) && cidr(self).prefixLength() >= 16"},
                                type="string", maxLength=64),
                "memory": rules({"rule": "quantity(self).isLessThan(quantity('1Gi'))"},
                                type="string", maxLength=32),
                "ports": rules({"rule": "self.isSorted()"}, type="array", maxItems=16,
                               items={"type": "integer"}),
            },
        }
    },
}  # fmt: skip


def test_rules_use_the_kubernetes_libraries() -> None:
    """url, cidr, quantity and lists (apiserver/schema/cellibs.py), as kube's CRD rules may since 1.24-1.31."""
    good = {
        "endpoint": "https://x.example",
        "subnet": "10.0.0.0/16",
        "memory": "512Mi",
        "ports": [1, 2],
    }
    assert check({"spec": good}, LIBRARY_SPEC) == []
    bad = {"endpoint": "http://x.example", "subnet": "10.0.0.0/8", "memory": "2Gi", "ports": [2, 1]}
    assert [field for _, field, _ in check({"spec": bad}, LIBRARY_SPEC)] == [
        "spec.endpoint",
        "spec.subnet",
        "spec.memory",
        "spec.ports",
    ]


@pytest.mark.parametrize(
    ("rule", "value", "message"),
    [
        (  # Istio's VirtualService timeout rule; cel-go's String.ConvertToType, as the oracle answered
            "duration(self) >= duration('1ms')",
            "soon",
            "type conversion error from 'string' to 'google.protobuf.Duration' evaluating rule: "
            "duration(self) >= duration('1ms')",
        ),
        (
            "timestamp(self) > timestamp('2020-01-01T00:00:00Z')",
            "yesterday",
            "type conversion error from 'string' to 'google.protobuf.Timestamp' evaluating rule: "
            "timestamp(self) > timestamp('2020-01-01T00:00:00Z')",
        ),
    ],
)
def test_a_string_that_does_not_convert_is_cel_gos_conversion_error(
    rule: str, value: str, message: str
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "t": {"type": "string", "maxLength": 32, "x-kubernetes-validations": [{"rule": rule}]}
        },
    }
    assert check({"t": value}, schema) == [
        ("FieldValueInvalid", "t", f'Invalid value: "string": {message}')
    ]
