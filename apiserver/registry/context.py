"""What a server shares with the parts its definitions name (strategies, admission plugins, controllers): they
are built from ``module:Name`` references with this one argument, as kube's REST storage constructors receive
their options, so a built-in kind can reach the authorizer or another resource's Store without globals."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from apiserver.audit.internal import InternalAudit
from apiserver.authentication.token import TokenAuthentication
from apiserver.authorization.authorizer import AlwaysAllow, Authorizer
from apiserver.machinery.serviceranges import DEFAULT_SERVICE_RANGES, ServiceRanges

if TYPE_CHECKING:
    from apiserver.registry.store import Store
    from apiserver.storage.interface import Storage


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


@dataclass
class ServerContext:
    storage: Storage
    authorizer: Authorizer = field(default_factory=AlwaysAllow)
    stores: dict[tuple[str, str], Store] = field(default_factory=dict)
    """Every resource's Store by (group, plural), filled while the server is built."""
    authorizer_modes: dict[str, Authorizer] = field(default_factory=dict)
    """Authorizers the server's parts provide by ``--authorization-mode`` name (the RBAC kinds' "RBAC"),
    filled while the server is built; the server composes its authorizer from them."""
    tokens: TokenAuthentication = field(default_factory=TokenAuthentication)
    """Bearer-token authentication (TokenReview, service-account tokens, the bearer-token filter)."""
    leader_election: LeaderElection | None = None
    """None: this server is the only replica of its storage (SQLite, memory), so it leads from the start."""
    elector: Elector | None = None
    """The part that elects (the Lease kind's), set while the server is built."""
    event_ttl: float = 3600.0
    """kube-apiserver's --event-ttl in seconds: how long an event is kept after its last report."""
    proxy_client_cert: tuple[Path, Path] | None = None
    """The certificate and key the server presents to the API servers it proxies to
    (``--proxy-client-cert-file``, ``--proxy-client-key-file``; kubeadm's front-proxy-client by default)."""
    service_ranges: ServiceRanges = DEFAULT_SERVICE_RANGES
    """The cluster IPs and node ports Services are given (--service-cluster-ip-range,
    --service-node-port-range)."""
    secure_port: int = 6443
    """The port the server serves on (--secure-port), which the `kubernetes` Service targets."""
    audit: InternalAudit = field(default_factory=InternalAudit)
    """How the server's own writes (its controllers') reach the audit log; the audit chain sets the log's
    policy and backend on it (no log: nothing is recorded)."""

    def store(self, group: str, plural: str) -> Store:
        return self.stores[(group, plural)]
