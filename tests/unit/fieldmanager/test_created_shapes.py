"""A create's managedFields, built in one walk and remembered by the object's shape
(``apiserver.fieldmanager.created``), against the general walk: SMD's ``Compare`` of the new object with
nothing (``compare_objects``), encoded by ``encode_fields_v1`` (the fieldpath serialization: sorted,
``f:``/``k:``/``v:`` keys, ``.`` markers), byte for byte.

The objects are random, drawn from the repository's real schemas (the built-in and example kinds it
generates, and the CRDs vendored under tests/fixtures), with keys and strings from small alphabets, so that
the shapes the walk remembers recur across examples with other values, other items and other orders:
a set remembered for a shape must be right for every object of that shape.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apiserver.fieldmanager import update_managed_fields
from apiserver.fieldmanager.created import created_fields
from apiserver.fieldmanager.fieldpath import encode_fields_v1
from apiserver.fieldmanager.typed import TypedError, compare_objects
from apiserver.fieldmanager.typeinfo import compile_types
from tests.serverproc import FIXTURES

REPO = Path(__file__).resolve().parents[3]
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DEPTH = 4
"""How deep the drawn objects go below the top level (the big CRDs nest much deeper)."""
NOW = "2024-01-01T00:00:00Z"


def _generated() -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted(REPO.glob("generated/*/*/schemas.json")):
        for kind, schema in json.loads(path.read_text()).items():
            yield f"{path.parent.parent.name}/{path.parent.name}/{kind}", schema


def _crds() -> Iterator[tuple[str, dict[str, Any]]]:
    paths = glob.glob(str(FIXTURES / "crds" / "**" / "*.yaml"), recursive=True)
    paths += glob.glob(str(FIXTURES / "crd-corpus" / "*" / "*.yaml"))
    for path in sorted(paths):
        for doc in yaml.load_all(Path(path).read_text(), Loader=LOADER):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            for version in spec.get("versions") or []:
                schema = (version.get("schema") or spec.get("validation") or {}).get(
                    "openAPIV3Schema"
                )
                if schema:
                    yield f"{spec['names']['kind']}/{version['name']}", schema


SCHEMAS = dict([*_generated(), *_crds()])

KEYS = st.sampled_from(["a", "b", "name", "x/y", 'q"', "é"])
STRINGS = st.sampled_from(["", "a", "b", "TCP", "<&>", "é", '"'])
SCALARS = st.one_of(st.none(), st.booleans(), st.sampled_from([0, 1, 2, 1.0, -1]), STRINGS)
ANY = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(KEYS, children, max_size=3)
    ),
    max_leaves=6,
)


def values(schema: Any, depth: int) -> st.SearchStrategy[Any]:
    """Values the schema accepts, mostly (a list-type map's item may lack its key, as clients send)."""
    if not isinstance(schema, dict):
        return ANY
    if schema.get("x-kubernetes-int-or-string"):
        return st.one_of(st.sampled_from([0, 80]), STRINGS)
    kind = schema.get("type")
    if kind == "string":
        return STRINGS
    if kind == "integer":
        return st.sampled_from([0, 1, 2])
    if kind == "number":
        return st.sampled_from([0, 1.5])
    if kind == "boolean":
        return st.booleans()
    if depth <= 0:
        return st.one_of(st.none(), st.just({}), st.just([])) if kind is None else _empty(kind)
    if kind == "array":
        return st.none() | st.lists(values(schema.get("items"), depth - 1), max_size=3)
    if kind == "object":
        return st.none() | _objects(schema, depth)  # null: as a client may send it
    return ANY


def _empty(kind: str) -> st.SearchStrategy[Any]:
    return st.just([]) if kind == "array" else st.just({})


def _objects(schema: dict[str, Any], depth: int) -> st.SearchStrategy[dict[str, Any]]:
    properties = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    declared = st.fixed_dictionaries(
        {}, optional={name: values(sub, depth - 1) for name, sub in properties.items()}
    )
    if isinstance(additional, dict):
        others = st.dictionaries(KEYS, values(additional, depth - 1), max_size=3)
    elif additional is True or schema.get("x-kubernetes-preserve-unknown-fields") or not properties:
        others = st.dictionaries(KEYS, ANY, max_size=3)
    else:
        return declared
    return st.builds(lambda a, b: {**b, **a}, declared, others)


METADATA = st.fixed_dictionaries(
    {"name": st.just("o"), "uid": st.just("u"), "creationTimestamp": st.just(NOW)},
    optional={
        "namespace": st.just("default"),
        "generateName": STRINGS,
        "labels": st.dictionaries(KEYS, STRINGS, max_size=4),
        "annotations": st.dictionaries(KEYS, STRINGS, max_size=3),
        "finalizers": st.lists(st.sampled_from(["a", "b/c", "é"]), max_size=3),
        "ownerReferences": st.lists(
            st.fixed_dictionaries(
                {"uid": st.sampled_from(["u1", "u2"]), "kind": st.just("K")},
                optional={"controller": st.booleans()},
            ),
            max_size=2,
        ),
        "generation": st.just(1),
    },
)


def objects(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A whole object as a create stores it: the schema's top-level fields, and ObjectMeta."""
    properties = {
        name: sub
        for name, sub in (schema.get("properties") or {}).items()
        if name not in ("apiVersion", "kind", "metadata")
    }
    return st.builds(
        lambda rest, meta: {"apiVersion": "g/v1", "kind": "K", **rest, "metadata": meta},
        _objects({**schema, "properties": properties}, DEPTH + 1),
        METADATA,
    )


def compared(new: dict[str, Any], root: Any, ignored: tuple[str, ...]) -> Any:
    """The general walk's set, encoded: ``Compare`` with nothing, then ``encode_fields_v1``."""
    try:
        added, modified, removed = compare_objects({}, new, root, ignored)
    except TypedError as error:
        return type(error)
    assert not modified and not removed
    return json.dumps(encode_fields_v1(added))


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_a_create_has_the_set_the_general_walk_finds(name: str) -> None:
    schema = SCHEMAS[name]
    root = compile_types(schema)

    @settings(
        max_examples=25,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(
        st.lists(objects(schema), min_size=1, max_size=3),
        st.sampled_from([(), ("status",), ("spec",)]),
    )
    def check(news: list[dict[str, Any]], ignored: tuple[str, ...]) -> None:
        for new in news:  # several objects of one schema, in one run: shapes seen, then asked again
            want = compared(new, root, ignored)
            try:
                got = created_fields({}, new, root, ignored)
            except TypedError as error:
                assert want is type(error)
                continue
            assert json.dumps(got) == want
            entries = update_managed_fields(
                None, new, schema, "m", api_version="g/v1", now=NOW, ignored_fields=ignored
            )
            want_entries = (
                [
                    {
                        "manager": "m",
                        "operation": "Update",
                        "apiVersion": "g/v1",
                        "time": NOW,
                        "fieldsType": "FieldsV1",
                        "fieldsV1": json.loads(want),
                    }
                ]
                if want != "{}"
                else []
            )
            assert json.dumps(entries) == json.dumps(want_entries)

    check()


def test_every_kind_of_schema_is_drawn() -> None:
    # the built-in kinds, the example kinds and the vendored CRDs (a corpus that failed to load would
    # leave the test above with nothing to hold)
    assert any(name.startswith("core/v1/") for name in SCHEMAS)
    assert "CronTab/v1" in SCHEMAS or "stable_example_com/v1/CronTab" in SCHEMAS
    assert sum(1 for name in SCHEMAS if "/" in name and name[0].isupper()) >= 20


GRANULAR: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "a": {"type": "object", "properties": {"x": {"type": "string"}}},
                "b": {"type": "object", "properties": {"x": {"type": "string"}}},
                "u": {"x-kubernetes-list-type": "set"},  # no type: a map, a list or a scalar
                "tags": {
                    "type": "array",
                    "items": {"x-kubernetes-int-or-string": True},
                    "x-kubernetes-list-type": "set",
                },
            },
        }
    },
}


@pytest.mark.parametrize(
    "specs",
    [
        # the same keys, the set below one or the other: a null is a member with nothing below
        [{"a": None, "b": {"x": "1"}}, {"a": {"x": "1"}, "b": None}],
        [{"a": {}, "b": {"x": "1"}}, {"a": {"x": "1"}, "b": {}}],
        # one untyped member as a map, then as a set with the map's keys for strings
        [{"u": {"p": "1"}}, {"u": ["p"]}, {"u": "p"}],
        # items equal in Python but not in a set: 1, 1.0, True and "1"
        [{"tags": [1]}, {"tags": [True]}, {"tags": [1.0]}, {"tags": ["1"]}],
        # the same keys in another order: one set
        [{"a": {"x": "1"}, "b": None}, {"b": None, "a": {"x": "2"}}],
    ],
)
def test_objects_of_one_shape_but_other_sets_are_told_apart(specs: list[dict[str, Any]]) -> None:
    root = compile_types(GRANULAR)
    for _ in range(2):  # the second round answers from what the first remembered
        for spec in specs:
            new = {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "o"}, "spec": spec}
            assert json.dumps(created_fields({}, new, root)) == compared(new, root, ())
