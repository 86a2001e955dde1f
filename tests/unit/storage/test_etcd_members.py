"""EtcdStorage on a real 3-member cluster, member by member: a hung member (SIGSTOP) leaves rotation within
about a second, its watch stream moves to another member and resumes with no gap and no duplicate, reads and
writes go on (on the leader, or after the election when the leader hangs), and the streams spread over every
member again once it answers for a while."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator

import pytest

from apiserver.storage import EtcdStorage
from apiserver.storage.etcd_members import PROBE_INTERVAL, REBALANCE_AFTER
from apiserver.storage.testing import Events
from tests.etcdproc import EtcdCluster, running_cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdCluster]:
    yield from running_cluster(tmp_path_factory.mktemp("cluster"))


@pytest.mark.parametrize("role", ["follower", "leader"])
async def test_a_hung_member_leaves_rotation_and_its_watch_moves_without_a_gap(
    cluster: EtcdCluster, role: str
) -> None:
    storage = EtcdStorage(cluster.endpoints, f"/t-{uuid.uuid4().hex}")
    await storage.start()
    try:
        members = storage._members
        assert members is not None
        start = await storage.current_revision()
        prefixes = [f"/registry/w{index}/" for index in range(3)]
        watches = {prefix: Events(storage.watch(prefix, start), timeout=10) for prefix in prefixes}
        for prefix, watch in watches.items():  # one stream per member: the fewest first
            await storage.create(f"{prefix}first", b"{}")
            await watch.take(1)
        assert sorted(len(member.watches) for member in members.members) == [1, 1, 1]
        victim = cluster.leader() if role == "leader" else cluster.followers()[0]
        hung = next(member for member in members.members if member.endpoint == victim.url)
        streams = {id(stream) for stream in hung.watches}
        [moved] = [prefix for prefix, watch in watches.items() if id(watch.watch) in streams]
        victim.pause()
        try:
            started = time.monotonic()
            while hung.healthy:  # a write sent now to a hung leader could only time out (504)
                assert time.monotonic() - started < 3, "the hung member stayed in rotation"
                await asyncio.sleep(0.05)
            later = [await storage.create(f"{moved}after-{i}", b"{}") for i in range(3)]
            assert await storage.get(f"{moved}first") is not None
            resumed = await watches[moved].take(3)
            took = time.monotonic() - started
            assert [event.kv for event in resumed] == later  # no gap, no duplicate
            assert took < 6, f"a hung {role}: writes and the watch resumed after {took:.1f}s"
            assert not hung.healthy and not hung.watches
        finally:
            victim.resume()
        deadline = time.monotonic() + REBALANCE_AFTER + 30 * PROBE_INTERVAL
        while not hung.watches:  # it answers again, and a stream drifts back to it
            assert time.monotonic() < deadline, "the member never took a stream back"
            await asyncio.sleep(PROBE_INTERVAL)
        assert hung.healthy
        for watch in watches.values():
            await watch.close()
    finally:
        await storage.close()
