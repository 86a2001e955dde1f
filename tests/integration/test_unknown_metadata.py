"""Fields of ``metadata`` that ObjectMeta lacks are dropped, at the root of built-in kinds, compiled kinds and
custom resources and in embedded resources' metadata, reported per ``fieldValidation`` as kube reports them
(apiextensions-apiserver pkg/apiserver/schema/objectmeta/coerce.go ``GetObjectMetaWithOptions``, called by
customresource_handler.go's ``unstructuredSchemaCoercer``; apimachinery's strict decoding for built-ins):
Strict → 400 ``strict decoding error: unknown field "metadata.bogusMeta"``, Warn → a Warning header,
Ignore → silently."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.e2e.test_crd_runtime import wait_served
from tests.inprocess import InProcessServer
from tests.shipped import CONFIGMAPS, CRONTABS, assert_status, crontab

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
TEMPLATES = "/apis/embed.example.com/v1/namespaces/default/templates"
EMBEDDING_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "templates.embed.example.com"},
    "spec": {
        "group": "embed.example.com",
        "scope": "Namespaced",
        "names": {"plural": "templates", "kind": "Template"},
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
                                "properties": {
                                    "template": {
                                        "type": "object",
                                        "x-kubernetes-embedded-resource": True,
                                        "x-kubernetes-preserve-unknown-fields": True,
                                    },
                                    "items": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "x-kubernetes-embedded-resource": True,
                                            "x-kubernetes-preserve-unknown-fields": True,
                                        },
                                    },
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
}
OWNER = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "name": "owner",
    "uid": "",
}  # the uid: when created


def configmap(name: str, **metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **metadata}}


def template(name: str, embedded: dict[str, Any]) -> dict[str, Any]:
    inner = {"apiVersion": "v1", "kind": "Pod", "metadata": embedded}
    return {
        "apiVersion": "embed.example.com/v1",
        "kind": "Template",
        "metadata": {"name": name},
        "spec": {"template": inner, "items": [dict(inner)]},
    }


@dataclass(frozen=True)
class Case:
    collection: str
    kind: str
    body: Callable[[str], dict[str, Any]]
    unknown: tuple[str, ...]  # in kube's order
    read: Callable[[dict[str, Any]], Any]  # what must be gone from the stored object


CASES = {
    "configmap": Case(
        CONFIGMAPS,
        "ConfigMap",
        lambda name: configmap(name, bogusMeta="x"),
        ("metadata.bogusMeta",),
        lambda obj: obj["metadata"].get("bogusMeta"),
    ),
    "owner-reference": Case(
        CONFIGMAPS,
        "ConfigMap",
        lambda name: configmap(name, ownerReferences=[{**OWNER, "bogus": 1}]),  # a live owner: kept
        ("metadata.ownerReferences[0].bogus",),
        lambda obj: obj["metadata"]["ownerReferences"][0].get("bogus"),
    ),
    "compiled-kind": Case(
        CRONTABS,
        "CronTab",
        lambda name: {**crontab(name), "metadata": {"name": name, "bogusMeta": "x"}},
        ("metadata.bogusMeta",),
        lambda obj: obj["metadata"].get("bogusMeta"),
    ),
    "embedded-resources": Case(
        TEMPLATES,
        "Template",
        lambda name: template(name, {"name": "inner", "bogus": "x"}),
        ("spec.items[0].metadata.bogus", "spec.template.metadata.bogus"),
        lambda obj: [obj["spec"]["template"]["metadata"], obj["spec"]["items"][0]["metadata"]],
    ),
}


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with InProcessServer() as server, server.client() as http:
        owner = http.post(CONFIGMAPS, json=configmap("owner")).json()
        OWNER["uid"] = owner["metadata"]["uid"]
        assert http.post(CRD_PATH, json=EMBEDDING_CRD).status_code == 201
        wait_served(http, TEMPLATES)
        yield http


def _message(case: Case) -> str:
    unknown = ", ".join(f'unknown field "{path}"' for path in case.unknown)
    return (
        f'{case.kind} in version "v1" cannot be handled as a {case.kind}: '
        f"strict decoding error: {unknown}"
    )


@pytest.mark.parametrize("name", CASES)
def test_strict_refuses_unknown_metadata_fields(client: httpx.Client, name: str) -> None:
    case = CASES[name]
    response = client.post(
        case.collection, params={"fieldValidation": "Strict"}, json=case.body(f"strict-{name}")
    )
    status = assert_status(response, 400, "BadRequest")
    assert status["message"] == _message(case)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("validation", ["Warn", "Ignore"])
def test_unknown_metadata_fields_are_dropped(
    client: httpx.Client, name: str, validation: str
) -> None:
    case = CASES[name]
    object_name = f"{validation.lower()}-{name}"
    response = client.post(
        case.collection, params={"fieldValidation": validation}, json=case.body(object_name)
    )
    assert response.status_code == 201, response.text
    warnings = response.headers.get_list("warning")
    expected = [f'299 - "unknown field \\"{path}\\""' for path in case.unknown]
    assert warnings == (expected if validation == "Warn" else [])
    for obj in (response.json(), client.get(f"{case.collection}/{object_name}").json()):
        read = case.read(obj)
        assert read in (None, [{"name": "inner"}, {"name": "inner"}]), read
