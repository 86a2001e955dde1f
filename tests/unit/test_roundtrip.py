"""Conversion properties, the analog of kube's fuzz round-trip tests, for every served version of every shipped
kind and of the kinds of tests/convertproject (fields moved into and out of nested objects two levels deep, a
whole object renamed, hooks beside a rename):

- an object drawn from the hub's schema, converted to a version, has no field outside that version's schema
  (the runtime's pruning finds none: a strict write of it back is accepted), and converts back to the hub
  losing nothing but empty parents of moved fields;
- an object drawn from a version's schema converts to the hub with no field outside the hub's schema, and back
  to the version unchanged but for empty parents of moved fields;
- an object converted from one non-hub version to another (through the hub) has no field outside the other's
  schema and converts back losing nothing but empty parents of moved fields;
- conversion never mutates its input.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apiserver.machinery.scheme import ResourceType, VersionType
from apiserver.schema.pruning import prune
from generated.server import build_scheme
from generator.load import load_definitions
from tests.convertproject import (
    FieldPath,
    definitions,
    generate_project,
    load_resources,
    move_parents,
)
from tests.serverproc import REPO
from tests.strategies import resource_objects

SHIPPED = {(r.group, r.kind): r for r in build_scheme()}
PROJECT = definitions()
MOVE_PARENTS = {
    (d.group, d.kind): move_parents(d) for d in [*load_definitions(REPO / "definitions"), *PROJECT]
}
SHARED_FIXTURE = [HealthCheck.function_scoped_fixture]
CASES = [
    *(
        pytest.param(False, key, version.name, id=f"{resource.group_resource}/{version.name}")
        for key, resource in SHIPPED.items()
        # a view of another resource's objects (stored_as) has that resource's hub, and Go's zero values
        # (eventTime null) on the way out: tests/unit/builtin/test_events_conversion.py
        if resource.stored_as is None
        for version in resource.served_versions
    ),
    *(
        pytest.param(True, (d.group, d.kind), v.name, id=f"{d.plural}.{d.group}/{v.name}")
        for d in PROJECT
        for v in d.versions
        if v.served
    ),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], ResourceType]:
    root = generate_project(tmp_path_factory.mktemp("convertproject"))
    return {(r.group, r.kind): r for r in load_resources(root, "convertproject_generated")}


@pytest.fixture
def resource(  # the same resource for every example: Hypothesis may share it
    request: pytest.FixtureRequest, in_project: bool, key: tuple[str, str]
) -> ResourceType:
    if in_project:
        generated: dict[tuple[str, str], ResourceType] = request.getfixturevalue("project")
        return generated[key]
    return SHIPPED[key]


def without_empty_parents(obj: dict[str, Any], parents: set[FieldPath]) -> dict[str, Any]:
    """``obj`` without the empty objects at ``parents`` (deepest first, so a parent emptied by that goes too)."""
    out = copy.deepcopy(obj)
    for path in sorted(parents, key=len, reverse=True):
        node: Any = out
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and node.get(path[-1]) == {}:
            del node[path[-1]]
    return out


def unknown_fields(obj: dict[str, Any], version: VersionType) -> list[str]:
    """The fields of ``obj`` that ``version``'s schema lacks, as strict field validation reports them."""
    return prune(copy.deepcopy(obj), version.schema)


def draw(data: st.DataObject, resource: ResourceType, version: VersionType) -> dict[str, Any]:
    api_version = resource.api_version(version.name)
    obj: dict[str, Any] = data.draw(resource_objects(api_version, resource.kind, version.schema))
    return obj


def versions(resource: ResourceType, name: str) -> tuple[VersionType, VersionType]:
    version = resource.version(name)
    assert version is not None
    return version, resource.storage_version


def assert_there_and_back(
    key: tuple[str, str],
    obj: dict[str, Any],
    there: Callable[[dict[str, Any]], dict[str, Any]],
    target: VersionType,
    back: Callable[[dict[str, Any]], dict[str, Any]],
) -> None:
    """``there`` gives an object of ``target`` with no field outside its schema (with its apiVersion), ``back``
    gives ``obj`` again but for empty parents of moved fields, and neither mutates its input."""
    original = copy.deepcopy(obj)
    converted = there(obj)
    assert converted["apiVersion"].rpartition("/")[2] == target.name
    assert unknown_fields(converted, target) == []
    parents = MOVE_PARENTS.get(key, set())
    assert without_empty_parents(back(converted), parents) == without_empty_parents(
        original, parents
    )
    assert obj == original


