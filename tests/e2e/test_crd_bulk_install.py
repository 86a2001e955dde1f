"""A bulk install, as an operator's install manifest does it: 50 CustomResourceDefinitions in one
`kubectl apply` (client-side, kubectl's default), each Established within a second of its creation and
served (discovery lists every kind), with `kubectl wait --for=condition=Established` as install scripts use.

The CRDs have the shape of real operators' ones: ten groups, a status subresource, a printer column, nested
object arrays, defaults and a CEL rule, so each is judged, installed and published in full. kube's timestamps
are whole seconds, so "within a second" reads ``lastTransitionTime - creationTimestamp <= 1 s``."""

from __future__ import annotations

import json
import time
from datetime import datetime
from typing import Any

import httpx
import yaml

from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import ServerProcess

COUNT = 50
GROUPS = 10
ESTABLISHED_WITHIN = 1  # seconds, at the timestamps' resolution


def operator_crd(index: int) -> dict[str, Any]:
    group = f"g{index % GROUPS}.bulk.example.com"
    fields: dict[str, Any] = {f"field{i}": {"type": "string", "maxLength": 64} for i in range(40)}
    fields["replicas"] = {"type": "integer", "minimum": 0, "default": 1}
    fields["rules"] = {
        "type": "array",
        "items": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string"},
                "weight": {"type": "integer", "format": "int32"},
                "matchType": {"type": "string", "enum": ["=", "!=", "=~", "!~"]},
            },
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"kind{index}s.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {
                "plural": f"kind{index}s",
                "kind": f"Kind{index}",
                "shortNames": [f"k{index}"],
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [
                        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}
                    ],
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": fields,
                                    "x-kubernetes-validations": [
                                        {"rule": "self.replicas < 100", "message": "too many"}
                                    ],
                                },
                                "status": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


def _time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def test_fifty_crds_in_one_apply_are_each_established_within_a_second(
    server: ServerProcess, client: httpx.Client, tmp_path_factory: Any
) -> None:
    kubectl = Kubectl(
        kubectl_binary(33), server.kubeconfig, tmp_path_factory.mktemp("kubectl-cache")
    )
    manifest = yaml.safe_dump_all([operator_crd(i) for i in range(COUNT)])
    started = time.monotonic()
    kubectl.run("apply", "-f", "-", stdin=manifest, timeout=120)
    kubectl.run("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s", timeout=90)
    elapsed = time.monotonic() - started
    crds = client.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").json()["items"]
    assert len(crds) == COUNT
    late = {}
    for crd in crds:
        established = next(c for c in crd["status"]["conditions"] if c["type"] == "Established")
        assert established["status"] == "True"
        lag = _time(established["lastTransitionTime"]) - _time(crd["metadata"]["creationTimestamp"])
        if lag.total_seconds() > ESTABLISHED_WITHIN:
            late[crd["metadata"]["name"]] = lag.total_seconds()
    assert not late, f"Established more than {ESTABLISHED_WITHIN} s after creation: {late}"
    listed = kubectl.run("api-resources", "-o", "name").stdout.split()
    assert {f"kind{i}s.g{i % GROUPS}.bulk.example.com" for i in range(COUNT)} <= set(listed)
    served = kubectl.run("get", "kind7s", "-o", "json").stdout
    assert json.loads(served)["items"] == []
    print(f"{COUNT} CRDs applied and Established in {elapsed:.1f} s")
