"""Fairness under a flood: many simultaneous large LISTs by one ordinary user, and what the others see.

Starts ``apiforge serve`` over TLS (memory storage, ``--max-requests-inflight`` 50 unless told otherwise) with
a static token for an ordinary user bound to the ``view`` ClusterRole, seeds one namespace with ConfigMaps
adding up to ~4 MB, then opens ``--flood`` connections at once, each sending that user's LIST of the
namespace. Meanwhile a prober reads ``/readyz`` (anonymous) and an admin (``system:masters``, client
certificate) GETs one ConfigMap, one request at a time each on a connection of its own, and a second
ordinary user GETs one ConfigMap likewise. Reported: the flood's answers by status and their latency, the
in-flight peak the server reached, and each prober's worst and p99 latency. kube's API Priority and
Fairness exempts probes and ``system:masters`` and answers a flow over its share 429 at once; the targets
are those of the performance docs (probes and admin under 200 ms throughout, the surplus answered 429).

``.venv/bin/python -m bench.fairness_bench [--flood 300] [--max-inflight 50] [--megabytes 4]``
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import multiprocessing
import ssl
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

import orjson
import yaml

from bench.common import ChildServer, free_port, run_uvloop

CONFIGMAP_BYTES = 4096
NAMESPACE = "flood"
FLOODER, BYSTANDER = "flooder", "bystander"


def _token(user: str) -> str:
    return f"{user}-token-0123456789"


@dataclass
class Probe:
    """One prober's latencies (seconds) and any answer that was not 200."""

    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)

    def summary(self) -> str:
        ordered = sorted(self.latencies) or [0.0]
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        return (
            f"{len(self.latencies)} requests, p50 {ordered[len(ordered) // 2] * 1e3:.0f} ms,"
            f" p99 {p99 * 1e3:.0f} ms, worst {ordered[-1] * 1e3:.0f} ms, statuses {dict(self.statuses)}"
        )


async def _request(
    port: int, context: ssl.SSLContext, method: str, path: str, headers: str = "", body: bytes = b""
) -> tuple[int, bytes]:
    """One request on a connection of its own (closed after), as a fresh client would send it."""
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, ssl=context, server_hostname="127.0.0.1"
    )
    try:
        head = (
            f"{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: application/json\r\n"
            f"connection: close\r\n{headers}"
        )
        if body:
            head += f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
        writer.write(head.encode() + b"\r\n" + body)
        response_head = await reader.readuntil(b"\r\n\r\n")
        status = int(response_head[9:12])
        length = None
        for line in response_head.lower().split(b"\r\n"):
            if line.startswith(b"content-length:"):
                length = int(line[15:])
        payload = await (reader.readexactly(length) if length is not None else reader.read())
        return status, payload
    finally:
        writer.close()


async def _probe(
    port: int, context: ssl.SSLContext, path: str, headers: str, probe: Probe, stop: asyncio.Event
) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        try:
            status, _ = await asyncio.wait_for(_request(port, context, "GET", path, headers), 60)
        except (OSError, TimeoutError, asyncio.IncompleteReadError):
            status = 0
        probe.latencies.append(time.perf_counter() - started)
        probe.statuses[status] += 1
        await asyncio.sleep(0.02)


def _probe_process(
    port: int, ca: str, admin_pem: Path, stop_after: float, results: Connection
) -> None:
    """The probers, in a process of their own: the flood's reading of hundreds of megabytes over TLS must
    not delay them on the client's side."""
    plain = ssl.create_default_context(cadata=ca)
    admin = ssl.create_default_context(cadata=ca)
    admin.load_cert_chain(admin_pem)
    one = f"/api/v1/namespaces/{NAMESPACE}/configmaps/cm-1"
    bystander = f"authorization: Bearer {_token(BYSTANDER)}\r\n"

    async def probe_all() -> dict[str, Probe]:
        probes = {"readyz": Probe(), "admin GET": Probe(), "bystander GET": Probe()}
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(stop_after, stop.set)
        stop_file = admin_pem.with_name("flood-done")
        asyncio.get_running_loop().create_task(_set_when_exists(stop_file, stop))
        await asyncio.gather(
            _probe(port, plain, "/readyz", "", probes["readyz"], stop),
            _probe(port, admin, one, "", probes["admin GET"], stop),
            _probe(port, plain, one, bystander, probes["bystander GET"], stop),
        )
        return probes

    results.send(run_uvloop(probe_all()))


async def _set_when_exists(path: Path, event: asyncio.Event) -> None:
    while not path.exists():
        await asyncio.sleep(0.05)
    event.set()


