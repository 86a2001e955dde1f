"""What an ordinary authenticated user's GET costs over a `system:masters` one, in process.

`compare --modes tls` sends its GETs with a bearer token of `--token-auth-file` for a user bound to
`cluster-admin` by a ClusterRoleBinding, not in `system:masters`: such a request pays for the token's lookup,
RBAC's decision, priority-and-fairness classification and seats, which a `system:masters` user skips (the
privileged-groups authorizer allows it, and it is exempt from fairness). Here one server with RBAC is called
through the chain as `serve` builds it (server/chain.py), its ASGI app called directly, by:

* ``masters``: `--insecure-serving`'s user (no credentials, `system:unsecured` in `system:masters`);
* ``token``: the bench's bearer token, the token file's user bound to `cluster-admin`;
* ``token, no fairness``: the same with `--enable-priority-and-fairness=false` (max-in-flight instead).

Reported: µs of CPU per GET (median of interleaved rounds) and the difference against ``masters``; then
each step that differs, called alone for both users (µs per call, median of rounds): authentication as
`serve` composes it over TLS (the x509 authenticator, finding no client certificate, then the bearer
token), the authorizer's decision, and the flow-schema classification with its seat taken and given back.
With ``--profile PATH`` the token variant alone runs under cProfile and its top functions are printed.

Run from the repository root: ``.venv/bin/python -m bench.authpath_bench``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import pstats
import time
from collections.abc import Awaitable, Callable
from functools import partial

from apiserver.authentication.authenticator import request_authenticator
from apiserver.authentication.token import (
    AudienceAgnostic,
    BearerTokenAuthenticator,
    TokenAuthentication,
)
from apiserver.authentication.tokenfile import TokenFileAuthenticator, parse_token_csv
from apiserver.authentication.user import UNSECURED, UserInfo
from apiserver.authentication.x509 import X509Authenticator
from apiserver.authorization.authorizer import Attributes, Decision
from apiserver.endpoints.routing import RequestInfo
from apiserver.filters.authorization import authorizer_attributes
from apiserver.filters.fairness import PriorityAndFairnessFilter
from apiserver.server.app import APIServer
from apiserver.server.chain import HandlerChain, build_handler_chain
from apiserver.server.options import ChainOptions
from apiserver.storage import MemoryStorage
from bench.chain_bench import (
    KUBECTL_HEADERS,
    PATH,
    as_served,
    cpu_per_request,
    per_get_rows,
    seed,
)
from bench.common import Row, interleaved, print_rows, spread
from bench.compare import BENCH_USER, TOKEN, TOKEN_LINE
from generated.server import OPENAPI_DIR, build_apis

ROUNDS = 7
RBAC_GROUP = "rbac.authorization.k8s.io"
TOKEN_HEADERS = [*KUBECTL_HEADERS, (b"authorization", f"Bearer {TOKEN}".encode())]
GET_INFO = RequestInfo(
    PATH, "get", True, "apis", "stable.example.com", "v1", "default", "crontabs", "", "bench-get"
)
CALLS = 20_000


async def token_server() -> APIServer:
    """A server with RBAC, the bench's token file and the bench user bound to cluster-admin."""
    tokens = TokenAuthentication()
    users = parse_token_csv(TOKEN_LINE, "tokens.csv")
    tokens.authenticators.append(AudienceAgnostic(TokenFileAuthenticator(users), ()))
    server = APIServer(
        build_apis(), MemoryStorage(), OPENAPI_DIR, tokens=tokens, authorization_modes=("RBAC",)
    )
    await server.start()
    await seed(server)
    await server.context.store(RBAC_GROUP, "clusterrolebindings").create(
        None,
        {
            "metadata": {"name": "bench-admin"},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"apiGroup": RBAC_GROUP, "kind": "User", "name": BENCH_USER}],
        },
    )
    return server


def chains(server: APIServer) -> dict[str, tuple[HandlerChain, list[tuple[bytes, bytes]]]]:
    """Each variant's chain over ``server``, and the headers its GETs carry."""
    return {
        "masters": (build_handler_chain(server, ChainOptions(), insecure=True), KUBECTL_HEADERS),
        "token": (build_handler_chain(server, ChainOptions()), TOKEN_HEADERS),
        "token, no fairness": (
            build_handler_chain(server, ChainOptions(enable_priority_and_fairness=False)),
            TOKEN_HEADERS,
        ),
    }


