"""The aggregation benchmark, side by side in one run: a GET of one CronTab straight from the server
that stores it (the ``back``), against the same GET through a ``front`` that proxies stable.example.com/v1
to the back as an APIService (authentication and authorization at the front, then the proxy over a kept-alive
TLS connection with the front-proxy certificate and X-Remote-* headers, then the back's own chain). Target: the
proxied GET costs less than 2x the direct one, in CPU (front + back) and in latency.

Two `apiforge serve` processes on memory storage, each reached by one kept-alive httpx client as its admin;
each server's CPU is read from /proc around each phase, phases interleaved and rotated over rounds, medians
reported.

Run from the repository root: ``.venv/bin/python -m bench.aggregation_bench`` (or ``python -m bench
aggregation``).
"""

from __future__ import annotations

import base64
import tempfile
import time
from pathlib import Path

import httpx

from bench.common import Row, median, print_rows, rotated, spread, thread_cpu_seconds
from bench.tls_bench import Served

ROUNDS = 5
GETS = 1_000
GROUP = "stable.example.com"
PATH = f"/apis/{GROUP}/v1/namespaces/default/crontabs/probe"
TARGET = 2.0


def register(front: Served, back: Served) -> None:
    """The back's Service (an ExternalName: 127.0.0.1) and the APIService, on the front."""
    bundle = base64.b64encode((back.data_dir / "pki" / "ca.crt").read_bytes()).decode()
    with front.client() as admin:
        admin.post(
            "/api/v1/namespaces/default/services",
            json={
                "metadata": {"name": "back"},
                "spec": {"type": "ExternalName", "externalName": "127.0.0.1"},
            },
        ).raise_for_status()
        admin.post(
            "/apis/apiregistration.k8s.io/v1/apiservices",
            json={
                "metadata": {"name": f"v1.{GROUP}"},
                "spec": {
                    "group": GROUP,
                    "version": "v1",
                    "service": {"namespace": "default", "name": "back", "port": back.port},
                    "caBundle": bundle,
                    "groupPriorityMinimum": 1000,
                    "versionPriority": 15,
                },
            },
        ).raise_for_status()


def seed(back: Served) -> None:
    with back.client() as admin:
        admin.post(
            f"/apis/{GROUP}/v1/namespaces/default/crontabs",
            json={
                "apiVersion": f"{GROUP}/v1",
                "kind": "CronTab",
                "metadata": {"name": "probe"},
                "spec": {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image"},
            },
        ).raise_for_status()


def until_proxied(client: httpx.Client) -> None:
    deadline = time.monotonic() + 30
    while client.get(PATH).status_code != 200:
        if time.monotonic() > deadline:
            raise RuntimeError("the front never proxied the GET")
        time.sleep(0.05)


def measure(client: httpx.Client, pids: tuple[int, int]) -> tuple[float, float, float]:
    """µs of the front's CPU, of the back's, and of latency, per GET on ``client``'s connection."""
    client.get(PATH).raise_for_status()
    before = [thread_cpu_seconds(pid) for pid in pids]
    started = time.perf_counter()
    for _ in range(GETS):
        client.get(PATH).raise_for_status()
    elapsed = time.perf_counter() - started
    front, back = (thread_cpu_seconds(pid) - b for pid, b in zip(pids, before, strict=True))
    return front / GETS * 1e6, back / GETS * 1e6, elapsed / GETS * 1e6


def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="aggregation-bench-") as directory:
        work = Path(directory)
        front = Served(work, "front", True)
        pki = front.data_dir / "pki"
        back = Served(
            work,
            "back",
            True,
            "--tls-san=back.default.svc",
            f"--requestheader-client-ca-file={pki / 'front-proxy-ca.crt'}",
            "--requestheader-allowed-names=front-proxy-client",
        )
        try:
            seed(back)
            register(front, back)
            with front.client() as proxied, back.client() as direct:
                until_proxied(proxied)
                pids = (front.process.pid, back.process.pid)
                phases = {
                    "direct GET (back)": (direct, pids),
                    "proxied GET (front + back)": (proxied, pids),
                }
                cpu: dict[str, list[float]] = {name: [] for name in phases}
                latency: dict[str, list[float]] = {name: [] for name in phases}
                fronts: list[float] = []
                for name in phases:  # warm-up
                    measure(*phases[name])
                for round_number in range(ROUNDS):
                    for name in rotated(list(phases), round_number):
                        front_cpu, back_cpu, waited = measure(*phases[name])
                        cpu[name].append(front_cpu + back_cpu)
                        latency[name].append(waited)
                        if name.startswith("proxied"):
                            fronts.append(front_cpu)
        finally:
            back.stop()
            front.stop()
    return report(cpu, latency, fronts)


def report(
    cpu: dict[str, list[float]], latency: dict[str, list[float]], fronts: list[float]
) -> list[Row]:
    direct, proxied = (median(cpu[name]) for name in cpu)
    direct_wait, proxied_wait = (median(latency[name]) for name in latency)
    rows = [
        Row("aggregation", f"{name}: server CPU µs per GET", spread(v)) for name, v in cpu.items()
    ]
    rows.append(Row("aggregation", "the front's share of the proxied GET: CPU µs", spread(fronts)))
    rows += [Row("aggregation", f"{name}: µs per GET", spread(v)) for name, v in latency.items()]
    rows += [
        Row(
            "aggregation",
            "proxied / direct GET, CPU",
            f"{proxied / direct:.2f}x",
            f"< {TARGET:.0f}x",
            proxied / direct < TARGET,
        ),
        Row(
            "aggregation",
            "proxied / direct GET, latency",
            f"{proxied_wait / direct_wait:.2f}x",
            f"< {TARGET:.0f}x",
            proxied_wait / direct_wait < TARGET,
        ),
    ]
    print_rows(rows)
    return rows


if __name__ == "__main__":
    run()
