"""The members of an etcd cluster and which of them answer, as etcd's clientv3 balancer keeps it.

One gRPC channel per member (not one round-robin channel over all): a member that hangs (SIGSTOP, a full
disk, a partition) keeps its TCP connection open, so gRPC's own balancer keeps sending to it and every call
sent there waits for its deadline. Here a member leaves rotation at once when it does not answer (a failed
probe, a dropped connection, a call past its deadline, "no leader") and is probed in the background until it
answers again; its calls in flight are abandoned (their callers decide whether to retry, see ``EtcdStorage``)
and its watch streams move to another member.

Every call carries etcd's require-leader metadata (``hasleader``, clientv3's ``WithRequireLeader``): a
member cut off from the leader refuses it before doing anything ("etcdserver: no leader"), so a write
refused that way provably never happened, and a watch stream on it is cancelled by the member itself
(go.etcd.io/etcd/etcdserver/api/v3rpc/interceptor.go, monitorLeader).

Unary calls go to the leader while it answers (a follower would forward a write to it and ask it for a
linearizable read's index anyway, so a hung follower then costs them nothing); watches are spread over the
answering members, fewest streams first, and drift back to a member that has answered again for a while.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from contextlib import suppress
from typing import Any, Final, Protocol

import grpc
import grpc.aio
from aetcd import rpc

log = logging.getLogger(__name__)

HASLEADER: Final = (("hasleader", "true"),)
"""clientv3's require-leader metadata (rpctypes.MetadataRequireLeaderKey / MetadataHasLeader)."""

LEADERLESS: Final = "etcdserver: no leader"
"""etcd's answer to a ``hasleader`` call on a member cut off from the leader (rpctypes.ErrNoLeader)."""

PROBE_INTERVAL: Final = 0.5
"""Seconds between health probes of every member (a Maintenance.Status each: local to the member)."""

PROBE_TIMEOUT: Final = 1.0
"""Seconds a member may take to answer a probe before it leaves rotation."""

REBALANCE_AFTER: Final = 5.0
"""Seconds a member must have answered before watch streams move back to it (one per probe)."""


class Streaming(Protocol):
    """A watch as the members see it: it can be asked to move its stream to another member."""

    def move(self, reason: str) -> None: ...


class Member:
    """One etcd member: its channel and stubs, whether it answers, and what runs on it."""

    def __init__(self, endpoint: str, target: str, options: Sequence[tuple[str, Any]]) -> None:
        self.endpoint = endpoint
        self.channel = grpc.aio.insecure_channel(target, options=options)
        self.kv: Any = rpc.KVStub(self.channel)
        self.watch: Any = rpc.WatchStub(self.channel)
        self.maintenance: Any = rpc.MaintenanceStub(self.channel)
        self.healthy = True  # until a probe or a call says otherwise
        self.answers = True
        """Whether its last word was an answer, even "no leader" (out of rotation during an election,
        but alive), rather than silence or a lost connection (hung, down)."""
        self.healthy_since = 0.0
        self.member_id = 0
        self.calls: set[Any] = set()
        """Unary calls in flight, abandoned (cancelled) when the member leaves rotation."""
        self.abandoned: set[Any] = set()
        self.watches: set[Streaming] = set()

    def __repr__(self) -> str:
        return f"Member({self.endpoint})"


