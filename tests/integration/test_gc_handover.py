"""The garbage collector across a leader handover, shown directly (nothing collected twice or missed): two
replicas on one etcd, 100 owners with 5 dependents each (background, foreground and orphan
deletes, and dangling references), the owners deleted, half the owners deleted, the leader killed with SIGKILL mid-collection, the other half deleted
while nobody leads.
Every dependent that must go is gone, every orphan stays without the reference, and each replica's audit log
(the GC's writes are recorded as requests of kube's GC service account) shows at most one successful delete
per uid, a second attempt only ever a precondition failure, objects re-created under collected names during
the handover surviving, and GC writes from one replica at a time: the lease holder's."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.etcdproc import EtcdProcess
from tests.serverproc import ServerProcess, free_port

pytestmark = pytest.mark.timeout(120)

GC_USER = "system:serviceaccount:kube-system:generic-garbage-collector"
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/apiforge-controller-manager"
NAMESPACE = "gcha"
CM = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
ELECTION = (
    "--leader-elect-lease-duration=3s",
    "--leader-elect-renew-deadline=2s",
    "--leader-elect-retry-period=250ms",
)
# the GC's writes on configmaps with their DeleteOptions (their uid precondition), nothing else
POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Request
  users: ["system:serviceaccount:kube-system:generic-garbage-collector"]
  resources: [{group: "", resources: ["configmaps"]}]
- level: None
"""
DEPENDENTS = 5
BACKGROUND, FOREGROUND, ORPHAN, DANGLING = 40, 25, 20, 15  # owners of each way: 100 in all
KILL_AFTER = 50
"""Successful GC deletes of owned dependents on the leader before it is killed: well inside the ~165 it
is given (half the owners', before the kill)."""


def replica(tmp_path: Path, etcd: EtcdProcess, name: str) -> ServerProcess:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    server = ServerProcess(
        tmp_path / name,
        free_port(),
        storage="etcd",
        extra_args=(
            "--etcd-servers",
            etcd.url,
            *ELECTION,
            "--audit-policy-file",
            str(policy),
            "--audit-log-path",
            str(tmp_path / f"{name}.audit.log"),
        ),
    )
    server.data_dir.mkdir(parents=True, exist_ok=True)
    return server


def started(*servers: ServerProcess) -> None:
    """Started side by side: each start is mostly waiting for the process to import and listen."""
    with ThreadPoolExecutor(len(servers)) as pool:
        list(pool.map(lambda server: server.start(), servers))


def audit_log(server: ServerProcess) -> list[dict[str, Any]]:
    path = server.data_dir.parent / f"{server.data_dir.name}.audit.log"
    if not path.exists():
        return []
    lines = path.read_bytes().splitlines()
    events = [json.loads(line) for line in lines if line.endswith(b"}")]  # a line being written
    assert all(event["user"]["username"] == GC_USER for event in events)  # the policy's doing
    return events


def completed_deletes(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["verb"] == "delete" and e["stage"] == "ResponseComplete"]


def deleted(events: Iterable[dict[str, Any]], which: Callable[[str], bool]) -> set[str]:
    """The uids of the objects ``events`` show deleted, of the names ``which`` picks."""
    return {
        e["requestObject"]["preconditions"]["uid"]
        for e in completed_deletes(events)
        if e["responseStatus"]["code"] == 200 and which(e["objectRef"]["name"])
    }


def successes(events: Iterable[dict[str, Any]], which: Callable[[str], bool]) -> int:
    return len(deleted(events, which))


def owned(name: str) -> bool:
    """A dependent of an owner the test deletes (not a dangling one, collected as soon as created)."""
    return not name.startswith("dg-")


def seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def until(check: Callable[[], Any], what: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := check()):
        if time.monotonic() > deadline:
            pytest.fail(f"never: {what}")
        time.sleep(0.02)
    return found


def owner_ref(owner: dict[str, Any], block: bool = False) -> dict[str, Any]:
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": owner["metadata"]["name"]}
    ref["uid"] = owner["metadata"]["uid"]
    if block:
        ref["blockOwnerDeletion"] = True
    return ref