async def settled(server: APIServer) -> None:
    """Until the authorizer's informers have the binding (the first GETs would be refused)."""
    attributes = Attributes(
        UserInfo(BENCH_USER, groups=("bench", "system:authenticated")), "get", True, "default"
    )
    deadline = time.monotonic() + 60
    while (await server.context.authorizer.authorize(attributes))[0] is not Decision.ALLOW:
        if time.monotonic() > deadline:
            raise RuntimeError("RBAC never allowed the bench user")
        await asyncio.sleep(0.02)


async def measure() -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """µs of CPU per GET of each variant, and per call of each step, one sample per round."""
    server = await token_server()
    try:
        await settled(server)
        variants: dict[str, Callable[[], Awaitable[float]]] = {
            name: partial(cpu_per_request, chain, headers)
            for name, (chain, headers) in chains(server).items()
        }
        return await interleaved(variants, ROUNDS), await steps(server)
    finally:
        await server.stop()


async def per_call(call: Callable[[], Awaitable[object]]) -> float:
    """µs of CPU per ``call``, over CALLS of them."""
    gc.collect()
    started = time.process_time()
    for _ in range(CALLS):
        await call()
    return (time.process_time() - started) / CALLS * 1e6


async def seats(apf: PriorityAndFairnessFilter, user: UserInfo) -> None:
    """What the fairness filter does for a GET that starts at once: classify, take a seat, give it back."""
    classified = apf.classifier.classify(user, GET_INFO)
    if classified is not None:
        queues = apf.levels[classified[0].name]
        assert queues.try_start(1)
        queues.release(None, 1)


async def steps(server: APIServer) -> dict[str, list[float]]:
    """Each step that differs between the users, alone, one sample per round."""
    tls_scope = {"headers": TOKEN_HEADERS, "extensions": {"tls": {"client_cert_chain": []}}}
    tokens = server.context.tokens.authenticator()
    assert tokens is not None
    token_authenticator = request_authenticator(
        [X509Authenticator([]), BearerTokenAuthenticator(tokens)]
    )
    masters_authenticator = request_authenticator([], anonymous_user=UNSECURED)
    token_user = await token_authenticator.authenticate(tls_scope)
    assert token_user is not None and token_user.name == BENCH_USER
    authorize = server.context.authorizer.authorize
    apf = PriorityAndFairnessFilter(600, 15.0, server.stored_count)
    variants: dict[str, Callable[[], Awaitable[float]]] = {}
    for who, user, authenticator, scope in (
        ("masters", UNSECURED, masters_authenticator, {"headers": KUBECTL_HEADERS}),
        ("token", token_user, token_authenticator, tls_scope),
    ):
        attributes = authorizer_attributes(user, GET_INFO)
        variants[f"{who}: authentication"] = partial(
            per_call, partial(authenticator.authenticate, scope)
        )
        variants[f"{who}: authorization"] = partial(per_call, partial(authorize, attributes))
        variants[f"{who}: priority and fairness"] = partial(per_call, partial(seats, apf, user))
    return await interleaved(variants, ROUNDS)


async def profiled(path: str) -> None:
    """The token variant under cProfile, after a warm-up, saved to ``path`` and its top printed."""
    server = await token_server()
    try:
        await settled(server)
        chain, headers = chains(server)["token"]
        await cpu_per_request(chain, headers)
        profile = cProfile.Profile()
        profile.enable()
        await cpu_per_request(chain, headers)
        profile.disable()
    finally:
        await server.stop()
    profile.dump_stats(path)
    out = io.StringIO()
    pstats.Stats(path, stream=out).sort_stats("tottime").print_stats(40)
    print(out.getvalue())


def run() -> list[Row]:
    samples, by_step = as_served(measure())
    rows = per_get_rows("authpath", samples, "masters")
    rows += [
        Row("authpath", f"{name}: CPU µs per call", spread(values, ",.2f"))
        for name, values in by_step.items()
    ]
    print_rows(rows)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.authpath_bench")
    parser.add_argument("--profile", help="profile the token variant, saving the stats here")
    options = parser.parse_args()
    if options.profile:
        as_served(profiled(options.profile))
    else:
        run()


if __name__ == "__main__":
    main()
