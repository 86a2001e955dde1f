"""The loops a server runs beside serving and how replicas elect the one that runs the loops that write on
the cluster's behalf (kube's post-start hooks, kube-controller-manager's controllers and its leader
election): what the assembled server starts, and the seams the parts its definitions name fill."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class Controller(Protocol):
    """A loop the server runs beside serving (kube's post-start hooks and in-process controllers).

    One with a ``post_start_hook`` name (a class attribute) is listed by the health endpoints as
    ``poststarthook/<name>``, failing until its ``start`` has returned."""

    async def start(self) -> None:
        """Runs once the stores and their watch caches are up; returns once the loop is running."""
        ...

    async def stop(self) -> None: ...


def leader_only(controller: object) -> bool:
    """Whether a controller runs on the elected replica only (its class says ``leader_only = True``):
    loops that write on the cluster's behalf, which two replicas would run twice (kube runs them in
    kube-controller-manager, under leader election). Controllers that serve their own replica (informers of
    the authorizer, the bootstrap writes every kube-apiserver makes at start) run everywhere."""
    return bool(getattr(controller, "leader_only", False))


class Elector(Protocol):
    """Runs the leader-only controllers it is given while its replica holds the leadership."""

    def add(self, controller: Controller) -> None: ...

    def holds(self) -> bool:
        """Whether this replica's leader-only controllers may write now (it leads, and its lease is fresh
        by its own clock)."""
        ...

    def retire(self) -> None:
        """The replica is shutting down: it must not take the leadership any more (it would hold it
        only until it stops, and the others would wait out the lease)."""
        ...


@dataclass(frozen=True)
class LeaderElection:
    """How replicas sharing a storage elect the one that runs the leader-only controllers (the flags of
    kube-controller-manager: --leader-elect-lease-duration, -renew-deadline, -retry-period, and the lock's
    namespace and name)."""

    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    namespace: str = "kube-system"
    name: str = "apiforge-controller-manager"
