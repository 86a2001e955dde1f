"""API Priority and Fairness in its essentials: kube's bootstrap flow schemas and priority levels
(k8s.io/apiserver pkg/apis/flowcontrol/bootstrap/default.go), the seats a level gets (NominalCL), the list
work estimator (pkg/util/flowcontrol/request/list_work_estimator.go), and fair queuing per flow
(pkg/util/flowcontrol/fairqueuing/queueset): queued rather than refused, refused when the queue is full or the
wait runs out, turns taken across flows, a wide request waiting for its seats."""

from __future__ import annotations

import asyncio

import pytest

from apiserver.authentication.user import ANONYMOUS, LOOPBACK, UserInfo
from apiserver.endpoints.routing import RequestInfo
from apiserver.filters.fairness import PriorityAndFairnessFilter
from apiserver.filters.flowschemas import bootstrap
from apiserver.filters.queueset import QueueSet, _deal, _Queue

JANE = UserInfo("jane", groups=("system:authenticated",))
ROBOT = UserInfo(
    "system:serviceaccount:apps:robot",
    groups=("system:serviceaccounts", "system:serviceaccounts:apps", "system:authenticated"),
)
KUBE_SYSTEM_ROBOT = UserInfo(
    "system:serviceaccount:kube-system:controller",
    groups=("system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"),
)
CLASSIFIER = bootstrap()
NODE = UserInfo("system:node:n1", groups=("system:nodes", "system:authenticated"))
GET_PODS = RequestInfo(
    "/api/v1/namespaces/apps/pods/p", "get", True, "api", "", "v1", "apps", "pods"
)
LEASE_UPDATE = RequestInfo(
    "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l",
    "update",
    True,
    "apis",
    "coordination.k8s.io",
    "v1",
    "kube-system",
    "leases",
)


def probe(path: str) -> RequestInfo:
    return RequestInfo(path, "get")


@pytest.mark.parametrize(
    ("user", "info", "level"),
    [
        (LOOPBACK, GET_PODS, None),  # exempt: system:masters
        (ANONYMOUS, probe("/readyz"), None),  # probes
        (JANE, probe("/livez/ping"), "global-default"),  # the probes schema names the paths exactly
        (JANE, probe("/healthz"), None),
        (ANONYMOUS, probe("/version"), "global-default"),
        (JANE, GET_PODS, "global-default"),
        (ROBOT, GET_PODS, "workload-low"),
        (KUBE_SYSTEM_ROBOT, GET_PODS, "workload-high"),
        (KUBE_SYSTEM_ROBOT, LEASE_UPDATE, "leader-election"),
        (NODE, GET_PODS, "system"),
        (NODE, LEASE_UPDATE, "node-high"),
    ],
)
def test_requests_are_classified_as_kubes_bootstrap_flow_schemas(
    user: UserInfo, info: RequestInfo, level: str | None
) -> None:
    classified = CLASSIFIER.classify(user, info)
    assert (classified[0].name if classified else None) == level
    assert CLASSIFIER.classify(user, info) == classified  # remembered, the same


def test_users_are_distinct_flows_and_the_control_plane_flows_by_namespace() -> None:
    other = UserInfo("joe", groups=("system:authenticated",))
    jane, joe = CLASSIFIER.classify(JANE, GET_PODS), CLASSIFIER.classify(other, GET_PODS)
    assert jane is not None and joe is not None and jane[1] != joe[1]
    in_apps = CLASSIFIER.classify(KUBE_SYSTEM_ROBOT, GET_PODS)
    in_default = CLASSIFIER.classify(KUBE_SYSTEM_ROBOT, GET_PODS._replace(namespace="default"))
    assert in_apps is not None and in_default is not None and in_apps[1] != in_default[1]


def test_a_users_requests_in_every_namespace_are_classified_once() -> None:
    classifier = bootstrap()
    for n in range(50):
        in_namespace = GET_PODS._replace(namespace=f"team-{n}")
        assert classifier.classify(JANE, in_namespace) == classifier.classify(JANE, GET_PODS)
        flow = classifier.classify(KUBE_SYSTEM_ROBOT, in_namespace)
        assert flow is not None and flow[1] == f"kube-system-service-accounts/team-{n}"
    assert len(classifier._memo) == 2


