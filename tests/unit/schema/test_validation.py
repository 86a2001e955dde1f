"""Tests of apiserver.schema.validate and validate_object_meta.

Expected messages come from the Go sources they port (kube-openapi pkg/validation/validate and
pkg/validation/errors/schema.go, apiextensions-apiserver pkg/apiserver/validation/validation.go
``kubeOpenAPIResultToFieldErrors``, apimachinery pkg/util/validation/field/errors.go, pkg/api/validation
/objectmeta.go) and, in the ``test_real_server_*`` tests, from the ``metav1.Status`` answers recorded in
the conformance fixtures (validation-cases/kubectl-validate, see SOURCES.md §6).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from apiserver.schema import (
    Cause,
    apply_defaults,
    compile_schema,
    prune,
    prune_nulls,
    validate,
    validate_object_meta,
)
from apiserver.schema.causes import go_json, go_quote, go_value
from apiserver.schema.cel import validate_rules
from apiserver.schema.formats import check_format
from apiserver.schema.regex import compile_go_regexp
from tests.serverproc import FIXTURES

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader is 5x faster on big CRDs


def load_yaml(path: Path) -> Any:
    return yaml.load(path.read_text(), Loader=LOADER)


def load_yaml_all(path: Path) -> list[Any]:
    return list(yaml.load_all(path.read_text(), Loader=LOADER))


CASES = FIXTURES / "validation-cases" / "kubectl-validate"


def causes(result: list[Cause]) -> list[dict[str, str]]:
    return [c.to_dict() for c in result]


def obj_schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


# --- the examples of the brief, worded as kube-apiserver words them ------------------------------


def test_type_invalid_message_matches_kube_apiserver() -> None:
    schema = obj_schema(spec=obj_schema(replicas={"type": "integer"}))
    assert causes(validate({"spec": {"replicas": "x"}}, schema)) == [
        {
            "reason": "FieldValueTypeInvalid",
            "message": 'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
            "field": "spec.replicas",
        }
    ]


def test_required_is_reported_at_the_missing_field() -> None:
    schema = obj_schema(
        spec={
            "type": "object",
            "required": ["cronSpec"],
            "properties": {"cronSpec": {"type": "string"}},
        }
    )
    assert causes(validate({"spec": {}}, schema)) == [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.cronSpec"}
    ]


def test_required_at_the_root_has_no_leading_dot() -> None:
    schema = {"type": "object", "required": ["spec"], "properties": {"spec": {"type": "object"}}}
    assert causes(validate({}, schema)) == [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec"}
    ]


def test_valid_object_has_no_causes() -> None:
    schema = obj_schema(
        spec=obj_schema(replicas={"type": "integer", "minimum": 1}, image={"type": "string"})
    )
    assert validate({"spec": {"replicas": 3, "image": "nginx"}}, schema) == []


def test_crontab_of_the_kubernetes_docs_fails_pattern_and_maximum() -> None:
    crd = load_yaml(FIXTURES / "crds" / "k8s-docs-crontab" / "crontab-validation.yaml")
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    docs = FIXTURES / "custom-resources" / "k8s-docs-crontab"
    assert [str(c) for c in validate(load_yaml(docs / "my-crontab-invalid.yaml"), schema)] == [
        f"spec.cronSpec: Invalid value: \"* * * *\": spec.cronSpec in body should match '{CRONTAB_PATTERN}'",
        "spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10",
    ]
    assert validate(load_yaml(docs / "my-crontab-valid-replicas.yaml"), schema) == []


def test_errors_of_the_root_object_have_the_nil_field() -> None:
    assert causes(validate([], {"type": "object"})) == [
        {
            "reason": "FieldValueTypeInvalid",
            "message": 'Invalid value: "array":  in body must be of type object: "array"',
            "field": "<nil>",
        }
    ]


# --- types -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema_type", "value", "json_type"),
    [
        ("integer", 1.5, "number"),
        ("integer", True, "boolean"),
        ("number", "1", "string"),
        ("string", 1, "integer"),
        ("boolean", "true", "string"),
        ("object", [], "array"),
        ("array", {}, "object"),
        ("string", 2**64, "number"),  # Go decodes integers beyond int64 as float64
    ],
)
def test_type_mismatch(schema_type: str, value: Any, json_type: str) -> None:
    result = validate({"x": value}, obj_schema(x={"type": schema_type}))
    assert causes(result) == [
        {
            "reason": "FieldValueTypeInvalid",
            "message": f'Invalid value: "{json_type}": x in body must be of type {schema_type}: "{json_type}"',
            "field": "x",
        }
    ]


@pytest.mark.parametrize(
    ("schema", "value", "json_type"),
    [
        ({"type": "integer", "format": "int32"}, 2**63, "number"),  # Istio's maxConnections
        ({"type": "integer", "format": "int64"}, 1.5, "number"),
        ({"type": "integer", "format": "int32"}, "1", "string"),
        ({"type": "number", "format": "float"}, "1", "string"),
        ({"type": "number", "format": "double"}, True, "boolean"),
    ],
)
def test_numeric_formats_are_stripped_so_a_mismatch_names_the_type(
    schema: dict[str, Any], value: Any, json_type: str
) -> None:
    """apiextensions-apiserver strips every format it does not validate, the numeric ones among them
    (pkg/apiserver/validation/formats.go), so kube never says "must be of type int32"."""
    schema_type = schema["type"]
    result = validate({"x": value}, obj_schema(x=schema))
    assert causes(result) == [
        {
            "reason": "FieldValueTypeInvalid",
            "message": f'Invalid value: "{json_type}": x in body must be of type {schema_type}: "{json_type}"',
            "field": "x",
        }
    ]


@pytest.mark.parametrize(
    ("schema_type", "value"),
    [("number", 1), ("number", 1.5), ("integer", 2.0), ("integer", -(2**63)), ("string", "")],
)
def test_type_match_including_integral_floats_and_ints_for_numbers(
    schema_type: str, value: Any
) -> None:
    assert validate({"x": value}, obj_schema(x={"type": schema_type})) == []


def test_null_needs_nullable() -> None:
    schema = obj_schema(a={"type": "string"}, b={"type": "string", "nullable": True})
    assert causes(validate({"a": None, "b": None}, schema)) == [
        {
            "reason": "FieldValueTypeInvalid",
            "message": 'Invalid value: "null": a in body must be of type string: "null"',
            "field": "a",
        }
    ]


def test_int_or_string() -> None:
    schema = obj_schema(port={"x-kubernetes-int-or-string": True})
    assert validate({"port": 80}, schema) == []
    assert validate({"port": "http"}, schema) == []
    assert causes(validate({"port": 1.5}, schema)) == [
        {
            "reason": "FieldValueTypeInvalid",
            "message": 'Invalid value: "number": port in body must be of type integer,string: "number"',
            "field": "port",
        }
    ]


def test_int_or_string_with_the_anyof_kubebuilder_generates() -> None:
    schema = obj_schema(
        v={"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
    )
    assert validate({"v": "25%"}, schema) == []
    assert validate({"v": 3}, schema) == []


def test_a_type_mismatch_does_not_stop_the_other_checks() -> None:
    # kube-openapi runs every applicable validator: error_invalid_protocol_type shows both causes.
    schema = obj_schema(p={"type": "string", "enum": ["TCP", "UDP"]})
    assert causes(validate({"p": 22}, schema)) == [
        {
            "reason": "FieldValueTypeInvalid",
            "message": 'Invalid value: "integer": p in body must be of type string: "integer"',
            "field": "p",
        },
        {
            "reason": "FieldValueNotSupported",
            "message": 'Unsupported value: 22: supported values: "TCP", "UDP"',
            "field": "p",
        },
    ]


# --- enum ------------------------------------------------------------------------------------------


def test_enum_of_strings() -> None:
    result = validate(
        {"p": "udp"}, obj_schema(p={"type": "string", "enum": ["SCTP", "TCP", "UDP"]})
    )
    assert causes(result) == [
        {
            "reason": "FieldValueNotSupported",
            "message": 'Unsupported value: "udp": supported values: "SCTP", "TCP", "UDP"',
            "field": "p",
        }
    ]


def test_enum_of_other_values_lists_them_as_json() -> None:
    result = validate({"n": 3}, obj_schema(n={"type": "integer", "enum": [1, 2.5, None, True]}))
    assert (
        causes(result)[0]["message"]
        == 'Unsupported value: 3: supported values: "1", "2.5", "null", "true"'
    )


def test_enum_compares_numbers_by_value_but_not_booleans_with_numbers() -> None:
    schema = obj_schema(n={"enum": [1]})
    assert validate({"n": 1.0}, schema) == []
    assert len(validate({"n": True}, schema)) == 1


def test_enum_applies_to_null() -> None:
    result = validate(
        {"n": None}, obj_schema(n={"nullable": True, "type": "string", "enum": ["a"]})
    )
    assert causes(result) == [
        {
            "reason": "FieldValueNotSupported",
            "message": 'Unsupported value: null: supported values: "a"',
            "field": "n",
        }
    ]


# --- strings ---------------------------------------------------------------------------------------


CRONTAB_PATTERN = r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$"


def test_pattern_message_shows_the_pattern_as_written() -> None:
    result = validate(
        {"s": "* * * *"}, obj_schema(s={"type": "string", "pattern": CRONTAB_PATTERN})
    )
    assert causes(result) == [
        {
            "reason": "FieldValueInvalid",
            "message": f"Invalid value: \"* * * *\": s in body should match '{CRONTAB_PATTERN}'",
            "field": "s",
        }
    ]


def test_pattern_is_a_search_like_go_regexp_match_string() -> None:
    assert validate({"s": "xxabcxx"}, obj_schema(s={"type": "string", "pattern": "abc"})) == []


def test_pattern_dollar_does_not_match_before_a_trailing_newline() -> None:
    # Go's $ is the end of the text; Python's also matches before a final "\n".
    assert len(validate({"s": "abc\n"}, obj_schema(s={"type": "string", "pattern": "^abc$"}))) == 1


def test_pattern_with_a_flag_group_inside_like_gateway_api() -> None:
    schema = obj_schema(s={"type": "string", "pattern": "^(?i)(abort|warn)?$"})
    assert validate({"s": "WARN"}, schema) == []
    assert len(validate({"s": "stop"}, schema)) == 1


@pytest.mark.parametrize(
    ("pattern", "matches", "rejects"),
    [
        (r"^a\z", "a", "a\n"),
        ("^[[:alpha:]]+$", "abc", "ab1"),
        ("^(?<word>[a-z]+)$", "abc", "ABC"),
        ("^(?i)abc$", "ABC", "abd"),
        (r"^\Qa.b\E$", "a.b", "axb"),
    ],
)
def test_go_regexp_syntax_is_translated(pattern: str, matches: str, rejects: str) -> None:
    schema = obj_schema(s={"type": "string", "pattern": pattern})
    assert validate({"s": matches}, schema) == []
    assert len(validate({"s": rejects}, schema)) == 1


def test_a_pattern_python_cannot_compile_is_reported_like_an_invalid_go_pattern() -> None:
    result = validate({"s": "x"}, obj_schema(s={"type": "string", "pattern": "(unclosed"}))
    assert len(result) == 1
    assert "s in body should match '(unclosed, but pattern is invalid: " in result[0].message


def test_go_regexp_translation_keeps_perl_classes_ascii() -> None:
    pattern = compile_go_regexp(r"^\d+$")
    assert not isinstance(pattern, str)
    assert pattern.search("123")
    assert not pattern.search("١٢٣")  # Arabic-Indic digits are \d in Python, not in RE2


def test_max_length_is_too_long_without_the_value() -> None:
    result = validate({"s": "abcdef"}, obj_schema(s={"type": "string", "maxLength": 5}))
    assert causes(result) == [
        {
            "reason": "FieldValueTooLong",
            "message": "Too long: may not be more than 5 bytes",
            "field": "s",
        }
    ]


def test_max_length_counts_characters() -> None:
    assert validate({"s": "ééé"}, obj_schema(s={"type": "string", "maxLength": 3})) == []


def test_min_length() -> None:
    result = validate({"s": "ab"}, obj_schema(s={"type": "string", "minLength": 3}))
    assert causes(result) == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "ab": s in body should be at least 3 chars long',
            "field": "s",
        }
    ]


def test_string_checks_stop_at_the_first_failure() -> None:
    schema = obj_schema(s={"type": "string", "maxLength": 2, "pattern": "^[0-9]+$"})
    assert [c.reason for c in validate({"s": "abc"}, schema)] == ["FieldValueTooLong"]


# --- formats ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("date-time", "2024-01-01T00:00:00Z", "2024-01-01 00:00"),
        ("date-time", "2024-01-01T10:20:30.123+02:00", "2024-02-30T00:00:00Z"),
        ("date", "2024-02-29", "2023-02-29"),
        ("byte", "aGVsbG8=", "aGVsbG8"),
        ("byte", "", "not base64!"),
        ("ipv4", "10.0.0.1", "::1"),
        ("ipv6", "::1", "10.0.0.1"),
        ("cidr", "10.0.0.0/8", "10.0.0.1"),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567"),
        ("hostname", "my-host.example.com", "-bad-"),
        ("duration", "1h30m", "soon"),
        ("duration", "3 days", "days"),
        ("email", "someone@example.com", "no at sign"),
        ("uri", "https://example.com/x", "not a uri"),
        ("mac", "01:23:45:67:89:ab", "01:23"),
        ("quantity", "1.5Gi", "1.5 Gi"),
    ],
)
def test_formats(fmt: str, good: str, bad: str) -> None:
    assert check_format(fmt, good)
    assert not check_format(fmt, bad)


def test_format_failure_message() -> None:
    result = validate({"t": "yesterday"}, obj_schema(t={"type": "string", "format": "date-time"}))
    assert causes(result) == [
        {
            "reason": "FieldValueTypeInvalid",
            "message": 'Invalid value: "yesterday": t in body must be of type date-time: "yesterday"',
            "field": "t",
        }
    ]


def test_unsupported_formats_are_ignored_as_the_apiserver_strips_them() -> None:
    assert (
        validate({"t": "whatever"}, obj_schema(t={"type": "string", "format": "my-format"})) == []
    )


def test_int32_format_has_no_range_check_as_in_kube() -> None:
    # apiextensions keeps int32/int64 but kube-openapi's number validator ignores them for ranges.
    assert validate({"n": 2**40}, obj_schema(n={"type": "integer", "format": "int32"})) == []


# --- numbers ---------------------------------------------------------------------------------------


def test_maximum_with_an_integer_value() -> None:
    result = validate({"n": 15}, obj_schema(n={"type": "integer", "minimum": 1, "maximum": 10}))
    assert causes(result) == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: 15: n in body should be less than or equal to 10",
            "field": "n",
        }
    ]


@pytest.mark.parametrize(
    ("keywords", "value", "message"),
    [
        ({"minimum": 1}, 0, "Invalid value: 0: n in body should be greater than or equal to 1"),
        (
            {"minimum": 1, "exclusiveMinimum": True},
            1,
            "Invalid value: 1: n in body should be greater than 1",
        ),
        (
            {"maximum": 1, "exclusiveMaximum": True},
            1,
            "Invalid value: 1: n in body should be less than 1",
        ),
        (
            {"maximum": 0.5},
            1.5,
            "Invalid value: 1.5: n in body should be less than or equal to 0.5",
        ),
        (
            {"maximum": 1e6},
            2e6,
            "Invalid value: 2e+06: n in body should be less than or equal to 1e+06",
        ),
        ({"multipleOf": 3}, 7, "Invalid value: 7: n in body should be a multiple of 3"),
        ({"multipleOf": 0.5}, 1.25, "Invalid value: 1.25: n in body should be a multiple of 0.5"),
    ],
)
def test_number_bounds(keywords: dict[str, Any], value: Any, message: str) -> None:
    result = validate({"n": value}, obj_schema(n={"type": "number", **keywords}))
    assert causes(result) == [{"reason": "FieldValueInvalid", "message": message, "field": "n"}]


def test_number_checks_report_multiple_of_then_minimum_then_maximum() -> None:
    schema = obj_schema(n={"type": "integer", "multipleOf": 2, "minimum": 10, "maximum": 0})
    messages = [c.message for c in validate({"n": 5}, schema)]
    assert messages == [
        "Invalid value: 5: n in body should be a multiple of 2",
        "Invalid value: 5: n in body should be greater than or equal to 10",
        "Invalid value: 5: n in body should be less than or equal to 0",
    ]


# --- arrays and objects ----------------------------------------------------------------------------


def test_items_are_reported_with_their_index() -> None:
    schema = obj_schema(
        spec=obj_schema(containers={"type": "array", "items": obj_schema(name={"type": "string"})})
    )
    result = validate({"spec": {"containers": [{"name": "a"}, {"name": 1}]}}, schema)
    assert causes(result) == [
        {
            "reason": "FieldValueTypeInvalid",
            "message": 'Invalid value: "integer": spec.containers[1].name in body must be of type string: "integer"',
            "field": "spec.containers[1].name",
        }
    ]


def test_min_and_max_items_and_unique_items() -> None:
    schema = obj_schema(a={"type": "array", "minItems": 2, "maxItems": 3, "uniqueItems": True})
    assert causes(validate({"a": [1]}, schema)) == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: 1: a in body should have at least 2 items",
            "field": "a",
        }
    ]
    assert causes(validate({"a": [1, 2, 3, 4]}, schema)) == [
        {
            "reason": "FieldValueTooMany",
            "message": "Too many: 4: must have at most 3 items",
            "field": "a",
        }
    ]
    assert causes(validate({"a": [1, 2, 1]}, schema)) == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "": a in body shouldn\'t contain duplicates',
            "field": "a",
        }
    ]


def test_min_and_max_properties() -> None:
    schema = obj_schema(m={"type": "object", "minProperties": 1, "maxProperties": 1})
    assert causes(validate({"m": {}}, schema)) == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: 0: m in body should have at least 1 properties",
            "field": "m",
        }
    ]
    assert causes(validate({"m": {"a": 1, "b": 2}}, schema)) == [
        {
            "reason": "FieldValueTooMany",
            "message": "Too many: 2: must have at most 1 item",
            "field": "m",
        }
    ]


def test_additional_properties_values_are_named_with_a_dot() -> None:
    schema = obj_schema(labels={"type": "object", "additionalProperties": {"type": "string"}})
    assert causes(validate({"labels": {"app": 1}}, schema)) == [
        {
            "reason": "FieldValueTypeInvalid",
            "message": 'Invalid value: "integer": labels.app in body must be of type string: "integer"',
            "field": "labels.app",
        }
    ]


def test_preserve_unknown_fields_accepts_anything_undeclared() -> None:
    schema = obj_schema(spec={"type": "object", "x-kubernetes-preserve-unknown-fields": True})
    assert validate({"spec": {"anything": [1, {"a": None}]}}, schema) == []


def test_duplicate_messages_are_reported_once() -> None:
    # validate.Result.AddErrors drops repeated messages, e.g. the same failure found by two allOf branches.
    schema = obj_schema(n={"allOf": [{"type": "string"}, {"type": "string"}]})
    assert [c.message for c in validate({"n": 1}, schema)] == [
        'Invalid value: "integer": n in body must be of type string: "integer"',
        'Invalid value: "": "n" must validate all the schemas (allOf). None validated',
    ]


# --- anyOf / oneOf / allOf / not -------------------------------------------------------------------


def test_one_of_none_valid_is_reported_at_nil_with_the_first_best_failure() -> None:
    # The shape of the real error_quantity answer.
    schema = obj_schema(cpu={"oneOf": [{"type": "string"}, {"type": "number"}]})
    assert causes(validate({"cpu": True}, schema)) == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "": "cpu" must validate one and only one schema (oneOf). Found none valid',
            "field": "<nil>",
        },
        {
            "reason": "FieldValueTypeInvalid",
            "message": 'Invalid value: "boolean": cpu in body must be of type string: "boolean"',
            "field": "cpu",
        },
    ]


def test_one_of_with_two_valid_alternatives() -> None:
    schema = obj_schema(v={"oneOf": [{"minimum": 1}, {"maximum": 10}]})
    assert causes(validate({"v": 5}, schema)) == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "": "v" must validate one and only one schema (oneOf). Found 2 valid alternatives',
            "field": "<nil>",
        }
    ]


def test_any_of_reports_the_alternative_with_most_matches() -> None:
    schema = obj_schema(
        v={
            "anyOf": [
                {"type": "string"},
                {"type": "object", "required": ["a"], "properties": {"b": {"type": "string"}}},
            ]
        }
    )
    result = validate({"v": {"b": "x"}}, schema)
    assert causes(result) == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "": "v" must validate at least one schema (anyOf)',
            "field": "<nil>",
        },
        {"reason": "FieldValueRequired", "message": "Required value", "field": "v.a"},
    ]


def test_not() -> None:
    schema = obj_schema(v={"type": "string", "not": {"enum": ["forbidden"]}})
    assert validate({"v": "ok"}, schema) == []
    assert causes(validate({"v": "forbidden"}, schema)) == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "": "v" must not validate the schema (not)',
            "field": "<nil>",
        }
    ]


def test_cel_rules_are_skipped() -> None:
    schema = obj_schema(v={"type": "integer", "x-kubernetes-validations": [{"rule": "self > 0"}]})
    assert validate({"v": -3}, schema) == []


# --- list types ------------------------------------------------------------------------------------


def test_list_type_set_reports_the_second_occurrence_once() -> None:
    schema = obj_schema(
        s={"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
    )
    assert causes(validate({"s": ["a", "b", "a", "a"]}, schema)) == [
        {"reason": "FieldValueDuplicate", "message": 'Duplicate value: "a"', "field": "s[2]"}
    ]


def test_list_type_set_distinguishes_int_and_float_like_go() -> None:
    schema = obj_schema(s={"type": "array", "x-kubernetes-list-type": "set"})
    assert validate({"s": [1, 1.0, True]}, schema) == []
    assert causes(validate({"s": [{"a": 1}, {"a": 1}]}, schema)) == [
        {"reason": "FieldValueDuplicate", "message": 'Duplicate value: {"a":1}', "field": "s[1]"}
    ]


def test_list_type_map_with_one_key() -> None:
    schema = obj_schema(
        m={
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object"},
        }
    )
    assert causes(validate({"m": [{"name": "a"}, {"name": "a"}, {}, {}]}, schema)) == [
        {
            "reason": "FieldValueDuplicate",
            "message": 'Duplicate value: {"name":"a"}',
            "field": "m[1]",
        },
        {"reason": "FieldValueDuplicate", "message": "Duplicate value: {}", "field": "m[3]"},
    ]
    assert causes(validate({"m": [{"name": "a"}, "x"]}, schema))[-1] == {
        "reason": "FieldValueInvalid",
        "message": 'Invalid value: "x": must be an object for an array of list-type map',
        "field": "m[1]",
    }


def test_list_types_are_checked_inside_maps_with_bracketed_keys() -> None:
    set_schema = {"type": "array", "x-kubernetes-list-type": "set"}
    schema = obj_schema(byName={"type": "object", "additionalProperties": set_schema})
    assert causes(validate({"byName": {"x": [1, 1]}}, schema)) == [
        {"reason": "FieldValueDuplicate", "message": "Duplicate value: 1", "field": "byName[x][1]"}
    ]


# --- embedded resources ----------------------------------------------------------------------------


def test_embedded_resource_needs_api_version_and_kind_and_valid_metadata() -> None:
    embedded = {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
    }
    schema = obj_schema(spec=obj_schema(template=embedded))
    result = validate(
        {"spec": {"template": {"metadata": {"name": "a/b", "labels": {"k": "-"}}}}}, schema
    )
    assert [str(c) for c in result] == [
        "spec.template.apiVersion: Required value",
        "spec.template.kind: Required value",
        "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'",
        'spec.template.metadata.labels: Invalid value: "-": a valid label must be an empty string or consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
        "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ]
    ok = {"spec": {"template": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}}}
    assert validate(ok, schema) == []


# --- Go formatting ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "v", "json_text"),
    [
        (1.0, "1", "1"),
        (1e6, "1e+06", "1000000"),
        (123456.0, "123456", "123456"),
        (1e-7, "1e-07", "1e-7"),
        (1e21, "1e+21", "1e+21"),
        (0.1, "0.1", "0.1"),
        (-2.5, "-2.5", "-2.5"),
    ],
)
def test_go_float_formatting(value: float, v: str, json_text: str) -> None:
    assert go_value(value) == v
    assert go_json(value) == json_text


def test_go_quote_and_json_escapes() -> None:
    assert go_quote('a"b\\c\n\x01\u00a0é') == '"a\\"b\\\\c\\n\\x01\\u00a0é"'
    assert (
        go_json({"b": [1, None, True], "a": "<&>"})
        == '{"a":"\\u003c\\u0026\\u003e","b":[1,null,true]}'
    )


def test_compiled_schema_is_cached_by_identity() -> None:
    schema = obj_schema(a={"type": "string"})
    assert compile_schema(schema) is compile_schema(schema)
    assert compile_schema(compile_schema(schema)) is compile_schema(schema)


# --- ObjectMeta ------------------------------------------------------------------------------------


def test_object_meta_requires_a_name_unless_generate_name() -> None:
    assert causes(validate_object_meta({"namespace": "ns"}, True)) == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value: name or generateName is required",
            "field": "metadata.name",
        }
    ]
    assert validate_object_meta({"generateName": "web-", "namespace": "ns"}, True) == []


def test_object_meta_generate_name_is_checked_as_a_prefix() -> None:
    assert validate_object_meta({"generateName": "kopf-event-"}, False) == []
    result = validate_object_meta({"generateName": "Bad_"}, False)
    assert [c.field for c in result] == ["metadata.generateName"]


def test_a_core_v1_event_may_own_nothing() -> None:
    """apimachinery's BannedOwners (pkg/api/validation/objectmeta.go): /v1 Event only, by its group and
    version (an events.k8s.io Event may own, kube answers the same)."""

    def owned_by(api_version: str) -> dict[str, Any]:
        owner = {"apiVersion": api_version, "kind": "Event", "name": "e", "uid": "u1"}
        return {"name": "a", "ownerReferences": [owner]}

    (cause,) = validate_object_meta(owned_by("v1"), False)
    assert cause.field == "metadata.ownerReferences"
    assert cause.message.endswith(": /v1, Kind=Event is disallowed from being an owner")
    assert validate_object_meta(owned_by("events.k8s.io/v1"), False) == []


def test_object_meta_namespace_per_scope() -> None:
    assert causes(validate_object_meta({"name": "a"}, True)) == [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "metadata.namespace"}
    ]
    assert causes(validate_object_meta({"name": "a", "namespace": "x"}, False)) == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: not allowed on this type",
            "field": "metadata.namespace",
        }
    ]
    assert [c.field for c in validate_object_meta({"name": "a", "namespace": "Bad"}, True)] == [
        "metadata.namespace"
    ]


def test_object_meta_label_keys() -> None:
    result = validate_object_meta(
        {"name": "a", "labels": {"example.com/": "v", "a/b/c": "v"}}, False
    )
    assert [c.message for c in result] == [
        'Invalid value: "example.com/": name part must be non-empty',
        "Invalid value: \"example.com/\": name part must consist of alphanumeric characters, '-', '_' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        "Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
        "subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ]


def test_object_meta_annotations_total_size() -> None:
    assert (
        validate_object_meta({"name": "a", "annotations": {"k": "v" * (256 * 1024 - 1)}}, False)
        == []
    )
    result = validate_object_meta({"name": "a", "annotations": {"k": "v" * (256 * 1024)}}, False)
    assert causes(result) == [
        {
            "reason": "FieldValueTooLong",
            "message": "Too long: may not be more than 262144 bytes",
            "field": "metadata.annotations",
        }
    ]


def test_object_meta_annotations_size_is_counted_in_utf8_bytes() -> None:
    # ValidateAnnotationsSize sums len(k) + len(v) of Go strings: bytes, so "é" counts twice
    under = {"k": "é" * (128 * 1024 - 1)}
    assert validate_object_meta({"name": "a", "annotations": under}, False) == []
    over = {"k": "é" * (128 * 1024)}
    assert [c.field for c in validate_object_meta({"name": "a", "annotations": over}, False)] == [
        "metadata.annotations"
    ]


def test_object_meta_finalizers_and_managed_fields() -> None:
    meta = {
        "name": "a",
        "finalizers": ["orphan", "foregroundDeletion"],
        "managedFields": [{"manager": "m", "operation": "Patch", "fieldsType": "FieldsV2"}],
    }
    assert [str(c) for c in validate_object_meta(meta, False)] == [
        'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and '
        "foregroundDeletion cannot be both set",
        'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`',
        'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
    ]


def test_object_meta_wrong_json_types_are_causes_not_exceptions() -> None:
    result = validate_object_meta({"name": "a", "labels": ["x"], "annotations": {"k": 1}}, False)
    assert [c.field for c in result] == ["metadata.labels", "metadata.annotations.k"]


# --- the real server's answers (validation-cases/kubectl-validate) ----------------------------------


def recorded_status(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The Status recorded in the leading comment of a case file, and the manifest after it."""
    text = path.read_text()
    comment = "\n".join(
        line[1:].strip()
        for line in text.splitlines()
        if line.startswith("#") and not line.startswith("#!")
    )
    status, _ = json.JSONDecoder().raw_decode(comment[comment.index("{") :])
    return status, next(d for d in yaml.load_all(text, Loader=LOADER) if d)


