"""``python -m bench kube``: apiforge against kube-apiserver (the oracle's v1.34.4), the same loads side by side.

Both servers run on ONE etcd (a throwaway one; apiforge under ``--etcd-prefix /<name>``, kube under
``--etcd-prefix /kube-registry``), both over TLS with the same kind of PKI (oracle/pki.py makes kube's as
apiforge makes its own), both authenticate the bench user by a bearer token from a static token file and
authorize it by RBAC (a ClusterRoleBinding to ``cluster-admin``; the user is not in ``system:masters``), and
both keep API Priority and Fairness as they default it. kube serves the CronTab as the
CustomResourceDefinition that ``apiforge export crds`` writes for it (its storage version only, so that no
conversion webhook is named). The loads and the interleaved rounds are bench/compare.py's, with 1,000
watchers for the fan-out; the table gives each side's median rate, p99 latency and server CPU per request,
and the ratios: ``rate x`` and ``per core x`` (requests per CPU-second of the server process; etcd's CPU is
shared and counted for neither) above 1 favour apiforge, ``p99 x`` below 1 does.

The kube-apiserver binary is the oracle's (``make oracle`` builds it once). The exit status is 0 whatever the
figures.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.checkout import Checkout, work_tree
from bench.common import ChildServer, free_port, median
from bench.compare import (
    GROUP,
    TOKEN_LINE,
    Bench,
    Samples,
    Served,
    _contexts,
    _etcd,
    measure,
    served_tls,
)
from generator.export_crd import crd_manifest
from generator.export_webhook import WebhookService
from generator.load import load_checked
from oracle.binaries import KUBE_VERSION, binary
from oracle.cluster import apiserver_args
from oracle.pki import make_pki

LOADS = ("get", "list100", "list1000", "create", "update", "watch")
WATCHERS = 1000
KUBE = f"kube-apiserver {KUBE_VERSION}"
KUBE_READY_SECONDS = 180.0
"""kube-apiserver's post-start hooks (RBAC bootstrap, priority levels) take 20-90 s on a loaded 2-core box."""
KUBE_PREFIX = "/kube-registry"


def crontab_crd(repo: Path) -> dict[str, object]:
    """The CronTab's CustomResourceDefinition as ``apiforge export crds`` writes it, with its storage version
    only (the loads use no other, and kube then names no conversion webhook)."""
    definition = next(
        d for d in load_checked(repo / "definitions") if d.group == "stable.example.com"
    )
    crd = crd_manifest(definition, WebhookService())
    spec = crd["spec"]
    spec["versions"] = [v for v in spec["versions"] if v["storage"]]
    spec["conversion"] = {"strategy": "None"}
    return crd


def start_kube(work: Path, etcd_url: str, crd: dict[str, object]) -> Served:
    """kube-apiserver on ``etcd_url`` under its own prefix, the bench user bound, the CronTab established."""
    directory = work / "kube"
    pki = make_pki(directory)
    with pki.token_file.open("a") as tokens:
        tokens.write(TOKEN_LINE)
    port = free_port()
    argv = [*apiserver_args(pki, directory, port, etcd_url), f"--etcd-prefix={KUBE_PREFIX}"]
    server = ChildServer(
        "kube-apiserver", argv, port, work / "kube-apiserver.log", binary("kube-apiserver"), work
    )
    server.start(probe=False, timeout=KUBE_READY_SECONDS)
    kubeconfig = directory / "admin.kubeconfig"
    pki.write_kubeconfig(kubeconfig, f"https://127.0.0.1:{port}")
    served = served_tls(KUBE, server, kubeconfig, KUBE_READY_SECONDS)
    _establish(port, kubeconfig, crd)
    return served