def test_the_remembered_classifications_are_bounded() -> None:
    """Clients with ever new names and paths cannot grow the memo past its limit."""
    classifier = bootstrap()
    for n in range(3 * classifier.limit):
        user = UserInfo(f"user-{n}", groups=("system:authenticated",))
        assert classifier.classify(user, probe(f"/metrics/{n}")) is not None
        assert len(classifier._memo) <= classifier.limit


def test_the_server_limit_is_shared_out_by_nominal_concurrency_shares() -> None:
    # 400 + 200 (kube's defaults), shares 30+40+10+40+100+20+5 = 245, each rounded up
    assert CLASSIFIER.nominal_seats(600) == {
        "system": 74,
        "node-high": 98,
        "leader-election": 25,
        "workload-high": 98,
        "workload-low": 245,
        "global-default": 49,
        "catch-all": 13,
    }
    assert min(CLASSIFIER.nominal_seats(1).values()) == 1


def test_a_list_takes_a_seat_per_hundred_stored_objects_up_to_ten() -> None:
    counts = {"configmaps": 0}

    apf = PriorityAndFairnessFilter(600, 15.0, lambda _group, _resource: counts["configmaps"])
    listing = RequestInfo("/api/v1/configmaps", "list", True, "api", "", "v1", "", "configmaps")
    widths = []
    for stored in (0, 1, 100, 101, 950, 5000):
        counts["configmaps"] = stored
        widths.append(apf.width(listing))
    assert widths == [1, 1, 1, 2, 10, 10]
    assert apf.width(GET_PODS) == 1


def test_a_hand_is_distinct_queues_and_the_same_for_a_flow() -> None:
    hand = _deal("global-default/jane", 128, 6)
    assert len(set(hand)) == 6 and all(0 <= index < 128 for index in hand)
    assert _deal("global-default/jane", 128, 6) == hand
    assert _deal("global-default/joe", 128, 6) != hand


def run(coroutine: object) -> None:
    asyncio.run(coroutine)  # type: ignore[arg-type]


Grant = tuple[bool, _Queue | None]


async def acquire(queues: QueueSet, flow: str, width: int) -> Grant:
    """As the filter asks: the seats at once, or a wait in the flow's queues; (granted, its queue)."""
    if queues.try_start(width):
        return True, None
    queue = await queues.wait(flow, width)
    return queue is not None, queue


def release(queues: QueueSet, grant: Grant, width: int) -> None:
    assert grant[0]
    queues.release(grant[1], width)


def test_requests_past_the_seats_wait_and_start_when_seats_free() -> None:
    async def scenario() -> None:
        queues = QueueSet(2, 128, 6, 50, 5.0)
        first = await acquire(queues, "a", 1)
        second = await acquire(queues, "a", 1)
        assert first[0] and second[0] and queues.seats_in_use == 2
        third = asyncio.create_task(acquire(queues, "b", 1))
        await asyncio.sleep(0)
        assert not third.done() and queues.waiting == 1
        release(queues, first, 1)
        assert (await third)[0] and queues.seats_in_use == 2 and queues.waiting == 0

    run(scenario())


def test_a_full_queue_refuses_at_once_and_a_long_wait_is_refused() -> None:
    async def scenario() -> None:
        queues = QueueSet(1, 1, 1, 2, 0.05)
        assert (await acquire(queues, "a", 1))[0]
        waiting = [asyncio.create_task(acquire(queues, "a", 1)) for _ in range(2)]
        await asyncio.sleep(0)
        assert await acquire(queues, "a", 1) == (False, None)  # the queue holds 2: refused at once
        assert await asyncio.gather(*waiting) == [(False, None)] * 2  # the wait limit ran out
        assert queues.waiting == 0 and queues.seats_in_use == 1

    run(scenario())


def test_a_level_without_queues_refuses_past_its_seats() -> None:
    async def scenario() -> None:
        queues = QueueSet(1, 0, 0, 0, 5.0)  # catch-all: the Reject limit response
        assert (await acquire(queues, "a", 1))[0]
        assert await acquire(queues, "b", 1) == (False, None)

    run(scenario())