def expected_causes(status: dict[str, Any]) -> list[dict[str, str]]:
    return [
        {"reason": c["reason"], "message": c["message"], "field": c["field"]}
        for c in status.get("details", {}).get("causes", [])
    ]


@cache
def cel_basic_schema() -> dict[str, Any]:
    docs = load_yaml_all(CASES / "crds" / "cel_basic.yaml")
    crd = next(d for d in docs if d and d.get("kind") == "CustomResourceDefinition")
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def apiserver_causes(obj: dict[str, Any], schema: dict[str, Any], namespaced: bool) -> list[Cause]:
    """What the apiserver does on a create: prune, drop nulls, default, validate metadata and schema,
    then evaluate the ``x-kubernetes-validations`` rules (the built-in kinds' schemas here have none).
    The namespace comes from the URL in a real request, so it is set here."""
    prune(obj, schema)
    prune_nulls(obj, schema)
    apply_defaults(obj, schema)
    metadata = dict(obj.get("metadata") or {})
    if namespaced:
        metadata.setdefault("namespace", "default")
    found = validate_object_meta(metadata, namespaced) + validate(obj, schema)
    return found + validate_rules(obj, None, schema, found)


@pytest.mark.parametrize(
    "case", ["error_x_list_map_default", "error_cel_basic", "error_cel_basic_multiple"]
)
def test_real_server_cel_basic_crd(case: str) -> None:
    """Cases against the cel_basic CRD: defaulting fills protocol=TCP, then the list-map keys collide;
    the CEL cases fail its ``x-kubernetes-validations`` rules with kube's messages."""
    status, obj = recorded_status(CASES / "manifests" / f"{case}.yaml")
    assert causes(apiserver_causes(obj, cel_basic_schema(), namespaced=True)) == expected_causes(
        status
    )


