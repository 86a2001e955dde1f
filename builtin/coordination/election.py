"""Leader election over a Lease, as client-go's tools/leaderelection does it (LeaseLock,
tryAcquireOrRenew): replicas sharing a storage race to create or take over one Lease; the holder renews it
every retry period and runs the leader-only controllers; a candidate takes over once the lease has not
changed for its leaseDurationSeconds (measured on its own clock since it last saw the record change, so
clocks need not agree); a leader that cannot renew within the renew deadline stops its controllers and
campaigns again. A clean stop releases the lease, so the next replica takes over at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from datetime import UTC, datetime
from typing import Any, Protocol

from apiserver.machinery import errors
from apiserver.machinery.tasks import cancel_and_wait
from apiserver.registry.store import Store
from apiserver.server.controllers import Controller, LeaderElection
from apiserver.storage.interface import StorageError
from builtin.wants import WantsElection, WantsStores

log = logging.getLogger(__name__)

GROUP, PLURAL = "coordination.k8s.io", "leases"


class ElectionServer(WantsStores, WantsElection, Protocol):
    """The Leases' Store, the election's configuration, and where the elector registers."""


def micro_time(moment: datetime) -> str:
    """metav1.MicroTime's RFC 3339 form, microseconds always printed."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    """The server's elector (the seam of ``ElectionServer.elector``): a controller of every replica that runs
    the leader-only controllers while its replica holds the Lease."""

    def __init__(self, context: ElectionServer) -> None:
        self.context = context
        self.identity = (
            f"{socket.gethostname()}_{os.getpid()}_{uuid.uuid4()}"  # client-go: host_uuid
        )
        self.controllers: list[Controller] = []
        self.leading = False
        self._task: asyncio.Task[None] | None = None
        self._retired = False
        self._observed: dict[str, Any] | None = None  # the lease's spec as last seen
        self._observed_at = 0.0  # when it last changed, on this replica's monotonic clock
        self._renewed = (
            0.0  # when this replica last acquired or renewed the lease, on the same clock
        )
        context.elector = self

    def add(self, controller: Controller) -> None:
        self.controllers.append(controller)

    @property
    def store(self) -> Store:
        return self.context.store(GROUP, PLURAL)

    async def start(self) -> None:
        config = self.context.leader_election
        if config is None:
            return  # the only replica: the server started the controllers itself
        if await self._try(config):  # lead before serving when nobody else does (a first start)
            await self._lead()
        self._task = asyncio.create_task(self._campaign(config))

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        self._task = None
        if self.leading:
            await self._step_down()
            config = self.context.leader_election
            if config is not None:
                with contextlib.suppress(errors.APIError, StorageError, TimeoutError):
                    async with asyncio.timeout(config.renew_deadline):
                        await self._release(config)

    def retire(self) -> None:
        self._retired = True

    async def _campaign(self, config: LeaderElection) -> None:
        while True:
            while not self.leading:
                await asyncio.sleep(config.retry_period)
                if not self._retired and await self._try(config):
                    await self._lead()
            while self.leading:
                await asyncio.sleep(config.retry_period)
                if await self._try(config):
                    self._renewed = time.monotonic()
                elif time.monotonic() - self._renewed >= config.renew_deadline:
                    log.warning("leader election: lease lost by %s", self.identity)
                    await self._step_down()

    def holds(self) -> bool:
        """Whether a leader-only controller may write now: this replica leads and acquired or renewed the
        lease within the renew deadline on its own clock. The campaign steps down only at its next round;
        a replica that was paused meanwhile (SIGSTOP, a VM frozen) wakes up with its controllers' work
        running before that round, on a lease another replica may hold by then: they check this first."""
        config = self.context.leader_election
        if config is None:
            return True  # the only replica
        return self.leading and time.monotonic() - self._renewed < config.renew_deadline

    async def _lead(self) -> None:
        log.info("leader election: %s leads", self.identity)
        self._renewed = time.monotonic()
        self.leading = True
        for controller in self.controllers:
            await controller.start()

    async def _step_down(self) -> None:
        self.leading = False
        for controller in reversed(self.controllers):
            await controller.stop()

    async def _try(self, config: LeaderElection) -> bool:
        """client-go's tryAcquireOrRenew, bounded by the renew deadline; a failure is a lost round."""
        try:
            # asyncio.timeout, not wait_for: wait_for of Python 3.11 may swallow a cancellation (stop)
            async with asyncio.timeout(config.renew_deadline):
                return await self._acquire_or_renew(config)
        except (errors.APIError, StorageError, TimeoutError) as error:
            # a TimeoutError's text is empty: say what timed out
            reason = (
                str(error) or f"no answer within the renew deadline ({config.renew_deadline:g}s)"
            )
            # a 409: another replica wrote the lease between our read and our write, and leads; client-go
            # says as much ("lock is held by ... and has not yet expired") at V(4), a debug line
            lost = isinstance(error, errors.APIError) and error.code == 409
            log.log(
                logging.DEBUG if lost else logging.INFO,
                "leader election: %s could not acquire or renew the lease: %s",
                self.identity,
                reason,
            )
            return False

    async def _acquire_or_renew(self, config: LeaderElection) -> bool:
        now = micro_time(datetime.now(UTC))
        duration = max(1, round(config.lease_duration))
        try:
            lease = await self.store.get(config.namespace, config.name)
        except errors.APIError as error:
            if error.code != 404:
                raise
            spec = {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": duration,
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": 0,
            }
            await self.store.create(config.namespace, self._lease(config, spec))
            self._seen(spec)
            return True
        old = lease.get("spec") or {}
        self._seen(old)
        holder = old.get("holderIdentity") or ""
        held_for = float(old.get("leaseDurationSeconds") or duration)
        if holder and holder != self.identity and self._observed_at + held_for > time.monotonic():
            return False
        ours = holder == self.identity
        spec = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": duration,
            "acquireTime": old.get("acquireTime", now) if ours else now,
            "renewTime": now,
            "leaseTransitions": int(old.get("leaseTransitions") or 0) + (0 if ours else 1),
        }
        await self._replace(config, lease, spec)
        return True

    async def _release(self, config: LeaderElection) -> None:
        """client-go's release: an empty holder and a one-second lease."""
        lease = await self.store.get(config.namespace, config.name)
        old = lease.get("spec") or {}
        if old.get("holderIdentity") != self.identity:
            return
        now = micro_time(datetime.now(UTC))
        spec = {
            "holderIdentity": "",
            "leaseDurationSeconds": 1,
            "acquireTime": now,
            "renewTime": now,
            "leaseTransitions": int(old.get("leaseTransitions") or 0),
        }
        await self._replace(config, lease, spec)

    async def _replace(
        self, config: LeaderElection, lease: dict[str, Any], spec: dict[str, Any]
    ) -> None:
        """An update on the resourceVersion read: another replica's write in between is a 409."""
        version = lease["metadata"]["resourceVersion"]

        def replace(current: dict[str, Any]) -> dict[str, Any]:
            current["spec"] = spec
            current["metadata"]["resourceVersion"] = version
            return current

        await self.store.update(config.namespace, config.name, replace)
        self._seen(spec)

    def _seen(self, spec: dict[str, Any]) -> None:
        if spec != self._observed:
            self._observed = dict(spec)
            self._observed_at = time.monotonic()

    @staticmethod
    def _lease(config: LeaderElection, spec: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": f"{GROUP}/v1",
            "kind": "Lease",
            "metadata": {"name": config.name, "namespace": config.namespace},
            "spec": spec,
        }
