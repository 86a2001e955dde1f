"""`kubectl delete --cascade=background|foreground|orphan` on an owner with dependents of two kinds (ConfigMaps
and a CronTab), against a real server: what kube's garbage collector does
(https://kubernetes.io/docs/concepts/architecture/garbage-collection/#cascading-deletion and
https://kubernetes.io/docs/tasks/administer-cluster/use-cascading-deletion/)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import ServerProcess

NAMESPACE = "cascade"
CM = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
CRONTABS = f"/apis/stable.example.com/v1/namespaces/{NAMESPACE}/crontabs"


@pytest.fixture(scope="module")
def http(server: ServerProcess) -> Iterator[httpx.Client]:
    with server.client(timeout=10) as client:
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        assert client.post("/api/v1/namespaces", json=body).status_code == 201
        yield client


def kubectl(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory, minor: int) -> Kubectl:
    cache = tmp_path_factory.mktemp(f"kubectl-1.{minor}")
    return Kubectl(kubectl_binary(minor), server.kubeconfig, cache, NAMESPACE)


@pytest.fixture(scope="module")
def kubectl_133(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    return kubectl(server, tmp_path_factory, 33)


def until(check: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"never: {what}")
        time.sleep(0.05)


def ref(owner: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "blockOwnerDeletion": True,
        "controller": True,
    }


def family(http: httpx.Client, prefix: str, **dependent_meta: Any) -> dict[str, Any]:
    """An owner ConfigMap with two ConfigMap dependents and one CronTab dependent."""
    owner = http.post(CM, json={"metadata": {"name": f"{prefix}-owner"}})
    assert owner.status_code == 201, owner.text
    owned = {"ownerReferences": [ref(owner.json())], **dependent_meta}
    for i in range(2):
        body = {"metadata": {"name": f"{prefix}-cm-{i}", **owned}}
        assert http.post(CM, json=body).status_code == 201
    crontab = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": f"{prefix}-ct", **owned},
        "spec": {"cronSpec": "* * * * */5", "image": "img", "replicas": 1},
    }
    assert http.post(CRONTABS, json=crontab).status_code == 201
    result: dict[str, Any] = owner.json()
    return result


def dependents(http: httpx.Client, prefix: str) -> list[dict[str, Any]]:
    found = []
    for path in (f"{CM}/{prefix}-cm-0", f"{CM}/{prefix}-cm-1", f"{CRONTABS}/{prefix}-ct"):
        response = http.get(path)
        if response.status_code == 200:
            found.append(response.json())
    return found


def exists(http: httpx.Client, path: str) -> bool:
    return http.get(path).status_code == 200


def test_background_deletes_the_owner_then_its_dependents(
    http: httpx.Client, kubectl_133: Kubectl
) -> None:
    family(http, "bg")
    out = kubectl_133.run("delete", "configmap", "bg-owner", "--cascade=background").stdout
    assert out.strip() == 'configmap "bg-owner" deleted'
    assert not exists(http, f"{CM}/bg-owner")
    until(lambda: not dependents(http, "bg"), "the dependents collected")


def test_foreground_removes_the_owner_after_its_blocking_dependents(
    http: httpx.Client, kubectl_133: Kubectl
) -> None:
    family(http, "fg", finalizers=["example.com/hold"])
    kubectl_133.run("delete", "configmap", "fg-owner", "--cascade=foreground", "--wait=false")
    owner = http.get(f"{CM}/fg-owner").json()
    assert owner["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert owner["metadata"]["deletionTimestamp"]
    until(
        lambda: all(d["metadata"].get("deletionTimestamp") for d in dependents(http, "fg")),
        "every dependent marked for deletion",
    )
    assert exists(http, f"{CM}/fg-owner")  # the held dependents block it
    for dependent in dependents(http, "fg"):
        path = (
            f"{CRONTABS}/fg-ct"
            if dependent["kind"] == "CronTab"
            else f"{CM}/{dependent['metadata']['name']}"
        )
        patch = {"metadata": {"finalizers": None}}
        headers = {"content-type": "application/merge-patch+json"}
        assert http.patch(path, json=patch, headers=headers).status_code == 200
    until(lambda: not exists(http, f"{CM}/fg-owner"), "the owner removed after its dependents")
    assert not dependents(http, "fg")


@pytest.mark.parametrize(("minor", "flag"), [(33, "--cascade=orphan"), (27, "--cascade=false")])
def test_orphan_keeps_the_dependents_without_the_reference(
    http: httpx.Client,
    server: ServerProcess,
    tmp_path_factory: pytest.TempPathFactory,
    minor: int,
    flag: str,
) -> None:
    prefix = f"or{minor}"
    family(http, prefix)
    kubectl(server, tmp_path_factory, minor).run("delete", "configmap", f"{prefix}-owner", flag)
    until(lambda: not exists(http, f"{CM}/{prefix}-owner"), "the owner gone")
    kept = dependents(http, prefix)
    assert len(kept) == 3
    assert all("ownerReferences" not in d["metadata"] for d in kept)


def test_a_bogus_cascade_policy_is_refused_and_nothing_is_deleted(http: httpx.Client) -> None:
    family(http, "bogus")
    response = http.request("DELETE", f"{CM}/bogus-owner", json={"propagationPolicy": "Sideways"})
    assert response.status_code == 422
    assert response.json()["reason"] == "Invalid"
    assert exists(http, f"{CM}/bogus-owner") and len(dependents(http, "bogus")) == 3