def test_freed_seats_go_to_the_flows_in_turn() -> None:
    """A flow that queued ten requests before another flow's one delays it by one turn, not ten."""

    async def scenario() -> None:
        flows = [f"flow-{n}" for n in range(50)]
        # two flows whose hands share no queue, so each waits in queues of its own
        first, second = next(
            (a, b)
            for a in flows
            for b in flows
            if not set(_deal(a, 128, 6)) & set(_deal(b, 128, 6))
        )
        queues = QueueSet(1, 128, 6, 50, 5.0)
        held = await acquire(queues, first, 1)
        order: list[str] = []

        async def request(flow: str) -> None:
            grant = await acquire(queues, flow, 1)
            order.append(flow)
            await asyncio.sleep(0)
            release(queues, grant, 1)

        flood = [asyncio.create_task(request(first)) for _ in range(10)]
        await asyncio.sleep(0)
        other = asyncio.create_task(request(second))
        await asyncio.sleep(0)
        release(queues, held, 1)
        await asyncio.gather(*flood, other)
        assert order.index(second) <= 1

    run(scenario())


def test_a_wide_request_waits_for_its_seats_and_narrow_ones_cannot_starve_it() -> None:
    """Another flow's narrow requests, which would finish first in virtual time, go first (kube's
    queueset.go, findDispatchQueueToBoundLocked), but only until their flow has had the wide one's share:
    then the wide one is next, and the seats that free wait for it."""

    async def scenario() -> None:
        queues = QueueSet(10, 128, 6, 50, 5.0)
        narrow = [await acquire(queues, f"n{i}", 1) for i in range(3)]
        wide = asyncio.create_task(acquire(queues, "w", 10))
        await asyncio.sleep(0)
        passed = 0
        while not wide.done():
            later = asyncio.create_task(acquire(queues, "late", 1))
            await asyncio.sleep(0)
            assert queues.waiting == 2
            release(
                queues, narrow.pop(0), 1
            )  # a seat frees: the narrow one's, or the wide one's turn
            if queues.waiting == 1:  # the narrow one went first
                passed += 1
                narrow.append(await later)
                continue
            # the wide one is next: the narrow seats left must free before it starts, and it goes first
            for grant in narrow:
                release(queues, grant, 1)
            narrow = []
            wide_grant = await wide
            assert wide_grant[0] and queues.seats_in_use == 10 and not later.done()
            release(queues, wide_grant, 10)
            release(queues, await later, 1)
        assert 1 <= passed <= 20  # narrow ones went first, until virtual time reached the wide one
        assert (await acquire(queues, "huge", 50))[0]  # wider than the level: runs alone
        assert queues.seats_in_use == 10

    run(scenario())


def test_a_waiting_request_whose_client_left_leaves_its_queue() -> None:
    async def scenario() -> None:
        queues = QueueSet(1, 128, 6, 50, 5.0)
        held = await acquire(queues, "a", 1)
        waiting = asyncio.create_task(acquire(queues, "b", 1))
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert queues.waiting == 0
        release(queues, held, 1)
        assert queues.seats_in_use == 0

    run(scenario())


def test_a_narrow_request_does_not_wait_for_a_turn_of_every_queue_a_flood_holds() -> None:
    """A flow flooding the six queues of its hand with wide LISTs, and another flow's GET: the GET takes the
    first seat that frees, ahead of every LIST still waiting (it would finish first in virtual time)."""

    async def scenario() -> None:
        queues = QueueSet(20, 128, 6, 50, 5.0)
        running = [await acquire(queues, "flooder", 10) for _ in range(2)]
        flood = [asyncio.create_task(acquire(queues, "flooder", 10)) for _ in range(24)]
        await asyncio.sleep(0)
        started: list[asyncio.Task[Grant]] = []
        for _ in range(3):  # the flood is being served, a LIST at a time
            release(queues, running.pop(0), 10)
            while not (new := [task for task in flood if task.done() and task not in started]):
                await asyncio.sleep(0)
            started.extend(new)
            running.extend([task.result() for task in new])
        get = asyncio.create_task(acquire(queues, "bystander", 1))
        await asyncio.sleep(0)
        release(queues, running.pop(0), 10)
        assert queues.seats_in_use == 11  # the GET and one LIST started: the GET went first
        assert (await get)[0]
        for task in flood:
            task.cancel()

    run(scenario())