# Built-in kinds are validated by kubectl-validate (which recorded these answers) with the same
# kube-openapi validator over the kinds' published OpenAPI v3 schemas; the 1.35 documents in
# tests/fixtures/kubernetes/openapi-v3 are resolved into a single CRD-style schema here.

_OPENAPI = FIXTURES / "kubernetes" / "openapi-v3"


@cache
def _components() -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    for name in ("api__v1_openapi.json", "apis__apps__v1_openapi.json"):
        schemas.update(json.loads((_OPENAPI / name).read_text())["components"]["schemas"])
    return schemas


def _inline(node: Any) -> Any:
    """Resolve $refs; a single-element allOf (how OpenAPI v3 wraps a $ref with a default) is merged."""
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _inline(_components()[node["$ref"].rsplit("/", 1)[1]])
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "allOf" and len(value) == 1:
            for k, v in _inline(value[0]).items():
                out.setdefault(k, v)
        elif key == "properties":
            out[key] = {k: _inline(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not"):
            out[key] = _inline(value)
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [_inline(v) for v in value]
        else:
            out[key] = value
    if out.get("format") == "int-or-string":  # kubectl-validate's reading of IntOrString
        out.pop("oneOf", None)
        out["x-kubernetes-int-or-string"] = True
    return out


@cache
def builtin_schema(name: str, protocol_enum: bool = False) -> dict[str, Any]:
    schema: dict[str, Any] = _inline(_components()[name])
    if protocol_enum:
        # The 1.35 document dropped the enum the case files quote; put the quoted one back.
        container = schema["properties"]["spec"]["properties"]["containers"]["items"]
        container["properties"]["ports"]["items"]["properties"]["protocol"]["enum"] = [
            "SCTP",
            "TCP",
            "UDP",
        ]
    return schema


POD = "io.k8s.api.core.v1.Pod"
CONFIGMAP = "io.k8s.api.core.v1.ConfigMap"
SECRET = "io.k8s.api.core.v1.Secret"
DEPLOYMENT = "io.k8s.api.apps.v1.Deployment"


@pytest.mark.parametrize(
    ("case", "kind", "protocol_enum"),
    [
        ("error_array_instead_of_map", CONFIGMAP, False),
        ("error_quantity", POD, False),
        ("error_x_list_map_duplicate_key", POD, False),
        ("x_list_map_nonduplicate_key", POD, False),
        ("error_enum_invalid", POD, True),
        ("error_invalid_protocol_type", POD, True),
        ("configmap", CONFIGMAP, False),
        ("empty_secret", SECRET, False),
        ("deployment_with_strategy", DEPLOYMENT, False),
        ("error_invalid_name", CONFIGMAP, False),
        ("error_invalid_label", CONFIGMAP, False),
        ("error_name_exceeds_max_length", CONFIGMAP, False),
        ("error_missing_name", CONFIGMAP, False),
        pytest.param(
            "error_missing_image",
            POD,
            False,
            marks=pytest.mark.xfail(
                strict=True,
                reason="Pod is not served (builtin/definitions/core holds no Pod): kube requires the "
                "image in Pod's hand-written validation (pkg/apis/core/validation), which its schema "
                "checked here does not carry",
            ),
        ),
    ],
)
def test_real_server_builtin_kinds(case: str, kind: str, protocol_enum: bool) -> None:
    status, obj = recorded_status(CASES / "manifests" / f"{case}.yaml")
    schema = builtin_schema(kind, protocol_enum)
    assert causes(apiserver_causes(obj, schema, namespaced=True)) == expected_causes(status)


@pytest.mark.parametrize(
    "case", ["error_misspelled_key", "error_indentation", "error_multiple_resources_one_invalid"]
)
def test_real_server_unknown_fields_are_the_pruned_paths(case: str) -> None:
    """kubectl-validate reports unknown fields as "value provided for unknown field" causes; kube-apiserver
    reports the same paths as ``strict decoding error: unknown field "<path>"``. The paths must agree."""
    status, obj = recorded_status(CASES / "manifests" / f"{case}.yaml")
    assert prune(obj, builtin_schema(POD)) == [c["field"] for c in expected_causes(status)]
