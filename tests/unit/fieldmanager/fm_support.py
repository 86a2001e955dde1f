"""Helpers for the field manager tests: schemas, objects and lookups.

The CronTab schema is the generated one of this repository; the Deployment schema is resolved from
the apps/v1 OpenAPI v3 document kube-apiserver serves (tests/fixtures/kubernetes/openapi-v3), where
``containers`` is a list-type map keyed by ``name`` and ``ports`` one keyed by
``containerPort`` and ``protocol`` (whose default, ``TCP``, fills the key when it is left out).
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

from tests.serverproc import FIXTURES

REPO = Path(__file__).resolve().parents[3]
APPS_V1 = FIXTURES / "kubernetes" / "openapi-v3" / "apis__apps__v1_openapi.json"
CRONTAB_SCHEMAS = REPO / "generated" / "stable_example_com" / "v1" / "schemas.json"

CRONTAB_GV = "stable.example.com/v1"
T0 = "2024-01-01T00:00:00Z"
T1 = "2024-01-01T00:00:01Z"
T2 = "2024-01-01T00:00:02Z"
T3 = "2024-01-01T00:00:03Z"


def resolve_refs(document: dict[str, Any], name: str) -> dict[str, Any]:
    """``components.schemas[name]`` with every ``$ref`` (and the ``allOf: [{$ref}]`` wrapper kube
    uses to put a description or default next to a reference) replaced by the referenced schema."""
    schemas = document["components"]["schemas"]

    def resolve(node: Any, depth: int) -> Any:
        assert depth < 64, "unexpected recursive schema"
        if isinstance(node, list):
            return [resolve(item, depth + 1) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        all_of = node.get("allOf")
        if ref is None and isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
            ref = all_of[0]["$ref"]
        siblings = {k: resolve(v, depth + 1) for k, v in node.items() if k not in ("$ref", "allOf")}
        if ref is None:
            if all_of is not None:
                siblings["allOf"] = resolve(all_of, depth + 1)
            return siblings
        target = resolve(schemas[ref.rsplit("/", 1)[1]], depth + 1)
        return {**target, **siblings}

    resolved = resolve(schemas[name], 0)
    assert isinstance(resolved, dict)
    return resolved


@cache
def deployment_schema_dict() -> dict[str, Any]:
    document = json.loads(APPS_V1.read_text())
    return resolve_refs(document, "io.k8s.api.apps.v1.Deployment")


@cache
def crontab_schema_dict() -> dict[str, Any]:
    schema = json.loads(CRONTAB_SCHEMAS.read_text())["CronTab"]
    assert isinstance(schema, dict)
    return schema


def crontab(spec: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    """A CronTab as a client sends it."""
    obj: dict[str, Any] = {
        "apiVersion": CRONTAB_GV,
        "kind": "CronTab",
        "metadata": {"name": "c", "namespace": "default", **meta},
    }
    if spec is not None:
        obj["spec"] = spec
    return obj


def stored(obj: dict[str, Any], managed_fields: list[dict[str, Any]]) -> dict[str, Any]:
    """``obj`` as the server stores it: system metadata filled in and ``managedFields`` set."""
    out = copy.deepcopy(obj)
    meta = out.setdefault("metadata", {})
    meta.setdefault("uid", "5f3b8c1e-0000-4000-8000-000000000001")
    meta.setdefault("resourceVersion", "1")
    meta.setdefault("creationTimestamp", T0)
    if managed_fields:
        meta["managedFields"] = managed_fields
    else:
        meta.pop("managedFields", None)
    return out


def deployment(
    image: str = "nginx:1.25",
    replicas: int | None = 3,
    containers: list[dict[str, Any]] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A Deployment like the one in kube's apply integration tests."""
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "nginx"}},
        "template": {
            "metadata": {"labels": {"app": "nginx"}},
            "spec": {
                "containers": containers
                if containers is not None
                else [
                    {
                        "name": "nginx",
                        "image": image,
                        "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    }
                ]
            },
        },
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "deployment",
            "namespace": "default",
            "labels": labels if labels is not None else {"app": "nginx"},
        },
        "spec": spec,
    }


def entry(managed_fields: list[dict[str, Any]], manager: str, operation: str) -> dict[str, Any]:
    """The one entry of ``manager`` with ``operation``."""
    found = [e for e in managed_fields if e["manager"] == manager and e["operation"] == operation]
    assert len(found) == 1, managed_fields
    return found[0]
