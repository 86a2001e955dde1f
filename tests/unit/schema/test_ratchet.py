"""Validation ratcheting of schema errors (KEP-4008): an update may keep a value that a stricter schema
now refuses, as long as it leaves that value as it was."""

from __future__ import annotations

from typing import Any

from apiserver.schema import validate
from apiserver.schema.ratchet import ratchet

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["owner"],
            "properties": {
                "owner": {"type": "string"},
                "name": {"type": "string", "maxLength": 3},
                "other": {"type": "integer"},
                "labels": {
                    "type": "object",
                    "additionalProperties": {"type": "string", "maxLength": 2},
                },
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string"},
                            "port": {"type": "integer", "maximum": 10},
                        },
                    },
                },
                "plain": {"type": "array", "items": {"type": "integer", "maximum": 10}},
                "tags": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string", "maxLength": 2},
                },
            },
        }
    },
}


def fields(new: dict[str, Any], old: dict[str, Any] | None) -> list[str]:
    return [c.field for c in ratchet(validate(new, SCHEMA), new, old, SCHEMA)]


def test_an_unchanged_invalid_value_passes_and_a_changed_one_does_not() -> None:
    old = {"spec": {"owner": "o", "name": "toolong", "other": 1}}
    assert fields({"spec": {"owner": "o", "name": "toolong", "other": 2}}, old) == []
    assert fields({"spec": {"owner": "o", "name": "stilltoolong", "other": 2}}, old) == [
        "spec.name"
    ]
    assert fields({"spec": {"owner": "o", "name": "toolong", "other": 2}}, None) == ["spec.name"]


def test_required_belongs_to_the_object_that_lacks_the_field() -> None:
    old = {"spec": {"name": "a"}}
    assert fields({"spec": {"name": "a"}, "status": {}}, old) == []  # spec unchanged
    assert fields({"spec": {"name": "b"}}, old) == ["spec.owner"]  # spec changed: required again


def test_map_values_and_map_list_items_correlate_by_key() -> None:
    old = {
        "spec": {
            "owner": "o",
            "labels": {"a": "long"},
            "ports": [{"name": "x", "port": 99}, {"name": "y", "port": 1}],
        }
    }
    moved = {
        "spec": {
            "owner": "o",
            "other": 1,
            "labels": {"a": "long", "b": "ok"},
            "ports": [{"name": "y", "port": 2}, {"name": "x", "port": 99}],
        }
    }
    assert fields(moved, old) == []
    changed = {
        "spec": {"owner": "o", "labels": {"a": "longer"}, "ports": [{"name": "x", "port": 98}]}
    }
    assert fields(changed, old) == ["spec.labels.a", "spec.ports[0].port"]


def test_plain_lists_and_sets_ratchet_only_as_a_whole() -> None:
    """Their items do not correlate (kube's CorrelatedObject: atomic and set lists), so a list that
    changes anywhere is checked item by item again."""
    old = {"spec": {"owner": "o", "plain": [99, 1], "tags": ["long"]}}
    assert (
        fields({"spec": {"owner": "o", "other": 1, "plain": [99, 1], "tags": ["long"]}}, old) == []
    )
    assert fields({"spec": {"owner": "o", "plain": [99, 2], "tags": ["long", "ok"]}}, old) == [
        "spec.plain[0]",
        "spec.tags[0]",
    ]


def test_values_are_unchanged_only_when_deeply_equal_with_their_json_types() -> None:
    """reflect.DeepEqual: 1, 1.0 and true are three different values."""
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    found = validate({"a": True}, schema)
    assert [c.field for c in ratchet(found, {"a": True}, {"a": 1}, schema)] == ["a"]
    assert ratchet(found, {"a": True}, {"a": True}, schema) == []


def test_map_keys_with_dots_and_map_list_items_without_keys() -> None:
    old = {
        "spec": {
            "owner": "o",
            "labels": {"a": "x", "app.kubernetes.io/name": "long"},
            "ports": [{"port": 99}],
        }
    }
    new = {
        "spec": {
            "owner": "o",
            "labels": {"a": "x", "a.b": "long", "app.kubernetes.io/name": "long"},
            "ports": [{"name": "p", "port": 1}, {"port": 99}],
        }
    }
    assert fields(new, old) == ["spec.labels.a.b", "spec.ports[1].port", "spec.ports[1].name"]


def test_an_embedded_resources_own_fields_are_never_ratcheted() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "t": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": True,
                        "x-kubernetes-preserve-unknown-fields": True,
                    },
                    "n": {"type": "integer"},
                },
            }
        },
    }
    stored = {
        "spec": {"t": {"apiVersion": "v1", "metadata": {"labels": {"bad key!": "x"}}}, "n": 1}
    }
    new = {"spec": {**stored["spec"], "n": 2}}
    found = validate(new, schema)
    assert found and [c.field for c in ratchet(found, new, stored, schema)] == [
        c.field for c in found
    ]


def test_odd_paths_never_raise() -> None:
    schema = {
        "type": "object",
        "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "array", "maxItems": 1}}
        },
    }
    new = {"m": {"x": ["a"], "x[²]": ["a", "b"], "x[٣]": ["a", "b"]}}
    found = validate(new, schema)
    assert [c.field for c in ratchet(found, new, {"m": {"x": []}}, schema)] == [
        c.field for c in found
    ]
