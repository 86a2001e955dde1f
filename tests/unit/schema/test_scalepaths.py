"""kube's checks of a custom resource's scale paths (ValidateScaleSpec and ValidateScaleStatus in
staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource/validator.go), worded as kube words
them: unstructured.NestedInt64's and NestedString's accessor errors
(staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/helpers.go) with Go's %v and %T."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.machinery.scheme import ScaleSpec
from apiserver.schema.scalepaths import scale_causes, scale_spec_causes, scale_status_causes

SCALE = ScaleSpec(".spec.replicas", ".status.replicas", ".status.labelSelector")

SPEC_CASES: list[tuple[str, Any, list[str]]] = [
    ("absent", {}, []),
    ("zero", {"spec": {"replicas": 0}}, []),
    ("max-int32", {"spec": {"replicas": 2**31 - 1}}, []),
    (
        "negative",
        {"spec": {"replicas": -1}},
        ["Invalid value: -1: should be a non-negative integer"],
    ),
    (
        "over-int32",
        {"spec": {"replicas": 2**31}},
        ["Invalid value: 2147483648: should be less than or equal to 2147483647"],
    ),
    (
        "string",
        {"spec": {"replicas": "two"}},
        [
            "Invalid value: 0: .spec.replicas accessor error: two is of the type string, "
            "expected int64"
        ],
    ),
    (
        "float",
        {"spec": {"replicas": 1.5}},
        [
            "Invalid value: 0: .spec.replicas accessor error: 1.5 is of the type float64, "
            "expected int64"
        ],
    ),
    (
        "bool",
        {"spec": {"replicas": True}},
        [
            "Invalid value: 0: .spec.replicas accessor error: true is of the type bool, expected int64"
        ],
    ),
    (
        "list",
        {"spec": {"replicas": [1, "a"]}},
        [
            "Invalid value: 0: .spec.replicas accessor error: [1 a] is of the type []interface {}, "
            "expected int64"
        ],
    ),
    (
        "map",
        {"spec": {"replicas": {"b": 2, "a": "x"}}},
        [
            "Invalid value: 0: .spec.replicas accessor error: map[a:x b:2] is of the type "
            "map[string]interface {}, expected int64"
        ],
    ),
    (
        "null",
        {"spec": {"replicas": None}},
        [
            "Invalid value: 0: .spec.replicas accessor error: <nil> is of the type <nil>, "
            "expected int64"
        ],
    ),
    ("null-parent", {"spec": None}, []),
    (
        "parent-not-an-object",
        {"spec": "x"},
        [
            "Invalid value: 0: .spec.replicas accessor error: x is of the type string, "
            "expected map[string]interface{}"
        ],
    ),
]


@pytest.mark.parametrize(
    ("obj", "messages"), [case[1:] for case in SPEC_CASES], ids=[case[0] for case in SPEC_CASES]
)
def test_spec_replicas(obj: dict[str, Any], messages: list[str]) -> None:
    causes = scale_spec_causes(obj, SCALE)
    assert [c.message for c in causes] == messages
    assert {(c.reason, c.field) for c in causes} <= {("FieldValueInvalid", ".spec.replicas")}


STATUS_CASES: list[tuple[str, Any, list[tuple[str, str]]]] = [
    ("absent", {}, []),
    ("valid", {"status": {"replicas": 2, "labelSelector": "app=a"}}, []),
    (
        "negative-replicas",
        {"status": {"replicas": -3}},
        [(".status.replicas", "Invalid value: -3: should be a non-negative integer")],
    ),
    (
        "selector-not-a-string",
        {"status": {"labelSelector": {"app": "a"}}},
        [
            (
                ".status.labelSelector",
                'Invalid value: "": .status.labelSelector accessor error: map[app:a] is of the '
                "type map[string]interface {}, expected string",
            )
        ],
    ),
    (
        "both",
        {"status": {"replicas": "1", "labelSelector": 5}},
        [
            (
                ".status.replicas",
                "Invalid value: 0: .status.replicas accessor error: 1 is of the type string, "
                "expected int64",
            ),
            (
                ".status.labelSelector",
                'Invalid value: "": .status.labelSelector accessor error: 5 is of the type int64, '
                "expected string",
            ),
        ],
    ),
]


@pytest.mark.parametrize(
    ("obj", "expected"),
    [case[1:] for case in STATUS_CASES],
    ids=[case[0] for case in STATUS_CASES],
)
def test_status_replicas_and_selector(obj: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert [(c.field, c.message) for c in scale_status_causes(obj, SCALE)] == expected


def test_a_kind_without_scale_subresource_has_no_such_checks() -> None:
    obj = {"spec": {"replicas": -1}, "status": {"replicas": "x"}}
    assert scale_spec_causes(obj, None) == scale_status_causes(obj, None) == []


def test_the_selector_is_not_checked_without_a_selector_path() -> None:
    scale = ScaleSpec(".spec.replicas", ".status.replicas")
    assert scale_status_causes({"status": {"labelSelector": 1}}, scale) == []


EXTRA_CASES: list[Any] = [
    {"spec": None},
    {"spec": {"replicas": None}},
    {"spec": {"replicas": True}},
    {"spec": [1]},
    {"spec": {"replicas": 1}, "status": {"replicas": 1, "labelSelector": None}},
    {"status": {"replicas": 2**31}},
    {"status": "x"},
    {"spec": {"a": {"replicas": -1}}},
    {"spec": {"a": {"replicas": 2}}, "status": {"a": None}},
    {"spec": {"a": 5}},
]


@pytest.mark.parametrize(
    "obj", [case[1] for case in SPEC_CASES + STATUS_CASES] + EXTRA_CASES, ids=repr
)
def test_a_write_is_passed_at_once_only_where_the_checks_find_nothing(obj: dict[str, Any]) -> None:
    deeper = ScaleSpec(".spec.a.replicas", ".status.a.replicas", ".status.a.labelSelector")
    for scale in (SCALE, ScaleSpec(".spec.replicas", ".status.replicas"), deeper):
        spec, status = scale_spec_causes(obj, scale), scale_status_causes(obj, scale)
        assert scale_causes(obj, scale, spec=True) == spec + status
        assert scale_causes(obj, scale, spec=False) == status
    assert scale_causes(obj, None, spec=True) == []