@pytest.mark.parametrize("from_hub", [False, True], ids=["version-hub-version", "hub-version-hub"])
@pytest.mark.parametrize(("in_project", "key", "name"), CASES)
@settings(max_examples=40, deadline=None, suppress_health_check=SHARED_FIXTURE)
@given(data=st.data())
def test_there_and_back(
    resource: ResourceType, key: tuple[str, str], name: str, from_hub: bool, data: st.DataObject
) -> None:
    """An object of the version through the hub and back, and one of the hub through the version and back."""
    version, hub = versions(resource, name)
    if from_hub:
        obj = draw(data, resource, hub)
        assert_there_and_back(key, obj, version.from_internal, version, version.to_internal)
    else:
        obj = draw(data, resource, version)
        assert_there_and_back(key, obj, version.to_internal, hub, version.from_internal)


PAIRS = [
    pytest.param(
        True, (d.group, d.kind), v.name, w.name, id=f"{d.plural}.{d.group}/{v.name}-{w.name}"
    )
    for d in PROJECT
    if len(d.versions) > 2
    for v in d.versions
    for w in d.versions
    if v.served and w.served and v is not w and not v.storage and not w.storage
]


@pytest.mark.parametrize(("in_project", "key", "name", "other"), PAIRS)
@settings(max_examples=40, deadline=None, suppress_health_check=SHARED_FIXTURE)
@given(data=st.data())
def test_version_to_another_and_back(
    resource: ResourceType, key: tuple[str, str], name: str, other: str, data: st.DataObject
) -> None:
    """Between two non-hub versions (through the hub, as every conversion goes)."""
    version, _ = versions(resource, name)
    target, _ = versions(resource, other)
    assert_there_and_back(
        key,
        draw(data, resource, version),
        lambda obj: target.from_internal(version.to_internal(obj)),
        target,
        lambda obj: version.from_internal(target.to_internal(obj)),
    )


@pytest.mark.parametrize(("in_project", "key", "name"), CASES)
@settings(max_examples=20, deadline=None, suppress_health_check=SHARED_FIXTURE)
@given(data=st.data())
def test_generated_models_accept_schema_valid_objects(
    resource: ResourceType, name: str, data: st.DataObject
) -> None:
    version = resource.version(name)
    assert version is not None and version.model is not None
    obj = draw(data, resource, version)
    model = version.model.model_validate(obj)
    dumped = model.model_dump(mode="json", exclude_unset=True)
    assert dumped["metadata"]["name"] == obj["metadata"]["name"]
    assert {k: v for k, v in dumped.items() if k != "metadata"} == {
        k: v for k, v in obj.items() if k != "metadata"
    }


def test_a_moved_nested_field_leaves_no_empty_object(
    project: dict[tuple[str, str], ResourceType],
) -> None:
    """A nested field that moves between versions leaves no empty object behind: the hub's
    spec.customer.name read as v1, whose spec.customerName it is; v1 has no spec.customer, so no
    ``customer: {}`` may be left (nor ``address: {}`` below it)."""
    v1 = project[("moves.example.com", "Order")].version("v1")
    assert v1 is not None
    hub = {
        "apiVersion": "moves.example.com/v2",
        "kind": "Order",
        "metadata": {"name": "a"},
        "spec": {"customer": {"name": "Ada", "address": {"city": "Paris"}}, "total": 3},
    }
    assert v1.from_internal(hub)["spec"] == {"customerName": "Ada", "city": "Paris", "total": 3}
    hub["spec"] = {"customer": {"address": {}}, "total": 3}
    assert v1.from_internal(hub)["spec"] == {"total": 3}


def test_a_sloppy_hook_leaks_nothing(project: dict[tuple[str, str], ResourceType]) -> None:
    """The Ticket hooks leave the field they converted from in place; the converter prunes it."""
    v1alpha1 = project[("moves.example.com", "Ticket")].version("v1alpha1")
    assert v1alpha1 is not None
    obj = {
        "apiVersion": "moves.example.com/v1alpha1",
        "kind": "Ticket",
        "metadata": {"name": "t"},
        "spec": {"summary": "disk full", "level": "7"},
    }
    internal = v1alpha1.to_internal(obj)
    assert internal["spec"] == {"title": "disk full", "priority": 7}
    assert v1alpha1.from_internal(internal)["spec"] == obj["spec"]
