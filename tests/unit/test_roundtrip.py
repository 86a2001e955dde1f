"""External → internal → external is the identity for every served version of every shipped kind, on objects
drawn from each version's own schema (property-based, the analog of kube's fuzz round-trip tests)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generated.server import build_scheme
from tests.strategies import resource_objects

SCHEME = build_scheme()
CASES = [
    pytest.param(resource, version, id=f"{resource.group_resource}/{version.name}")
    for resource in SCHEME
    for version in resource.served_versions
]


@pytest.mark.parametrize(("resource", "version"), CASES)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_external_internal_external_is_identity(
    resource: Any, version: Any, data: st.DataObject
) -> None:
    obj = data.draw(
        resource_objects(resource.api_version(version.name), resource.kind, version.schema)
    )
    original = copy.deepcopy(obj)
    internal = version.to_internal(obj)
    assert internal["apiVersion"] == resource.api_version(resource.storage_version.name)
    assert version.from_internal(internal) == original
    assert obj == original  # conversion never mutates its input


@pytest.mark.parametrize(("resource", "version"), CASES)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_generated_models_accept_schema_valid_objects(
    resource: Any, version: Any, data: st.DataObject
) -> None:
    obj = data.draw(
        resource_objects(resource.api_version(version.name), resource.kind, version.schema)
    )
    model = version.model.model_validate(obj)
    dumped = model.model_dump(mode="json", exclude_unset=True)
    assert dumped["metadata"]["name"] == obj["metadata"]["name"]
    assert {k: v for k, v in dumped.items() if k != "metadata"} == {
        k: v for k, v in obj.items() if k != "metadata"
    }