async def _flood(port: int, ca: str, flood: int) -> tuple[Counter[int], list[float]]:
    context = ssl.create_default_context(cadata=ca)
    headers = f"authorization: Bearer {_token(FLOODER)}\r\n"
    path = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
    statuses: Counter[int] = Counter()
    latencies: list[float] = []

    async def one_list() -> None:
        started = time.perf_counter()
        try:
            status, _ = await asyncio.wait_for(_request(port, context, "GET", path, headers), 120)
        except (OSError, TimeoutError, asyncio.IncompleteReadError):
            status = 0
        statuses[status] += 1
        latencies.append(time.perf_counter() - started)

    await asyncio.gather(*(one_list() for _ in range(flood)))
    return statuses, latencies


def _credentials(kubeconfig: Path) -> tuple[str, Path]:
    """The CA (PEM) and a file holding the admin's client certificate and key, from the kubeconfig."""
    config = yaml.safe_load(kubeconfig.read_text())
    cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
    pem = kubeconfig.with_name("bench-admin.pem")
    pem.write_bytes(
        base64.b64decode(user["client-certificate-data"])
        + base64.b64decode(user["client-key-data"])
    )
    pem.chmod(0o600)
    return base64.b64decode(cluster["certificate-authority-data"]).decode(), pem


async def _seed(port: int, admin: ssl.SSLContext, megabytes: float) -> None:
    async def post(path: str, body: dict[str, object]) -> None:
        status, answer = await _request(port, admin, "POST", path, body=orjson.dumps(body))
        if status != 201:
            raise RuntimeError(f"seeding {path}: {status} {answer[:300]!r}")

    await post("/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
    for user in (FLOODER, BYSTANDER):
        await post(
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            {
                "metadata": {"name": f"bench-{user}"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "view",
                },
                "subjects": [
                    {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}
                ],
            },
        )
    count = int(megabytes * 1024 * 1024 / CONFIGMAP_BYTES)
    path = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
    for first in range(0, count, 32):
        await asyncio.gather(
            *(
                post(
                    path,
                    {"metadata": {"name": f"cm-{i + 1}"}, "data": {"blob": "x" * CONFIGMAP_BYTES}},
                )
                for i in range(first, min(first + 32, count))
            )
        )


def run(flood: int, max_inflight: int, megabytes: float, server_log: Path | None = None) -> None:
    with tempfile.TemporaryDirectory(prefix="fairness-bench-") as tmp:
        work = Path(tmp)
        tokens = work / "tokens.csv"
        tokens.write_text("".join(f"{_token(u)},{u},{u}-uid\n" for u in (FLOODER, BYSTANDER)))
        tokens.chmod(0o600)
        port = free_port()
        data_dir = work / "data"
        argv = [
            *("-m", "apiforge", "serve", "--data-dir", str(data_dir), "--port", str(port)),
            *("--storage", "memory", "--token-auth-file", str(tokens)),
            *("--max-requests-inflight", str(max_inflight)),
        ]
        server = ChildServer("apiforge", argv, port, work / "server.log")
        server.start(ready_file=data_dir / "admin.kubeconfig", probe=False, timeout=60)
        try:
            ca, admin_pem = _credentials(data_dir / "admin.kubeconfig")
            admin = ssl.create_default_context(cadata=ca)
            admin.load_cert_chain(admin_pem)
            run_uvloop(_seed(port, admin, megabytes))
            receiver, sender = multiprocessing.Pipe(duplex=False)
            prober = multiprocessing.get_context("fork").Process(
                target=_probe_process, args=(port, ca, admin_pem, 180.0, sender)
            )
            prober.start()
            time.sleep(0.5)  # the probers' first answers come from a quiet server
            started = time.perf_counter()
            statuses, latencies = run_uvloop(_flood(port, ca, flood))
            elapsed = time.perf_counter() - started
            time.sleep(0.3)
            admin_pem.with_name("flood-done").touch()
            probes: dict[str, Probe] = receiver.recv()
            prober.join()
        finally:
            server.stop()
            log = server.log_path.read_text(errors="replace")
            if server_log is not None:
                server_log.write_text(log)
    errors = [line for line in log.splitlines() if "Error" in line or "Traceback" in line]
    ordered = sorted(latencies)
    print(
        f"flood of {flood} LISTs of ~{megabytes:g} MB (--max-requests-inflight {max_inflight}): {elapsed:.1f} s;"
        f" answers {dict(statuses)}; latency p50 {ordered[len(ordered) // 2]:.2f} s, worst {ordered[-1]:.2f} s"
    )
    for name, probe in probes.items():
        print(f"  {name:<14} {probe.summary()}")
    if errors:
        print("  the server logged errors; the last: " + " | ".join(errors[-3:]))


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.fairness_bench", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--flood", type=int, default=300)
    parser.add_argument("--max-inflight", type=int, default=50)
    parser.add_argument("--megabytes", type=float, default=4.0)
    parser.add_argument("--server-log", type=Path, help="keep the server's log in this file")
    options = parser.parse_args()
    run(options.flood, options.max_inflight, options.megabytes, options.server_log)


if __name__ == "__main__":
    main()