def _establish(port: int, kubeconfig: Path, crd: dict[str, object]) -> None:
    _, admin = _contexts(kubeconfig)
    path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    with httpx.Client(base_url=f"https://127.0.0.1:{port}", verify=admin, timeout=30) as client:
        client.post(path, json=crd).raise_for_status()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            # served once discovery lists it: a namespaced list of the kind answers 200
            if client.get(f"{GROUP}/default/crontabs").status_code == 200:
                return
            time.sleep(0.2)
    raise RuntimeError("kube-apiserver did not serve the CronTab CRD within 60 s")


@dataclass(frozen=True)
class Line:
    load: str
    ours: tuple[float, float, float]  # rate, µs CPU per request, p99 ms
    theirs: tuple[float, float, float]

    def cells(self) -> list[str]:
        (rate, cpu, p99), (kube_rate, kube_cpu, kube_p99) = self.ours, self.theirs
        return [
            self.load,
            f"{rate:,.0f}",
            f"{kube_rate:,.0f}",
            _ratio(rate, kube_rate),
            f"{cpu:,.0f}",
            f"{kube_cpu:,.0f}",
            _ratio(kube_cpu, cpu),
            f"{p99:,.1f}",
            f"{kube_p99:,.1f}",
            _ratio(p99, kube_p99),
        ]


def _ratio(top: float, bottom: float) -> str:
    return f"{top / bottom:.2f}" if bottom else "-"


HEADER = [
    "load (etcd, TLS, token, RBAC)",
    "apiforge/s",
    "kube/s",
    "rate x",
    "apiforge µs",
    "kube µs",
    "per core x",
    "apiforge p99 ms",
    "kube p99 ms",
    "p99 x",
]


def lines(samples: Samples, ours: str, loads: list[str]) -> list[Line]:
    def figures(side: str, load: str) -> tuple[float, float, float]:
        key = (side, "tls", load)
        return (
            median(samples.rates[key]),
            median(samples.cpu[key]),
            median(samples.p99_ms[key]),
        )

    return [Line(load, figures(ours, load), figures(KUBE, load)) for load in loads]


def print_table(table: list[Line], samples: Samples) -> None:
    rows = [HEADER, *(line.cells() for line in table)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    for row in rows:
        print(
            "  "
            + "  ".join(
                f"{cell:<{widths[i]}}" if i == 0 else f"{cell:>{widths[i]}}"
                for i, cell in enumerate(row)
            ),
            flush=True,
        )
    for (side, _mode, load), failure in samples.failures.items():
        print(f"  {side} {load}: failures, first: {failure[:200]!r}")


def run(loads: list[str], rounds: int, seconds: float, watchers: int) -> list[Line]:
    ours = work_tree()
    print(
        f"apiforge ({ours.label}) against {KUBE} on one etcd, TLS, bearer token, RBAC; {rounds} rounds"
        f" of {seconds:g} s per phase after a warm-up round; watch: {watchers} watchers"
        " (rates are deliveries/s, µs per delivery, p99 from the write's send)",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="bench-kube-") as tmp, _etcd(Path(tmp), True) as url:
        work = Path(tmp)
        bench = Bench(work, [ours], "etcd", url)
        try:
            bench.start(["tls"])
            kube = Checkout(KUBE, work, binary("kube-apiserver"))
            bench.served[kube.label, "tls"] = start_kube(work, url, crontab_crd(ours.root))
            for served in bench.served.values():
                bench.seed(served, loads)
            samples = measure(bench, loads, rounds, seconds, watchers)
        finally:
            bench.stop()
    table = lines(samples, ours.label, loads)
    print_table(table, samples)
    return table


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench kube", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--loads", default=",".join(LOADS), help="comma-separated loads")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per measured phase")
    parser.add_argument("--watchers", type=int, default=WATCHERS)
    options = parser.parse_args(argv)
    loads = options.loads.split(",")
    unknown = [load for load in loads if load not in LOADS]
    if unknown:
        parser.error(f"unknown loads: {', '.join(unknown)} (choose from {', '.join(LOADS)})")
    run(loads, options.rounds, options.seconds, options.watchers)
    return 0
