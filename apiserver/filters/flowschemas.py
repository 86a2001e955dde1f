"""Which priority level serves a request, and as which flow: kube's bootstrap configuration of API Priority and
Fairness (k8s.io/apiserver pkg/apis/flowcontrol/bootstrap/default.go), its mandatory and suggested
PriorityLevelConfigurations and FlowSchemas, fixed here (the flowcontrol.apiserver.k8s.io objects that would
let an administrator change them are not served).

A level's seats are its share of the server's concurrency limit (``--max-requests-inflight`` plus
``--max-mutating-requests-inflight``, as kube sums them when priority and fairness is on): the nominal
concurrency shares of every limited level divide it, rounded up (kube's NominalCL). Borrowing between levels
is not done: each level keeps its nominal seats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from apiserver.authentication.user import MASTERS_GROUP, UserInfo
from apiserver.endpoints.routing import RequestInfo


@dataclass(frozen=True, slots=True)
class PriorityLevel:
    """A limited PriorityLevelConfiguration: ``queues`` 0 is the ``Reject`` limit response."""

    name: str
    shares: int
    queues: int = 0
    hand_size: int = 0
    queue_length_limit: int = 0


SYSTEM = PriorityLevel("system", 30, 64, 6, 50)
NODE_HIGH = PriorityLevel("node-high", 40, 64, 6, 50)
LEADER_ELECTION = PriorityLevel("leader-election", 10, 16, 4, 50)
WORKLOAD_HIGH = PriorityLevel("workload-high", 40, 128, 6, 50)
WORKLOAD_LOW = PriorityLevel("workload-low", 100, 128, 6, 50)
GLOBAL_DEFAULT = PriorityLevel("global-default", 20, 128, 6, 50)
CATCH_ALL = PriorityLevel("catch-all", 5)
LEVELS = (
    SYSTEM,
    NODE_HIGH,
    LEADER_ELECTION,
    WORKLOAD_HIGH,
    WORKLOAD_LOW,
    GLOBAL_DEFAULT,
    CATCH_ALL,
)

PROBE_PATHS = ("/healthz", "/readyz", "/livez")
"""The ``probes`` FlowSchema's non-resource URLs (each with its sub-paths): exempt, so that a load balancer's
or kubelet's probe is answered however busy the server is."""

NODES_GROUP = "system:nodes"
SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"
KUBE_SYSTEM_SERVICE_ACCOUNTS = "system:serviceaccount:kube-system:"
CONTROL_PLANE_USERS = frozenset(("system:kube-controller-manager", "system:kube-scheduler"))
_LEADER_ELECTION_VERBS = frozenset(("get", "create", "update"))


def nominal_seats(server_limit: int) -> dict[str, int]:
    """Each limited level's seats out of ``server_limit`` (kube's NominalCL: ceil(limit * shares / sum))."""
    total = sum(level.shares for level in LEVELS)
    return {level.name: math.ceil(server_limit * level.shares / total) for level in LEVELS}


def classify(user: UserInfo, info: RequestInfo) -> tuple[PriorityLevel, str] | None:
    """(the level, the flow) of a request; None when it is exempt. The flow is the FlowSchema's name and its
    distinguisher (the user, or the namespace for the control plane's schemas), in the order of the schemas'
    matching precedence."""
    groups = user.groups
    if MASTERS_GROUP in groups or _is_probe(info):  # exempt (1), probes (2)
        return None
    name = user.name
    kube_system_account = name.startswith(KUBE_SYSTEM_SERVICE_ACCOUNTS)
    if (kube_system_account or name in CONTROL_PLANE_USERS) and _is_leader_election(info):
        return (
            LEADER_ELECTION,
            f"system-leader-election/{name}",
        )  # 100 (and workload-leader-election, 200)
    if NODES_GROUP in groups:
        if info.resource in ("nodes", "leases"):
            return NODE_HIGH, f"system-node-high/{name}"  # 400
        return SYSTEM, f"system-nodes/{name}"  # 500
    if name in CONTROL_PLANE_USERS or kube_system_account:  # 800, 900: by namespace
        return WORKLOAD_HIGH, f"{name}/{info.namespace}"
    if SERVICE_ACCOUNTS_GROUP in groups:
        return WORKLOAD_LOW, f"service-accounts/{name}"  # 9000
    return (
        GLOBAL_DEFAULT,
        f"global-default/{name}",
    )  # 9900: every authenticated and unauthenticated user


def _is_probe(info: RequestInfo) -> bool:
    if info.is_resource_request or info.verb != "get":
        return False
    path = info.path.rstrip("/")
    return any(path == probe or path.startswith(probe + "/") for probe in PROBE_PATHS)


def _is_leader_election(info: RequestInfo) -> bool:
    if info.verb not in _LEADER_ELECTION_VERBS:
        return False
    if info.api_group == "coordination.k8s.io":
        return info.resource == "leases"
    return info.api_group == "" and info.resource in ("endpoints", "configmaps")
