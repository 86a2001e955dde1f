"""What RBAC costs a GET, and that bindings for other users do not add to it (10,000 RoleBindings
slow a request by less than 2x).

One GET of a stored CronTab by user `jane` (a RoleBinding to `edit` in its namespace) is answered by the bare
APIServer, by the chain with AlwaysAllow, and by the chain with `--authorization-mode=RBAC` on two servers:
one with the bootstrap policy and jane's binding only, one with 10,000 more RoleBindings (written through the
store, as a client would, and so through the authorizer's watches) for 10,000 other users over 50
namespaces. Reported: µs of CPU per GET (median of interleaved rounds), the µs RBAC adds against
AlwaysAllow, and the ratio of the decision's cost with and without the crowd, measured on the authorizer
alone so that the GET's noise does not hide it.

Run from the repository root: ``.venv/bin/python -m bench.rbac_bench``.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from apiserver.authentication.user import UserInfo
from apiserver.authorization.authorizer import Attributes
from apiserver.server.app import APIServer
from apiserver.server.chain import build_handler_chain
from apiserver.server.options import ChainOptions
from apiserver.storage import MemoryStorage
from bench.chain_bench import KUBECTL_HEADERS, as_served, cpu_per_request, seed
from bench.common import Row, median, print_rows, rotated, spread
from generated.server import OPENAPI_DIR, build_apis

ROUNDS = 7
OTHERS = 10_000
DECISIONS = 20_000
JANE = UserInfo("jane", groups=("system:authenticated",))
RBAC_GROUP = "rbac.authorization.k8s.io"


class Jane:
    """Every request is jane's (what a client certificate or token would prove)."""

    async def authenticate(self, scope: Mapping[str, Any]) -> UserInfo | None:
        return JANE


def role_binding(name: str, namespace: str, user: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": namespace},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "edit"},
        "subjects": [{"kind": "User", "apiGroup": RBAC_GROUP, "name": user}],
    }


async def rbac_server(others: int) -> APIServer:
    server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR, authorization_modes=("RBAC",))
    await server.start()
    await seed(server)
    bindings = server.context.store(RBAC_GROUP, "rolebindings")
    await bindings.create("default", role_binding("jane", "default", "jane"))
    namespaces = server.context.store("", "namespaces")
    for n in range(50):
        await namespaces.create(None, {"metadata": {"name": f"team-{n}"}})
    for n in range(others):
        namespace = "default" if n % 50 == 0 else f"team-{n % 50}"
        await bindings.create(namespace, role_binding(f"user-{n}", namespace, f"user-{n}"))
    await settle(server)
    return server


async def settle(server: APIServer) -> None:
    """Wait until the authorizer allows jane's GET (its informers have caught up)."""
    attributes = decision_attributes()
    deadline = time.monotonic() + 60
    while (await server.context.authorizer.authorize(attributes))[0].value != "Allow":
        if time.monotonic() > deadline:
            raise RuntimeError("RBAC never allowed jane's GET")
        await asyncio.sleep(0.05)


def decision_attributes() -> Attributes:
    return Attributes(JANE, "get", True, "default", "stable.example.com", "v1", "crontabs", "", "x")


async def seconds_per_decision(server: APIServer) -> float:
    authorize = server.context.authorizer.authorize
    attributes = decision_attributes()
    gc.collect()
    started = time.process_time()
    for _ in range(DECISIONS):
        await authorize(attributes)
    return (time.process_time() - started) / DECISIONS * 1e6


async def measure() -> dict[str, list[float]]:
    plain = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR)
    await plain.start()
    await seed(plain)
    alone = await rbac_server(0)
    built = time.perf_counter()
    crowded = await rbac_server(OTHERS)
    print(f"   ({OTHERS:,} RoleBindings written and indexed in {time.perf_counter() - built:.1f}s)")
    try:
        always = build_handler_chain(plain, ChainOptions(), [Jane()])
        rbac_alone = build_handler_chain(alone, ChainOptions(authorization_mode="RBAC"), [Jane()])
        rbac_crowded = build_handler_chain(
            crowded, ChainOptions(authorization_mode="RBAC"), [Jane()]
        )
        variants: dict[str, Callable[[], Awaitable[float]]] = {
            "server": lambda: cpu_per_request(plain, KUBECTL_HEADERS),
            "chain AlwaysAllow": lambda: cpu_per_request(always, KUBECTL_HEADERS),
            "chain RBAC": lambda: cpu_per_request(rbac_alone, KUBECTL_HEADERS),
            f"chain RBAC +{OTHERS:,} bindings": lambda: cpu_per_request(
                rbac_crowded, KUBECTL_HEADERS
            ),
            "decision": lambda: seconds_per_decision(alone),
            f"decision +{OTHERS:,} bindings": lambda: seconds_per_decision(crowded),
        }
        samples: dict[str, list[float]] = {name: [] for name in variants}
        for variant in variants.values():  # warm-up
            await variant()
        for round_number in range(ROUNDS):
            for name in rotated(list(variants), round_number):
                samples[name].append(await variants[name]())
    finally:
        for server in (plain, alone, crowded):
            await server.stop()
    return samples


def run() -> list[Row]:
    samples = as_served(measure())
    names = list(samples)
    rows = [
        Row("rbac", f"{name}: CPU µs per GET", spread(samples[name], ",.1f")) for name in names[:4]
    ]
    rows += [Row("rbac", f"{name}: CPU µs", spread(samples[name], ",.2f")) for name in names[4:]]
    always = median(samples["chain AlwaysAllow"])
    rows.append(
        Row("rbac", "RBAC adds µs per GET", f"{median(samples['chain RBAC']) - always:,.1f}")
    )
    get_ratio = median(samples[names[3]]) / median(samples["chain RBAC"])
    decision_ratio = median(samples[names[5]]) / median(samples["decision"])
    rows.append(
        Row(
            "rbac",
            f"GET with {OTHERS:,} other bindings",
            f"{get_ratio:.2f}x",
            "< 2x",
            get_ratio < 2,
        )
    )
    rows.append(
        Row(
            "rbac",
            f"decision with {OTHERS:,} other bindings",
            f"{decision_ratio:.2f}x",
            "< 2x",
            decision_ratio < 2,
        )
    )
    print_rows(rows)
    return rows


if __name__ == "__main__":
    run()
