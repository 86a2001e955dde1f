"""What TLS and client-certificate authentication cost a GET: the server's CPU per request, over plain HTTP
(``--insecure-serving``, anonymous) and over TLS as the admin of the written kubeconfig (x509), each on a
kept-alive connection (what kubectl and client libraries do: the certificate is verified once per
connection) and on a new connection per request (the handshake and the verification every time).

Two `apiforge serve` processes on memory storage, one client each (httpx, sequential requests); the server's
CPU is read from /proc around each phase. Interleaved rounds; reported: µs of server CPU per GET (median of
rounds) and the TLS/plain ratio.

Run from the repository root: ``.venv/bin/python -m bench.tls_bench`` (or ``python -m bench tls``).
"""

from __future__ import annotations

import base64
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import yaml

from bench.common import REPO, Row, cpu_seconds, free_port, median, print_rows, rotated, spread

ROUNDS = 5
KEPT_ALIVE = 1_500
NEW_CONNECTIONS = 200
PATH = "/api/v1/namespaces/default"


class Served:
    """One `apiforge serve` and a way to reach it as its kubeconfig says."""

    def __init__(self, work: Path, name: str, secure: bool) -> None:
        self.data_dir = work / name
        self.port = free_port()
        argv = [sys.executable, "-m", "apiforge", "serve", "--storage", "memory"]
        argv += ["--data-dir", str(self.data_dir), "--port", str(self.port)]
        argv += [] if secure else ["--insecure-serving"]
        self.log = (work / f"{name}.log").open("wb")
        self.process = subprocess.Popen(argv, cwd=REPO, stdout=self.log, stderr=subprocess.STDOUT)
        self.url = f"{'https' if secure else 'http'}://127.0.0.1:{self.port}"
        self.verify: ssl.SSLContext | bool = True
        kubeconfig = self.data_dir / "admin.kubeconfig"
        deadline = time.monotonic() + 30
        while not kubeconfig.exists():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"{name} did not start; see {self.log.name}")
            time.sleep(0.02)
        if secure:
            self.verify = _tls(kubeconfig)

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, verify=self.verify)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=15)
        self.log.close()


def _tls(kubeconfig: Path) -> ssl.SSLContext:
    config = yaml.safe_load(kubeconfig.read_text())
    cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
    context = ssl.create_default_context(
        cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
    )
    pem = kubeconfig.with_name("bench-client.pem")
    pem.write_bytes(
        base64.b64decode(user["client-certificate-data"])
        + base64.b64decode(user["client-key-data"])
    )
    context.load_cert_chain(pem)
    return context


def kept_alive(served: Served) -> float:
    """µs of server CPU per GET, all on one connection."""
    with served.client() as client:
        client.get(PATH).raise_for_status()
        before = cpu_seconds(served.process.pid)
        for _ in range(KEPT_ALIVE):
            client.get(PATH).raise_for_status()
        return (cpu_seconds(served.process.pid) - before) / KEPT_ALIVE * 1e6


def new_connections(served: Served) -> float:
    """µs of server CPU per GET, each on a connection of its own."""
    before = cpu_seconds(served.process.pid)
    for _ in range(NEW_CONNECTIONS):
        with served.client() as client:
            client.get(PATH, headers={"connection": "close"}).raise_for_status()
    return (cpu_seconds(served.process.pid) - before) / NEW_CONNECTIONS * 1e6


def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="tls-bench-") as work:
        servers = {
            "plain": Served(Path(work), "plain", False),
            "tls": Served(Path(work), "tls", True),
        }
        try:
            phases = {
                f"{name} {kind.__name__.replace('_', ' ')}": (kind, served)
                for name, served in servers.items()
                for kind in (kept_alive, new_connections)
            }
            samples: dict[str, list[float]] = {phase: [] for phase in phases}
            for round_number in range(ROUNDS):
                for phase in rotated(list(phases), round_number):
                    measure, served = phases[phase]
                    samples[phase].append(measure(served))
        finally:
            for served in servers.values():
                served.stop()
    rows = [
        Row("tls", f"{phase}: server CPU µs per GET", spread(v, ",.0f"))
        for phase, v in samples.items()
    ]
    for kind in ("kept alive", "new connections"):
        ratio = median(samples[f"tls {kind}"]) / median(samples[f"plain {kind}"])
        rows.append(Row("tls", f"TLS + x509 / plain HTTP, {kind}", f"{ratio:.2f}x"))
    print_rows(rows)
    return rows


if __name__ == "__main__":
    run()
