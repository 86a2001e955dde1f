"""Apply configurations and ``extract`` (client-go's Extract<Kind>, over apimachinery's managedfields
ExtractInto): what one field manager owns, cut from an object by its Apply entry's FieldsV1 — first per class
of FieldsV1 member on wire objects, then end to end: two managers apply to one object, each extracts its
own intent, and applying it back is a no-op."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from apiclient import Connection, extract, load_kubeconfig
from apiclient.applyconfig import extract_fields
from generated.meta.v1.models import ObjectMeta
from generated.stable_example_com.v1.client import crontabs
from generated.stable_example_com.v1.models import CronTab, CronTabSpec
from tests.serverproc import ServerProcess

NAMESPACE = "default"
IDENTITY: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Thing",
    "metadata": {"name": "x", "namespace": "ns"},
}


def owned(
    manager: str, fields: dict[str, Any], operation: str = "Apply", subresource: str = ""
) -> dict[str, Any]:
    entry = {
        "manager": manager,
        "operation": operation,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    if subresource:
        entry["subresource"] = subresource
    return entry


def thing(*entries: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Thing",
        "metadata": {
            "name": "x",
            "namespace": "ns",
            "labels": {"a": "1", "b": "2"},
            "managedFields": list(entries),
        },
        "spec": {
            "replicas": 3,
            "image": "nginx",
            "ports": [{"name": "http", "port": 80, "protocol": "TCP"}, {"name": "dns", "port": 53}],
            "finalizers": ["one", "two"],
            "args": ["--a", "--b"],
            "template": {"x": 1, "y": 2},
        },
    }


@pytest.mark.parametrize(
    ("fields", "want"),
    [
        pytest.param({"f:spec": {"f:replicas": {}}}, {"spec": {"replicas": 3}}, id="field-leaf"),
        pytest.param(
            {"f:metadata": {"f:labels": {"f:a": {}}}},
            {"metadata": {"name": "x", "namespace": "ns", "labels": {"a": "1"}}},
            id="map-key",
        ),
        pytest.param(
            {"f:spec": {"f:template": {}}},
            {"spec": {"template": {"x": 1, "y": 2}}},
            id="whole-subtree",
        ),
        pytest.param(
            {"f:spec": {"f:template": {".": {}}}},
            {"spec": {"template": {}}},
            id="node-without-members",
        ),
        pytest.param(
            {"f:spec": {"f:ports": {'k:{"name":"http"}': {".": {}, "f:port": {}}}}},
            {"spec": {"ports": [{"name": "http", "port": 80}]}},
            id="associative-list-item-keeps-its-keys",
        ),
        pytest.param(
            {"f:spec": {"f:finalizers": {'v:"two"': {}}}},
            {"spec": {"finalizers": ["two"]}},
            id="set-item",
        ),
        pytest.param(
            {"f:spec": {"f:args": {"i:1": {}}}}, {"spec": {"args": ["--b"]}}, id="atomic-list-index"
        ),
        pytest.param({"f:spec": {"f:missing": {}}}, {"spec": {}}, id="absent-field"),
    ],
)
def test_extract_cuts_each_kind_of_fieldsv1_member(
    fields: dict[str, Any], want: dict[str, Any]
) -> None:
    got = extract_fields(thing(owned("me", fields)), "me")
    assert got == {
        **IDENTITY,
        **want,
        "metadata": {**IDENTITY["metadata"], **want.get("metadata", {})},
    }


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param(owned("other", {"f:spec": {"f:replicas": {}}}), id="another-manager"),
        pytest.param(
            owned("me", {"f:spec": {"f:replicas": {}}}, operation="Update"),
            id="an-update-not-an-apply",
        ),
        pytest.param(
            owned("me", {"f:spec": {"f:replicas": {}}}, subresource="status"),
            id="another-subresource",
        ),
    ],
)
def test_extract_reads_only_the_managers_apply_entry(entry: dict[str, Any]) -> None:
    assert extract_fields(thing(entry), "me") == IDENTITY


@pytest.fixture(scope="module")
def connection(server: ServerProcess) -> Iterator[Connection]:
    with Connection(load_kubeconfig(server.kubeconfig)) as opened:
        yield opened


def test_each_manager_extracts_its_own_intent_and_applying_it_back_is_a_no_op(
    connection: Connection,
) -> None:
    tabs = crontabs(connection)
    tabs.apply(
        CronTab(
            metadata=ObjectMeta(name="applied", namespace=NAMESPACE, labels={"owner": "alpha"}),
            spec=CronTabSpec(replicas=2),
        ),
        field_manager="alpha",
    )
    current = tabs.apply(
        CronTab(
            metadata=ObjectMeta(name="applied", namespace=NAMESPACE),
            spec=CronTabSpec(image="nginx"),
        ),
        field_manager="beta",
    )
    mine = extract(current, "alpha")
    assert isinstance(mine, CronTab)
    assert mine.model_dump(mode="json", exclude_unset=True) == {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "applied", "namespace": NAMESPACE, "labels": {"owner": "alpha"}},
        "spec": {"replicas": 2},
    }
    theirs = extract(current, "beta")
    assert theirs.spec is not None and theirs.spec.model_dump(exclude_unset=True) == {
        "image": "nginx"
    }

    again = tabs.apply(mine, field_manager="alpha")
    assert again.metadata is not None and current.metadata is not None
    assert again.metadata.resource_version == current.metadata.resource_version  # nothing changed

    assert mine.spec is not None
    mine.spec.replicas = 5
    changed = tabs.apply(mine, field_manager="alpha")
    assert changed.spec is not None and (changed.spec.replicas, changed.spec.image) == (5, "nginx")
    tabs.delete("applied", NAMESPACE)


def test_extract_of_a_subresource_reads_its_own_entry(connection: Connection) -> None:
    tabs = crontabs(connection)
    tabs.apply(
        CronTab(
            metadata=ObjectMeta(name="status-applied", namespace=NAMESPACE),
            spec=CronTabSpec(replicas=1),
        ),
        field_manager="gamma",
    )
    current = tabs.apply(
        {
            "metadata": {"name": "status-applied", "namespace": NAMESPACE},
            "status": {"replicas": 1, "labelSelector": "a=b"},
        },
        field_manager="gamma",
        subresource="status",
    )
    status = extract(current, "gamma", subresource="status")
    assert status.model_dump(mode="json", exclude_unset=True) == {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "status-applied", "namespace": NAMESPACE},
        "status": {"labelSelector": "a=b", "replicas": 1},
    }
    main = extract(current, "gamma")
    assert main.status is None and main.spec is not None and main.spec.replicas == 1
    tabs.delete("status-applied", NAMESPACE)
