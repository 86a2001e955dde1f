"""What the filter chain costs a GET: the server's CPU per request, in-process, with and without the chain.

One GET of a stored CronTab is answered by the bare APIServer and by the same server behind the chain as
``apiforge serve`` builds it (server/chain.py): by default (request info, anonymous authentication,
impersonation check, in-flight limits, AlwaysAllow), with impersonation headers (`kubectl --as`), with
audit events written to a file, the same at the RequestResponse level of an audit policy (the response
body kept and recorded as JSON), and authenticated by client certificate (x509, the connection's verdict
kept, as on a kept-alive connection). The ASGI app is called directly, without a socket or HTTP parsing, so the
difference between the variants is the chain's own cost. Interleaved rounds; reported per variant: µs of
CPU per GET (median of rounds) and the added µs against the bare server.

Run from the repository root: ``.venv/bin/python -m bench.chain_bench``.
"""

from __future__ import annotations

import asyncio
import gc
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import orjson

from apiserver.audit.options import AuditOptions
from apiserver.authentication.x509 import X509Authenticator
from apiserver.endpoints.http import ASGIApp, Message
from apiserver.server.app import APIServer
from apiserver.server.chain import build_handler_chain
from apiserver.server.cli import GC_THRESHOLD
from apiserver.server.options import ChainOptions
from apiserver.server.pki import bootstrap, serving_names
from apiserver.storage import MemoryStorage
from bench.common import Row, interleaved, median, print_rows, spread
from bench.server_bench import crontab
from generated.server import OPENAPI_DIR, build_apis

T = TypeVar("T")
ROUNDS = 7
REQUESTS = 3_000
PATH = "/apis/stable.example.com/v1/namespaces/default/crontabs/bench-get"
KUBECTL_HEADERS = [
    (b"host", b"127.0.0.1:6443"),
    (b"user-agent", b"kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07"),
    (b"accept", b"application/json"),
    (b"kubectl-command", b"kubectl get"),
    (b"kubectl-session", b"0f8a3c52-7f0e-4d5b-9d6e-2b9c4d3f1a7e"),
    (b"accept-encoding", b"gzip"),
]
IMPERSONATING = [*KUBECTL_HEADERS, (b"impersonate-user", b"jane"), (b"impersonate-group", b"devs")]


def scope_of(
    headers: list[tuple[bytes, bytes]], extensions: dict[str, Any] | None = None
) -> dict[str, Any]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": PATH,
        "raw_path": PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 6443),
    }
    if extensions is not None:
        scope["extensions"] = extensions
    return scope


def connection_with_certificate() -> tuple[dict[str, Any], X509Authenticator]:
    """The TLS extension one connection's requests share, its client certificate the admin's of a fresh
    PKI, and the authenticator trusting that PKI's CA (what `serve` builds)."""
    with tempfile.TemporaryDirectory() as work:
        pki = bootstrap(Path(work), serving_names("127.0.0.1"))
    extensions = {"tls": {"client_cert_chain": [pki.admin.certificate_pem().decode()]}}
    return extensions, X509Authenticator([pki.ca.certificate])


async def receive() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


class Answers:
    """The send of every request: checks each response is a 200."""

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] != 200:
            raise RuntimeError(f"GET answered {message['status']}")


async def cpu_per_request(
    app: ASGIApp, headers: list[tuple[bytes, bytes]], extensions: dict[str, Any] | None = None
) -> float:
    """µs of this process's CPU per GET, over REQUESTS of them; each request gets a fresh scope (the
    chain writes to it), as uvicorn builds one per request."""
    send = Answers()
    gc.collect()  # no sample pays for garbage another left
    started = time.process_time()
    for _ in range(REQUESTS):
        await app(scope_of(list(headers), extensions), receive, send)
    return (time.process_time() - started) / REQUESTS * 1e6


async def measure() -> dict[str, list[float]]:
    """µs of CPU per GET of each variant, one sample per round."""
    server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR)
    await server.start()
    with tempfile.TemporaryDirectory() as work:
        try:
            await seed(server)
            chained = build_handler_chain(server, ChainOptions())
            audited = build_handler_chain(
                server, ChainOptions(audit_log_path=str(Path(work) / "audit.log"))
            )
            policy = Path(work) / "policy.yaml"
            policy.write_text(
                "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: RequestResponse}]\n"
            )
            bodies = build_handler_chain(
                server,
                ChainOptions(
                    audit_log_path=str(Path(work) / "bodies.log"),
                    audit=AuditOptions(policy_file=str(policy)),
                ),
            )
            tls, x509 = connection_with_certificate()
            certified = build_handler_chain(server, ChainOptions(), [x509])
            variants: dict[str, Callable[[], Awaitable[float]]] = {
                "server": lambda: cpu_per_request(server, KUBECTL_HEADERS),
                "chain": lambda: cpu_per_request(chained, KUBECTL_HEADERS),
                "chain --as": lambda: cpu_per_request(chained, IMPERSONATING),
                "chain audit": lambda: cpu_per_request(audited, KUBECTL_HEADERS),
                "chain audit RequestResponse": lambda: cpu_per_request(bodies, KUBECTL_HEADERS),
                "chain x509": lambda: cpu_per_request(certified, KUBECTL_HEADERS, tls),
            }
            samples = await interleaved(variants, ROUNDS)
            for chain in (audited, bodies):
                assert chain.auditor is not None
                chain.auditor.backend.close()
        finally:
            await server.stop()
    return samples


def as_served(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` with the garbage collector tuned as `apiforge serve` tunes it."""
    previous = gc.get_threshold()
    gc.set_threshold(GC_THRESHOLD, 20, 100)
    try:
        return asyncio.run(main)
    finally:
        gc.set_threshold(*previous)


def per_get_rows(bench: str, samples: dict[str, list[float]], base_name: str) -> list[Row]:
    """Each variant's µs of CPU per GET, then what it adds to ``base_name``'s (medians)."""
    base = median(samples[base_name])
    rows = [
        Row(bench, f"{name}: CPU µs per GET", spread(values, ",.1f"))
        for name, values in samples.items()
    ]
    return rows + [
        Row(bench, f"{name}: added µs per GET", f"{median(values) - base:,.1f}")
        for name, values in samples.items()
        if name != base_name
    ]


def run() -> list[Row]:
    rows = per_get_rows("chain", as_served(measure()), "server")
    print_rows(rows)
    return rows


async def seed(server: APIServer) -> None:
    body = orjson.dumps(crontab("bench-get"))
    sent: list[Message] = []
    scope = scope_of([(b"content-type", b"application/json")])
    scope.update(
        method="POST", path=PATH.rsplit("/", 1)[0], raw_path=PATH.rsplit("/", 1)[0].encode()
    )

    async def receive_body() -> Message:
        return {"type": "http.request", "body": body, "more_body": False}

    async def collect(message: Message) -> None:
        sent.append(message)

    await server(scope, receive_body, collect)
    if sent[0]["status"] != 201:
        raise RuntimeError(f"seeding answered {sent[0]['status']}: {sent[1]['body']!r}")


if __name__ == "__main__":
    run()
