"""No field the server writes is ``null`` where kube's types omit it: over every patchable shipped kind, the
create answer, the update answer and the watch events of both carry no ``null`` the client did not send
(the samples hold none), but for the fields kube's Go types serialize without ``omitempty`` (a nil slice is
then ``null`` on kube's wire too)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.inprocess import InProcessServer
from tests.kindsamples import CASES, NAMESPACE, Case, sample

# kube writes these as null when unset: their Go fields have no omitempty (a create's status before the
# controllers fill it in), or are a non-pointer metav1.Time / MicroTime, whose zero value marshals to null.
# k8s.io/apiextensions-apiserver pkg/apis/apiextensions/v1/types.go:
# CustomResourceDefinitionStatus.Conditions `json:"conditions"`; k8s.io/api core/v1 Event's FirstTimestamp,
# LastTimestamp (metav1.Time) and EventTime (metav1.MicroTime), events/v1 Event's DeprecatedFirstTimestamp and
# DeprecatedLastTimestamp (as recorded from kube-apiserver 1.34 in tests/differential/golden/verbs-core.yaml
# and validation.yaml)
KUBE_NULLS = {
    "customresourcedefinitions.apiextensions.k8s.io": {"status.conditions"},
    "events": {"eventTime", "firstTimestamp", "lastTimestamp"},
    "events.events.k8s.io": {"deprecatedFirstTimestamp", "deprecatedLastTimestamp"},
}


def nulls(value: Any, path: str = "") -> Iterator[str]:
    """The dotted path of every null in a JSON value (list items as ``[i]``)."""
    if value is None:
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from nulls(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from nulls(item, f"{path}[{index}]")


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with InProcessServer() as server, server.client() as http:
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        assert http.post("/api/v1/namespaces", json=body).status_code == 201
        yield http


def collection(client: httpx.Client, case: Case) -> str:
    """The collection path of the case's resource, namespaced or not as discovery says."""
    api_version = sample(case, "first")["apiVersion"]
    base = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
    plural = case.resource.split(".", 1)[0]
    (resource,) = (r for r in client.get(base).json()["resources"] if r["name"] == plural)
    return (
        f"{base}/namespaces/{NAMESPACE}/{plural}" if resource["namespaced"] else f"{base}/{plural}"
    )


def update(client: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """PUT the body over the current object, again when a controller wrote it in between (409)."""
    while True:
        current = client.get(path).json()
        body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        response = client.put(path, json=body)
        if response.status_code != 409:
            assert response.status_code == 200, response.text
            answer: dict[str, Any] = response.json()
            return answer


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.resource)
def test_no_nulls_in_create_update_and_watch(client: httpx.Client, case: Case) -> None:
    allowed = KUBE_NULLS.get(case.resource, set())
    path = collection(client, case)
    created_body = sample(case, "first")
    name = created_body["metadata"]["name"]
    since = client.get(path).json()["metadata"]["resourceVersion"]
    created = client.post(path, json=created_body)
    assert created.status_code == 201, created.text
    updated = update(client, f"{path}/{name}", sample(case, "second"))
    for answer in (created.json(), updated):
        assert set(nulls(answer)) <= allowed, answer
    query = {"watch": "1", "resourceVersion": since, "fieldSelector": f"metadata.name={name}"}
    with client.stream("GET", path, params=query) as events:
        for line in events.iter_lines():
            event = json.loads(line)
            assert set(nulls(event["object"])) <= allowed, event
            if (
                event["object"]["metadata"]["resourceVersion"]
                == updated["metadata"]["resourceVersion"]
            ):
                break
