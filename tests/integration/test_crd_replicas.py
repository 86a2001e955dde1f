"""CustomResourceDefinitions on two replicas over one etcd: a CRD created through one replica is
served by the other within 2 s (each learns through its watch on the CRDs), and its deletion stops both."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from tests.etcdproc import EtcdProcess
from tests.integration.test_etcd_replicas import replica

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/replicas.example.com/v1/namespaces/default/widgets"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.replicas.example.com"},
    "spec": {
        "group": "replicas.example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}
                        },
                    }
                },
            }
        ],
    },
}


def wait_status(client: httpx.Client, path: str, code: int, timeout: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if client.get(path).status_code == code:
            return time.monotonic() - started
        time.sleep(0.02)
    raise AssertionError(f"{path} did not answer {code} within {timeout} s")


def test_a_crd_created_through_one_replica_is_served_by_the_other(
    tmp_path: Path, etcd: EtcdProcess
) -> None:
    first, second = replica(tmp_path, etcd, "a"), replica(tmp_path, etcd, "b")
    try:
        with first.client(timeout=10) as one, second.client(timeout=10) as two:
            assert two.get(WIDGETS).status_code == 404
            assert one.post(CRD_PATH, json=CRD).status_code == 201
            assert wait_status(two, WIDGETS, 200, 2.0) < 2.0
            body = {"apiVersion": "replicas.example.com/v1", "kind": "Widget"}
            created = two.post(
                WIDGETS, json={**body, "metadata": {"name": "w"}, "spec": {"size": 3}}
            )
            assert created.status_code == 201
            assert one.get(f"{WIDGETS}/w").json()["spec"] == {"size": 3}
            # both replicas write the status they compute: it settles, established, on both
            status = one.get(f"{CRD_PATH}/{CRD['metadata']['name']}").json()["status"]
            assert {c["type"]: c["status"] for c in status["conditions"]} == {
                "NamesAccepted": "True",
                "Established": "True",
            }
            assert two.delete(f"{CRD_PATH}/{CRD['metadata']['name']}").status_code == 200
            wait_status(one, WIDGETS, 404, 10.0)
            wait_status(two, WIDGETS, 404, 2.0)
            assert one.get(f"{CRD_PATH}/{CRD['metadata']['name']}").status_code == 404
    finally:
        first.stop()
        second.stop()
