"""Leader election between two servers in this process over one storage (client-go's semantics): one leads
and runs the leader-only controllers, the other runs none; a leader that stops releases the lease, so the
other takes over at its next retry rather than a lease duration later; a server alone on its storage
(no election configured) runs them all at once."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from apiserver.machinery import errors
from apiserver.server.app import APIServer
from apiserver.server.controllers import LeaderElection, leader_only
from apiserver.storage.memory import MemoryStorage
from builtin.coordination.election import LeaderElector
from builtin.garbagecollector.collector import GarbageCollector, LeaseLapsed
from generated.server import OPENAPI_DIR, build_apis

FAST = LeaderElection(lease_duration=2.0, renew_deadline=1.5, retry_period=0.05)


def elector(server: APIServer) -> LeaderElector:
    found = server.context.elector
    assert isinstance(found, LeaderElector)
    return found


async def lease(server: APIServer) -> dict[str, object]:
    obj = await server.context.store("coordination.k8s.io", "leases").get(FAST.namespace, FAST.name)
    spec: dict[str, object] = obj["spec"]
    return spec


def test_one_leads_and_a_clean_stop_hands_over_at_once() -> None:
    async def body() -> None:
        storage = MemoryStorage()
        one = APIServer(build_apis(), storage, OPENAPI_DIR, leader_election=FAST)
        two = APIServer(build_apis(), storage, OPENAPI_DIR, leader_election=FAST)
        assert not any(leader_only(c) for c in one.controllers)  # the elector runs those
        await one.start()
        await two.start()
        assert elector(one).leading and not elector(two).leading
        assert (await lease(one))["holderIdentity"] == elector(one).identity
        collectors = [c for c in elector(two).controllers if isinstance(c, GarbageCollector)]
        assert collectors and not collectors[0]._tasks  # the follower's collector never started
        started = time.monotonic()
        await elector(one).stop()  # releases the lease
        while not elector(two).leading:
            await asyncio.sleep(0.01)
        assert time.monotonic() - started < FAST.lease_duration
        spec = await lease(two)
        assert spec["holderIdentity"] == elector(two).identity and spec["leaseTransitions"] == 1
        await two.stop()

    asyncio.run(asyncio.wait_for(body(), timeout=20))


def test_a_leader_whose_lease_lapsed_on_its_clock_writes_nothing() -> None:
    """A replica paused past its renew deadline (SIGSTOP) wakes up with its collector's work running before
    its campaign's next round steps it down: the collector's writes wait until the lease is renewed."""

    async def body() -> None:
        server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR, leader_election=FAST)
        await server.start()
        chosen = elector(server)
        collector = next(c for c in chosen.controllers if isinstance(c, GarbageCollector))
        configmaps = server.context.store("", "configmaps")
        doomed = await configmaps.create("default", {"metadata": {"name": "doomed"}})
        node, _ = collector.graph.observe(configmaps, doomed)
        assert chosen.holds()
        chosen._renewed -= FAST.renew_deadline  # as if the process had been stopped that long
        assert chosen.leading and not chosen.holds()
        with pytest.raises(LeaseLapsed):
            await collector._delete(node, doomed, "Background")
        assert (await configmaps.get("default", "doomed"))["metadata"]["uid"] == node.uid
        while not chosen.holds():  # the next round renews (nobody else took the lease)
            await asyncio.sleep(0.01)
        await collector._delete(node, doomed, "Background")
        with pytest.raises(errors.APIError):
            await configmaps.get("default", "doomed")
        await server.stop()

    asyncio.run(asyncio.wait_for(body(), timeout=20))


def test_a_replica_shutting_down_never_takes_the_lease() -> None:
    """A replica whose shutdown has begun (its /readyz fails, e.g. a worker orphaned by its supervisor)
    does not campaign: it would hold the lease only until it stops."""

    async def body() -> None:
        storage = MemoryStorage()
        one = APIServer(build_apis(), storage, OPENAPI_DIR, leader_election=FAST)
        two = APIServer(build_apis(), storage, OPENAPI_DIR, leader_election=FAST)
        await one.start()
        await two.start()
        two.shutdown_initiated()
        await elector(one).stop()  # releases the lease: the next round of a campaigner takes it
        await asyncio.sleep(FAST.retry_period * 10)
        assert not elector(two).leading
        assert (await lease(two))["holderIdentity"] in (None, "")
        await two.stop()

    asyncio.run(asyncio.wait_for(body(), timeout=20))


def test_a_round_that_times_out_says_so(caplog: pytest.LogCaptureFixture) -> None:
    """A round that gets no answer in the renew deadline is logged with that reason, never an empty one."""

    async def body() -> None:
        server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR, leader_election=FAST)
        chosen = elector(server)

        async def hang(config: LeaderElection) -> bool:
            await asyncio.sleep(FAST.renew_deadline * 2)
            return True

        chosen._acquire_or_renew = hang  # type: ignore[method-assign]
        assert not await chosen._try(FAST)

    with caplog.at_level("INFO", logger="builtin.coordination.election"):
        asyncio.run(asyncio.wait_for(body(), timeout=20))
    [line] = [r.getMessage() for r in caplog.records if "leader election" in r.getMessage()]
    assert line.endswith(
        "could not acquire or renew the lease: no answer within the renew deadline (1.5s)"
    )


def test_alone_on_its_storage_a_server_runs_every_controller() -> None:
    server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR)
    kinds = {type(c).__name__ for c in server.controllers}
    assert {"GarbageCollector", "NamespaceController", "Compactor"} <= kinds


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"leaseDurationSeconds": 0},
            "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
        ),
        (
            {"leaseTransitions": -1},
            "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            {"preferredHolder": "x"},
            "spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined",
        ),
    ],
)
def test_lease_spec_validation(spec: dict[str, object], message: str) -> None:
    async def body() -> None:
        server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR)
        store = server.context.store("coordination.k8s.io", "leases")
        lease = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "l"},
            "spec": spec,
        }
        await store.create("default", lease)

    with pytest.raises(errors.APIError) as refused:
        asyncio.run(body())
    assert refused.value.code == 422
    assert refused.value.message == f'Lease.coordination.k8s.io "l" is invalid: {message}'


@pytest.mark.parametrize(
    ("error", "level"),
    [
        (
            errors.conflict("leases", "coordination.k8s.io", FAST.name, errors.MODIFIED),
            logging.DEBUG,
        ),
        (errors.already_exists("leases", "coordination.k8s.io", FAST.name), logging.DEBUG),
        (errors.service_unavailable("storage is down"), logging.INFO),
    ],
    ids=["conflict", "already-exists", "unavailable"],
)
def test_a_lost_race_for_the_lease_is_a_debug_line(
    error: errors.APIError,
    level: int,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another replica writing the lease between our read and our write (409) is leader election working,
    as client-go's V(4) "lock is held by ..." line; a failing storage is worth an INFO line."""

    async def body() -> None:
        server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR, leader_election=FAST)
        chosen = elector(server)

        async def lost(config: LeaderElection) -> bool:
            raise error

        monkeypatch.setattr(chosen, "_acquire_or_renew", lost)
        with caplog.at_level(logging.DEBUG, logger="builtin.coordination.election"):
            assert await chosen._try(FAST) is False

    asyncio.run(asyncio.wait_for(body(), timeout=20))
    (record,) = [r for r in caplog.records if r.name == "builtin.coordination.election"]
    assert record.levelno == level
    assert record.getMessage().endswith(f" could not acquire or renew the lease: {error}")
