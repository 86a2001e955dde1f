"""Stored objects are pruned against the current schema when read, as kube's storage decoder prunes a custom
resource (apiextensions-apiserver pkg/apiserver/customresource_handler.go, ``schemaCoercingDecoder``): after
a CRD's schema drops a field, get, list and watch no longer show it, though nothing rewrote the object."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.test_crd_runtime import wait_served
from tests.inprocess import InProcessServer

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
NAME = "gadgets.narrow.example.com"
GADGETS = "/apis/narrow.example.com/v1/namespaces/default/gadgets"
CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": NAME},
    "spec": {
        "group": "narrow.example.com",
        "scope": "Namespaced",
        "names": {"plural": "gadgets", "kind": "Gadget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {"x": {"type": "string"}, "y": {"type": "string"}},
                            }
                        },
                    }
                },
            }
        ],
    },
}


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with InProcessServer() as server, server.client() as http:
        yield http


def narrow(client: httpx.Client) -> None:
    """Replace the CRD with one whose spec no longer declares ``x`` and that adds a version ``v2``: once
    ``v2`` is served, so is the narrowed schema (a CRD's versions are installed together)."""
    current = client.get(f"{CRD_PATH}/{NAME}").json()
    narrowed = copy.deepcopy(CRD)
    narrowed["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    (v1,) = narrowed["spec"]["versions"]
    del v1["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["x"]
    narrowed["spec"]["versions"].append({**copy.deepcopy(v1), "name": "v2", "storage": False})
    assert client.put(f"{CRD_PATH}/{NAME}", json=narrowed).status_code == 200
    wait_served(client, GADGETS.replace("/v1/", "/v2/"))


def test_a_narrowed_schema_prunes_stored_objects_on_read(client: httpx.Client) -> None:
    assert client.post(CRD_PATH, json=CRD).status_code == 201
    wait_served(client, GADGETS)
    body = {"apiVersion": "narrow.example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}}
    created = client.post(GADGETS, json={**body, "spec": {"x": "1", "y": "2"}}).json()
    assert created["spec"] == {"x": "1", "y": "2"}
    narrow(client)

    assert client.get(f"{GADGETS}/g").json()["spec"] == {"y": "2"}
    (listed,) = client.get(GADGETS).json()["items"]
    assert listed["spec"] == {"y": "2"}
    query = {"watch": "1", "resourceVersion": "0"}
    with client.stream("GET", GADGETS, params=query) as events:
        first = json.loads(next(events.iter_lines()))
    assert first["type"] == "ADDED" and first["object"]["spec"] == {"y": "2"}
    # nothing rewrote it: the stored object is the one created
    assert listed["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