async def create_all(
    client: httpx.AsyncClient, bodies: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Created 16 at a time (kube's clients are as parallel); the objects as stored."""
    gate = asyncio.Semaphore(16)

    async def create(body: dict[str, Any]) -> dict[str, Any]:
        async with gate:
            response = await client.post(CM, json=body)
            assert response.status_code == 201, response.text
            created: dict[str, Any] = response.json()
            return created

    return list(await asyncio.gather(*map(create, bodies)))


def named(name: str, refs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if refs:
        metadata["ownerReferences"] = refs
    return {"metadata": metadata}


class Family:
    """The owners and their dependents, by how their owners go."""

    def __init__(self) -> None:
        self.owners: dict[str, dict[str, Any]] = {}
        self.doomed: dict[str, str] = {}
        """Dependents that must be collected: uid by name."""
        self.orphans: dict[str, str] = {}

    async def build(self, client: httpx.AsyncClient) -> None:
        ways = {"bg": BACKGROUND, "fg": FOREGROUND, "or": ORPHAN}
        owners = await create_all(
            client, [named(f"{way}-{i}") for way, count in ways.items() for i in range(count)]
        )
        self.owners = {owner["metadata"]["name"]: owner for owner in owners}
        bodies = [
            named(f"{name}-{j}", [owner_ref(owner, block=name.startswith("fg"))])
            for name, owner in self.owners.items()
            for j in range(DEPENDENTS)
        ]
        for dependent in await create_all(client, bodies):
            metadata = dependent["metadata"]
            into = self.orphans if metadata["name"].startswith("or-") else self.doomed
            into[metadata["name"]] = metadata["uid"]

    async def dangling(self, client: httpx.AsyncClient, first: int, count: int) -> None:
        """Dependents of owners that never were (a uid nobody has): collected as dangling."""
        bodies = [
            named(
                f"dg-{i}-{j}",
                [{"apiVersion": "v1", "kind": "ConfigMap", "name": f"dg-{i}", "uid": f"gone-{i}"}],
            )
            for i in range(first, first + count)
            for j in range(DEPENDENTS)
        ]
        for dependent in await create_all(client, bodies):
            self.doomed[dependent["metadata"]["name"]] = dependent["metadata"]["uid"]

    async def delete_owners(self, client: httpx.AsyncClient, half: int) -> None:
        """Delete every other owner (half 0 or 1), each way of deleting in both halves."""
        policies = {"bg": "Background", "fg": "Foreground", "or": "Orphan"}
        gate = asyncio.Semaphore(16)

        async def delete(name: str) -> None:
            body = {"propagationPolicy": policies[name[:2]]}
            async with gate:
                response = await client.request("DELETE", f"{CM}/{name}", json=body)
            assert response.status_code in (200, 202), response.text

        await asyncio.gather(*map(delete, list(self.owners)[half::2]))


def stored(client: httpx.Client) -> dict[str, dict[str, Any]]:
    items = client.get(CM).json()["items"]
    return {item["metadata"]["name"]: item for item in items}


def test_nothing_collected_twice_or_missed_across_a_kill_9(
    tmp_path: Path, etcd: EtcdProcess
) -> None:
    first, second = replica(tmp_path, etcd, "a"), replica(tmp_path, etcd, "b")
    started(first, second)
    by_pid = {first.process.pid: first, second.process.pid: second}  # type: ignore[union-attr]
    family = Family()
    try:
        with first.client(timeout=20) as client:
            lease = until(lambda: client.get(LEASE).json().get("spec"), "a lease")
        leader = by_pid[int(lease["holderIdentity"].split("_")[-2])]
        survivor = second if leader is first else first
        with survivor.client(timeout=20) as client:
            namespace = {"metadata": {"name": NAMESPACE}}
            assert client.post("/api/v1/namespaces", json=namespace).status_code == 201

            async def before_the_kill() -> None:
                async with survivor.async_client(timeout=20) as aclient:
                    await family.build(aclient)
                    await family.dangling(aclient, 0, DANGLING // 2)
                    deleting = asyncio.create_task(family.delete_owners(aclient, 0))
                    while successes(audit_log(leader), owned) < KILL_AFTER:
                        await asyncio.sleep(0.01)
                    leader.stop(signal.SIGKILL)
                    await deleting

            asyncio.run(before_the_kill())
            killed = time.time()
            before = audit_log(leader)
            assert not audit_log(survivor)  # the follower wrote nothing while the other led

            # while nobody leads: the other half of the owners deleted, more dangling dependents, and new
            # objects under collected names (dependents the dead leader deleted, and background owners
            # whose dependents may remain)
            async def during_the_handover() -> list[dict[str, Any]]:
                async with survivor.async_client(timeout=20) as aclient:
                    await family.delete_owners(aclient, 1)
                    await family.dangling(aclient, DANGLING // 2, DANGLING - DANGLING // 2)
                    gone = [
                        e["objectRef"]["name"]
                        for e in completed_deletes(before)
                        if e["responseStatus"]["code"] == 200
                    ]
                    names = gone[:10] + [f"bg-{i}" for i in range(BACKGROUND - 6, BACKGROUND)]
                    return await create_all(aclient, [named(name) for name in names])

            recreated = {
                obj["metadata"]["name"]: obj["metadata"]["uid"]
                for obj in asyncio.run(during_the_handover())
            }

            taken = until(
                lambda: (
                    (spec := client.get(LEASE).json()["spec"])["holderIdentity"]
                    not in ("", lease["holderIdentity"])
                    and spec
                ),
                "the survivor takes the lease",
            )
            expected = set(recreated) | set(family.orphans)
            left = until(
                lambda: (objects := stored(client)).keys() == expected and objects,
                "every doomed dependent collected, and nothing else",
            )
        for name, uid in recreated.items():
            assert left[name]["metadata"]["uid"] == uid
        for name, uid in family.orphans.items():
            assert left[name]["metadata"]["uid"] == uid
            assert "ownerReferences" not in left[name]["metadata"]
        after = audit_log(survivor)
    finally:
        first.stop()
        second.stop()

    # one replica at a time: the dead leader's writes all before the kill, the survivor's all after it
    # took the lease
    assert all(seconds(e["stageTimestamp"]) <= killed for e in before)
    acquired = seconds(taken["acquireTime"])
    assert after and all(seconds(e["requestReceivedTimestamp"]) >= acquired for e in after)
    assert acquired > killed

    # mid-collection: the survivor collected part of what the dead leader had begun on (the dependents
    # of the owners deleted before the kill)
    first_half = {f"{name}-" for name in list(family.owners)[0::2]}
    begun = {
        uid for name, uid in family.doomed.items() if name[: name.rindex("-") + 1] in first_half
    }
    assert KILL_AFTER <= len(deleted(before, owned) & begun) < len(begun)
    assert deleted(after, owned) & begun

    # nothing twice: at most one successful delete per uid; a second attempt is a precondition failure
    by_uid: dict[str, list[int]] = {}
    for event in completed_deletes([*before, *after]):
        uid = event["requestObject"]["preconditions"]["uid"]
        by_uid.setdefault(uid, []).append(event["responseStatus"]["code"])
        if event["responseStatus"]["code"] != 200:
            assert event["responseStatus"]["code"] in (404, 409), event
            assert (
                event["responseStatus"]["code"] == 404
                or "Precondition failed" in (event["responseStatus"]["message"])
            )
    assert all(codes.count(200) <= 1 for codes in by_uid.values())
    assert not set(by_uid) & set(recreated.values())  # never even tried on a re-created object

    # nothing missed: each doomed dependent deleted by the GC once, unless the kill fell between its
    # delete and the log line (a request received by the dead leader, never completed)
    unfinished = {e["auditID"] for e in before if e["stage"] == "RequestReceived"} - {
        e["auditID"] for e in before if e["stage"] == "ResponseComplete"
    }
    cut_short = {
        e["requestObject"]["preconditions"]["uid"]
        for e in before
        if e["auditID"] in unfinished and e["verb"] == "delete"
    }
    missing = {
        name
        for name, uid in family.doomed.items()
        if by_uid.get(uid, []).count(200) != 1 and uid not in cut_short
    }
    assert not missing