class Members:
    """Every member of the cluster, probed in the background while open."""

    def __init__(
        self,
        endpoints: Sequence[tuple[str, str]],
        options: Sequence[tuple[str, Any]],
        *,
        probe_interval: float = PROBE_INTERVAL,
        probe_timeout: float = PROBE_TIMEOUT,
    ) -> None:
        """``endpoints``: (client URL, gRPC target) per member."""
        self.members = [Member(url, target, options) for url, target in endpoints]
        self.leader_id = 0
        self.has_leader = asyncio.Event()
        """Set while a leader that answers (or one outside ``members``) is known."""
        self._term = 0
        self._next = 0
        self._probe_interval = probe_interval
        self._probe_timeout = probe_timeout
        self._prober: asyncio.Task[None] | None = None
        self._probing: dict[Member, asyncio.Task[bool]] = {}

    async def open(self) -> None:
        """Probe every member once, then keep probing in the background."""
        await asyncio.gather(*(self.probe(member) for member in self.members))
        self._prober = asyncio.get_running_loop().create_task(self._probe_loop())

    async def close(self) -> None:
        tasks = [task for task in (self._prober, *self._probing.values()) if task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with suppress(asyncio.CancelledError):
                await task
        self._prober = None
        for member in self.members:
            await member.channel.close()

    # -- choosing --------------------------------------------------------------------------------

    def for_call(self, tried: set[Member]) -> Member | None:
        """The member for a unary call that ``tried`` have failed: the leader if it answers, else the
        next answering member, else (no member answers: a probe may be stale) the next untried one."""
        untried = [member for member in self.members if member not in tried]
        healthy = [member for member in untried if member.healthy]
        for member in healthy:
            if member.member_id and member.member_id == self.leader_id:
                return member
        return self._round_robin(healthy or untried)

    def any_healthy(self) -> bool:
        """Whether some member answers (its last probe passed)."""
        return any(member.healthy for member in self.members)

    def for_watch(self) -> Member:
        """The answering member with the fewest watch streams; during an election (no member in
        rotation) one that still answers "no leader" rather than a hung one; else the next member."""
        pool = [member for member in self.members if member.healthy]
        pool = pool or [member for member in self.members if member.answers]
        if pool:
            return min(pool, key=lambda member: len(member.watches))
        return self._round_robin(self.members) or self.members[0]

    def _round_robin(self, pool: list[Member]) -> Member | None:
        if not pool:
            return None
        self._next += 1
        return pool[self._next % len(pool)]

    # -- health ----------------------------------------------------------------------------------

    def down(self, member: Member, reason: str) -> None:
        """Take ``member`` out of rotation: abandon its calls, move its watches, probe it."""
        member.answers = LEADERLESS in reason
        if member.healthy:
            member.healthy = False
            log.warning("etcd member %s left rotation: %s", member.endpoint, reason)
        if member.member_id and member.member_id == self.leader_id:
            self.leader_id = 0  # the others still name it until they elect another
            self.has_leader.clear()
        for call in list(member.calls):
            member.abandoned.add(call)
            call.cancel()
        for watch in list(member.watches):
            watch.move("its member left rotation")
        self.suspect(member)

    def suspect(self, member: Member) -> None:
        """Probe ``member`` now (a call to it ran past its deadline), unless a probe is under way."""
        if member not in self._probing:
            task = asyncio.get_running_loop().create_task(self.probe(member))
            self._probing[member] = task
            task.add_done_callback(lambda _: self._probing.pop(member, None))

    async def probe(self, member: Member) -> bool:
        """Whether ``member`` answers a Status (with a leader) in time; updates its state."""
        try:
            status = await member.maintenance.Status(
                rpc.StatusRequest(), timeout=self._probe_timeout, metadata=HASLEADER
            )
        except grpc.aio.AioRpcError as error:
            self.down(member, f"{error.code().name}: {error.details()}")
            return False
        member.member_id = int(status.header.member_id)
        member.answers = True
        if not member.healthy:
            member.healthy = True
            member.healthy_since = asyncio.get_running_loop().time()
            log.info("etcd member %s answers again", member.endpoint)
        self._heard_of_leader(int(status.leader), int(status.raftTerm))
        return True

    def _heard_of_leader(self, leader: int, term: int) -> None:
        """A member names ``leader`` in ``term``: believed unless it is a member out of rotation
        (followers name a dead leader until their election timeout)."""
        if not leader or term < self._term:
            return
        if any(m.member_id == leader and not m.healthy for m in self.members):
            return
        self._term, self.leader_id = term, leader
        self.has_leader.set()

    async def _probe_loop(self) -> None:
        while True:
            await asyncio.sleep(self._probe_interval)
            await asyncio.gather(*(self.probe(member) for member in self.members))
            self._rebalance()

    def _rebalance(self) -> None:
        """Move one watch stream from the busiest member to one that has answered long enough and
        has at least two fewer: over time the streams spread over every member again."""
        now = asyncio.get_running_loop().time()
        healthy = [member for member in self.members if member.healthy]
        settled = [m for m in healthy if now - m.healthy_since >= REBALANCE_AFTER]
        if not settled:
            return
        idle = min(settled, key=lambda member: len(member.watches))
        busy = max(healthy, key=lambda member: len(member.watches))
        if len(busy.watches) - len(idle.watches) >= 2:
            next(iter(busy.watches)).move("to spread the streams over the members")
