"""A MutatingAdmissionPolicy's mutations applied to an object (builtin/admissionregistration/mutation.py),
against kube's patchers (k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch: smd.go,
json_patch.go): a merge as server-side apply's, atomic fields refused, type names checked against field
paths, a failed JSONPatch ``test`` leaving the object as it was, and each failure in kube's words without
stopping the mutations after it."""

from __future__ import annotations

from typing import Any

from builtin.admissionregistration.mutation import compile_mutating_policy

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "selector": {
                    "type": "object",
                    "x-kubernetes-map-type": "atomic",
                    "properties": {"app": {"type": "string"}},
                },
                "ports": {"type": "array", "items": {"type": "integer"}},
                "env": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
                    },
                },
            },
        }
    },
}


MEMBERS = {"ApplyConfiguration": "applyConfiguration", "JSONPatch": "jsonPatch"}


def mutated(*mutations: tuple[str, str], obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    listed = [{"patchType": kind, MEMBERS[kind]: {"expression": e}} for kind, e in mutations]
    policy = {"metadata": {"name": "p"}, "spec": {"mutations": listed}}
    compiled = compile_mutating_policy(policy)
    return compiled.mutate(obj, {"object": obj, "oldObject": None}, SCHEMA)


def live() -> dict[str, Any]:
    return {
        "metadata": {"name": "x", "labels": {"a": "1"}},
        "spec": {"replicas": 1, "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
    }


def test_apply_configuration_merges_list_maps_by_key_and_labels_by_name() -> None:
    expression = (
        "Object{metadata: Object.metadata{labels: {'b': '2'}},"
        " spec: Object.spec{env: [Object.spec.env{name: 'B', value: 'changed'}]}}"
    )
    obj, failures = mutated(("ApplyConfiguration", expression), obj=live())
    assert failures == []
    assert obj["metadata"]["labels"] == {"a": "1", "b": "2"}
    assert obj["spec"]["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "changed"}]


def test_atomic_struct_and_list_are_refused() -> None:
    expression = "Object{spec: Object.spec{selector: Object.spec.selector{app: 'x'}, ports: [80]}}"
    obj, failures = mutated(("ApplyConfiguration", expression), obj=live())
    assert obj == live()
    [failure] = failures
    prefix = "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: "
    assert failure.startswith(prefix)
    # the fields in the order the map yields them (kube's is Go's map order)
    assert sorted(failure.removeprefix(prefix).split(", ")) == [".spec.ports", ".spec.selector"]


def test_type_names_must_follow_the_field_path() -> None:
    expression = "Object{spec: Object.spec{selector: Object.spec.wrong{app: 'x'}}}"
    _, failures = mutated(("ApplyConfiguration", expression), obj=live())
    assert failures == [
        'type mismatch: unexpected type name "Object.spec.wrong", expected "Object.spec.selector", '
        "which matches field name path from root Object type"
    ]


def test_a_failed_test_operation_leaves_the_object_and_the_next_mutation_runs() -> None:
    guarded = "[JSONPatch{op: 'test', path: '/spec/replicas', value: 5}, JSONPatch{op: 'replace', path: '/spec/replicas', value: 9}]"  # fmt: skip
    failing = "[JSONPatch{op: 'remove', path: '/spec/missing'}]"
    then = "[JSONPatch{op: 'add', path: '/metadata/labels/c', value: '3'}]"
    obj, failures = mutated(
        ("JSONPatch", guarded), ("JSONPatch", failing), ("JSONPatch", then), obj=live()
    )
    assert obj["spec"]["replicas"] == 1
    assert obj["metadata"]["labels"] == {"a": "1", "c": "3"}
    assert failures == [
        "JSONPath: error in remove for path: '/spec/missing': Unable to remove nonexistent key: "
        "missing: missing value"
    ]


def test_wrong_result_types() -> None:
    _, failures = mutated(
        ("JSONPatch", "[{'op': 'add'}]"),
        ("JSONPatch", "JSONPatch{op: 'add', path: '/a', value: 1}"),
        ("ApplyConfiguration", "{'spec': {}}"),
        obj=live(),
    )
    assert failures == [
        "type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch",
        "type mismatch: JSONPatchType.expression should evaluate to array",
        "unsupported return type from ApplyConfiguration expression: map",
    ]


def test_fields_the_schema_does_not_declare_are_refused() -> None:
    expression = (
        "Object{spec: Object.spec{replicaz: 3}, metadata: Object.metadata{labels: {'x': 'y'}}}"
    )
    obj, failures = mutated(("ApplyConfiguration", expression), obj=live())
    assert obj == live()
    assert failures == [
        "error applying patch: failed to convert patch object to typed object: .spec.replicaz: field "
        "not declared in schema"
    ]
