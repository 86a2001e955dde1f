"""Operation sequences from sigs.k8s.io/structured-merge-diff's merge tests (merge/set_test.go
``TestUpdateSet``, merge/key_test.go ``TestUpdateAssociativeLists``, merge/leaf_test.go
``TestUpdateLeaf``), replayed through ``apply``/``update_managed_fields`` with the same schemas written
as CRD schemas. Each case gives the final object and every manager's set.

Three things differ from the files as stored: list order is not compared, as the fixture's
``typed.Compare`` ignores it for associative lists; objects carry an ``apiVersion`` (``apply`` checks it), and
the leaf cases that drop a field expect it removed, as SMD does since it prunes fields and not only
list and map items ("prune will remove a field, list or map item" in merge/update.go).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from fm_support import stored

from apiserver.fieldmanager import (
    ApplyConflict,
    FieldSet,
    apply,
    path_string,
    update_managed_fields,
)

SETS = {
    "type": "object",
    "properties": {
        "list": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
    },
}
ASSOCIATIVE = {
    "type": "object",
    "properties": {
        "list": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "value": {"type": "number"}},
            },
        }
    },
}
LEAVES = {
    "type": "object",
    "properties": {
        "numeric": {"type": "number"},
        "string": {"type": "string"},
        "bool": {"type": "boolean"},
    },
}


@dataclass
class Op:
    kind: str  # "apply", "force", "update"
    manager: str
    version: str
    obj: dict[str, Any]
    conflicts: list[tuple[str, str]] = field(default_factory=list)


def A(manager: str, version: str, obj: dict[str, Any], *conflicts: tuple[str, str]) -> Op:
    return Op("apply", manager, version, obj, list(conflicts))


def F(manager: str, version: str, obj: dict[str, Any]) -> Op:
    return Op("force", manager, version, obj)


def U(manager: str, version: str, obj: dict[str, Any]) -> Op:
    return Op("update", manager, version, obj)


def sv(*values: str) -> list[tuple[str, ...]]:
    return [("f:list", f'v:"{v}"') for v in values]


def kv(name: str, *fields: str) -> list[tuple[str, ...]]:
    item = f'k:{{"name":"{name}"}}'
    return [("f:list", item), *[("f:list", item, f"f:{f}") for f in fields]]


def run(
    schema: dict[str, Any],
    ops: list[Op],
) -> tuple[dict[str, Any], dict[str, tuple[str, FieldSet]]]:
    live: dict[str, Any] | None = None
    for i, op in enumerate(ops):
        now = f"2024-01-01T00:00:{i:02d}Z"
        obj = {"apiVersion": op.version, "kind": "T", **op.obj}
        if op.kind == "update":
            managed = update_managed_fields(
                live, obj, schema, op.manager, api_version=op.version, now=now
            )
            live = stored(obj, managed)
            continue
        try:
            result, managed = apply(
                live,
                obj,
                schema,
                op.manager,
                api_version=op.version,
                force=op.kind == "force",
                now=now,
            )
        except ApplyConflict as conflict:
            found = [(c.manager, c.field) for c in conflict.conflicts]
            assert found == op.conflicts, f"op {i}"
            continue
        assert not op.conflicts, f"op {i} should have conflicted"
        live = stored(result, managed)
    assert live is not None
    content = {k: v for k, v in live.items() if k not in ("apiVersion", "kind", "metadata")}
    sets = {
        e["manager"]: (e["apiVersion"], FieldSet.from_fields_v1(e["fieldsV1"]))
        for e in live["metadata"].get("managedFields", [])
    }
    return content, sets


CASES: dict[
    str, tuple[dict[str, Any], list[Op], dict[str, Any], dict[str, tuple[str, list[Any]]]]
] = {
    # merge/set_test.go
    "set/apply_twice": (
        SETS,
        [
            A("default", "v1", {"list": ["a", "c"]}),
            A("default", "v1", {"list": ["a", "b", "c", "d"]}),
        ],
        {"list": ["a", "b", "c", "d"]},
        {"default": ("v1", sv("a", "b", "c", "d"))},
    ),
    "set/apply_update_apply_no_overlap": (
        SETS,
        [
            A("default", "v1", {"list": ["a", "c"]}),
            U("controller", "v1", {"list": ["a", "b", "c", "d"]}),
            A("default", "v1", {"list": ["a", "aprime", "c", "cprime"]}),
        ],
        {"list": ["a", "aprime", "b", "c", "cprime", "d"]},
        {
            "default": ("v1", sv("a", "aprime", "c", "cprime")),
            "controller": ("v1", sv("b", "d")),
        },
    ),
    "set/apply_update_apply_with_overlap": (
        SETS,
        [
            A("default", "v1", {"list": ["a", "c"]}),
            U("controller", "v1", {"list": ["a", "b", "c", "d"]}),
            A("default", "v1", {"list": ["a", "b", "c"]}),
        ],
        {"list": ["a", "b", "c", "d"]},
        {"default": ("v1", sv("a", "b", "c")), "controller": ("v1", sv("b", "d"))},
    ),
    "set/apply_twice_reorder": (
        SETS,
        [
            A("default", "v1", {"list": ["a", "b", "c", "d"]}),
            A("default", "v1", {"list": ["a", "d", "c", "b"]}),
        ],
        {"list": ["a", "d", "c", "b"]},
        {"default": ("v1", sv("a", "b", "c", "d"))},
    ),
    "set/apply_update_apply_reorder": (
        SETS,
        [
            A("default", "v1", {"list": ["a", "b", "c", "d"]}),
            U("controller", "v1", {"list": ["a", "d", "c", "b"]}),
            A("default", "v1", {"list": ["a", "b", "c", "d"]}),
        ],
        {"list": ["a", "b", "c", "d"]},
        {"default": ("v1", sv("a", "b", "c", "d"))},
    ),
    "set/apply_twice_remove": (
        SETS,
        [
            A("default", "v1", {"list": ["a", "b", "c", "d"]}),
            A("default", "v1", {"list": ["a", "c"]}),
        ],
        {"list": ["a", "c"]},
        {"default": ("v1", sv("a", "c"))},
    ),
    "set/apply_twice_remove_across_versions": (
        SETS,
        [
            A("default", "v1", {"list": ["a", "b", "c", "d"]}),
            A("default", "v2", {"list": ["a", "c", "e"]}),
        ],
        {"list": ["a", "c", "e"]},
        {"default": ("v2", sv("a", "c", "e"))},
    ),
    # merge/key_test.go
    "key/removing_obsolete_applied_structs": (
        ASSOCIATIVE,
        [
            A("default", "v1", {"list": [{"name": "a", "value": 1}]}),
            A("default", "v1", {"list": [{"name": "b", "value": 2}]}),
        ],
        {"list": [{"name": "b", "value": 2}]},
        {"default": ("v1", kv("b", "name", "value"))},
    ),
    # merge/leaf_test.go
    "leaf/apply_twice": (
        LEAVES,
        [
            A("default", "v1", {"numeric": 1, "string": "string"}),
            A("default", "v1", {"numeric": 2, "string": "string", "bool": False}),
        ],
        {"numeric": 2, "string": "string", "bool": False},
        {"default": ("v1", [("f:numeric",), ("f:string",), ("f:bool",)])},
    ),
    "leaf/apply_update_apply_no_conflict": (
        LEAVES,
        [
            A("default", "v1", {"numeric": 1, "string": "string"}),
            U("controller", "v1", {"numeric": 1, "string": "string", "bool": True}),
            A("default", "v1", {"numeric": 2, "string": "string"}),
        ],
        {"numeric": 2, "string": "string", "bool": True},
        {
            "default": ("v1", [("f:numeric",), ("f:string",)]),
            "controller": ("v1", [("f:bool",)]),
        },
    ),
    "leaf/apply_update_apply_with_conflict": (
        LEAVES,
        [
            A("default", "v1", {"numeric": 1, "string": "string"}),
            U("controller", "v1", {"numeric": 1, "string": "controller string", "bool": True}),
            A("default", "v1", {"numeric": 2, "string": "user string"}, ("controller", ".string")),
            F("default", "v1", {"numeric": 2, "string": "user string"}),
        ],
        {"numeric": 2, "string": "user string", "bool": True},
        {
            "default": ("v1", [("f:numeric",), ("f:string",)]),
            "controller": ("v1", [("f:bool",)]),
        },
    ),
    "leaf/apply_twice_dangling": (
        LEAVES,
        [
            A("default", "v1", {"numeric": 1, "string": "string", "bool": False}),
            A("default", "v1", {"string": "new string"}),
        ],
        {"string": "new string"},
        {"default": ("v1", [("f:string",)])},
    ),
    "leaf/update_remove_empty_set": (
        LEAVES,
        [A("default", "v1", {"string": "string"}), U("controller", "v1", {"string": "new string"})],
        {"string": "new string"},
        {"controller": ("v1", [("f:string",)])},
    ),
    "leaf/apply_remove_empty_set": (
        LEAVES,
        [A("default", "v1", {"string": "string"}), A("default", "v1", {})],
        {},
        {},
    ),
}


def unordered(content: dict[str, Any]) -> dict[str, Any]:
    items = content.get("list")
    if items is None:
        return content
    return {**content, "list": sorted(items, key=repr)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_smd_merge_case(name: str) -> None:
    schema, ops, expected_object, expected_sets = CASES[name]
    content, sets = run(schema, ops)
    # The fixture compares with typed.Compare, for which associative lists have no order (the order
    # apply produces is pinned by test_server_side_apply instead).
    assert unordered(content) == unordered(expected_object)
    assert {m: (v, sorted(path_string(p) for p in s.paths())) for m, (v, s) in sets.items()} == {
        m: (v, sorted(path_string(p) for p in paths)) for m, (v, paths) in expected_sets.items()
    }
