"""Two replicas on one etcd elect one leader over a Lease as client-go's leader election does: the leader-only
controllers (the garbage collector among them) run on the holder only, `kill -9` of the holder hands the
lease over within its duration (leaseTransitions counts it), and what the dead leader left to collect is
collected by the next (kube-controller-manager's --leader-elect-* flags, shortened here)."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.etcdproc import EtcdProcess
from tests.serverproc import ServerProcess, free_port

LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/apiforge-controller-manager"
CM = "/api/v1/namespaces/default/configmaps"
ELECTION = (
    "--leader-elect-lease-duration=3s",
    "--leader-elect-renew-deadline=2s",
    "--leader-elect-retry-period=250ms",
)


def replica(tmp_path: Path, etcd: EtcdProcess, name: str) -> ServerProcess:
    server = ServerProcess(
        tmp_path / name,
        free_port(),
        storage="etcd",
        extra_args=("--etcd-servers", etcd.url, *ELECTION),
    )
    server.data_dir.mkdir(parents=True, exist_ok=True)
    server.start()
    return server


def until(check: Callable[[], Any], what: str, timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := check()):
        if time.monotonic() > deadline:
            pytest.fail(f"never: {what}")
        time.sleep(0.05)
    return found


def holder(client: httpx.Client) -> str:
    spec: dict[str, Any] = client.get(LEASE).json()["spec"]
    return str(spec.get("holderIdentity") or "")


def pid_of(identity: str) -> int:
    """The leader's process id, from the identity host_pid_uuid."""
    return int(identity.split("_")[-2])


def owner_with_dependents(client: httpx.Client, prefix: str, count: int) -> None:
    owner = client.post(CM, json={"metadata": {"name": f"{prefix}-owner"}}).json()
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }
    for i in range(count):
        body = {"metadata": {"name": f"{prefix}-{i}", "ownerReferences": [ref]}}
        assert client.post(CM, json=body).status_code == 201


def remaining(client: httpx.Client, prefix: str) -> list[str]:
    names = [item["metadata"]["name"] for item in client.get(CM).json()["items"]]
    return [name for name in names if name.startswith(f"{prefix}-") and name != f"{prefix}-owner"]


def test_one_leader_and_a_handover_on_kill_9(tmp_path: Path, etcd: EtcdProcess) -> None:
    first, second = replica(tmp_path, etcd, "a"), replica(tmp_path, etcd, "b")
    servers = {first.process.pid: first, second.process.pid: second}  # type: ignore[union-attr]
    try:
        with first.client(timeout=10) as one:
            lease = until(lambda: one.get(LEASE).json().get("spec"), "a lease")
            assert lease["leaseDurationSeconds"] == 3 and lease["leaseTransitions"] == 0
            leader = servers[pid_of(lease["holderIdentity"])]
            # the holder keeps renewing; the other never takes it while it does
            renewed = until(
                lambda: (
                    (spec := one.get(LEASE).json()["spec"])["renewTime"] != lease["renewTime"]
                    and spec
                ),
                "a renewal",
            )
            assert renewed["holderIdentity"] == lease["holderIdentity"]
            assert renewed["acquireTime"] == lease["acquireTime"]
            owner_with_dependents(one, "before", 20)
            assert one.delete(f"{CM}/before-owner").status_code == 200
            until(lambda: not remaining(one, "before"), "the leader collects the dependents")
        survivor = second if leader is first else first
        with survivor.client(timeout=10) as client:
            owner_with_dependents(client, "after", 20)
            leader.stop(signal.SIGKILL)
            killed = time.monotonic()
            # deleted while nobody leads: the next leader must still collect every dependent
            assert client.delete(f"{CM}/after-owner").status_code == 200
            until(
                lambda: holder(client) not in ("", lease["holderIdentity"]),
                "the survivor takes the lease",
                timeout=10,
            )
            handover = time.monotonic() - killed
            assert handover < 3 + 2  # the lease duration, and a retry period or so of slack
            taken = client.get(LEASE).json()["spec"]
            assert pid_of(taken["holderIdentity"]) == survivor.process.pid  # type: ignore[union-attr]
            assert taken["leaseTransitions"] == 1
            until(lambda: not remaining(client, "after"), "the new leader collects the dependents")
    finally:
        first.stop()
        second.stop()
