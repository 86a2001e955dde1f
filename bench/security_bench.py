"""What authentication and authorization cost, side by side in one run: a GET over TLS authenticated by a client certificate and
authorized by RBAC, against the raw ``{"hello":"world"}`` ASGI app over TLS on the same stack (uvicorn,
httptools, the server's own certificate); the CPU that authentication and authorization add per request, as
a share of that GET's CPU (target: at most 15%); and the same GET with 10,000 RoleBindings of other users
(target: less than 2x).

Four server processes on memory storage, each reached by one kept-alive httpx client (what kubectl and client
libraries do) sending sequential GETs of one ConfigMap; the server's CPU is read from /proc around each
phase (its threads' schedstat, in ns), phases interleaved and rotated over rounds, medians reported:

- ``hello``: bench/hello_app.py's raw app over TLS;
- ``anonymous, AlwaysAllow``: `apiforge serve --authorization-mode=AlwaysAllow`, a client without a
  certificate (the anonymous authenticator, no authorization to speak of): the GET without its security;
- ``x509 + RBAC``: `apiforge serve --authorization-mode=RBAC`, user `jane` with a certificate signed by the
  server's CA, bound to `view` in the namespace (not in system:masters, which RBAC would wave through);
- ``x509 + RBAC, +10,000 bindings``: the same with 10,000 RoleBindings for other users over 50 namespaces,
  written over HTTP by the admin (bench/rbac_bench.py's bindings; it measures the decision in process).

The wire's difference between the two apiforge variants is within this machine's noise (two server
processes, each with its own caches, on shared cores: ±30 µs between runs), so the share is judged on the same
request in process (bench/chain_bench.py's way: the ASGI app called directly, 3,000 GETs a sample): the
chain as `serve` builds it with RBAC and the x509 authenticator, jane's certificate in the connection's TLS
extension, against the chain with AlwaysAllow and anonymous authentication; their difference over the wire
GET's CPU is the share.

Run from the repository root: ``.venv/bin/python -m bench.security_bench`` (or ``python -m bench security``).
"""

from __future__ import annotations

import asyncio
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from apiserver.authentication.x509 import X509Authenticator
from apiserver.server.app import APIServer
from apiserver.server.chain import build_handler_chain
from apiserver.server.options import ChainOptions
from apiserver.server.pki import bootstrap, issue_client, serving_names
from apiserver.storage import MemoryStorage
from bench.chain_bench import KUBECTL_HEADERS, as_served, cpu_per_request, seed
from bench.common import (
    REPO,
    Row,
    free_port,
    median,
    print_rows,
    rotated,
    spread,
    thread_cpu_seconds,
)
from bench.rbac_bench import OTHERS, rbac_server, role_binding
from bench.tls_bench import Served
from generated.server import OPENAPI_DIR, build_apis

ROUNDS = 7
GETS = 3_000
NAMESPACE = "default"
PATH = f"/api/v1/namespaces/{NAMESPACE}/configmaps/probe"
SHARE_TARGET = 0.15
RBAC = "rbac.authorization.k8s.io"


class Hello:
    """bench/hello_app.py over TLS with a server's own certificate and key."""

    def __init__(self, work: Path, pki: Path) -> None:
        self.port = free_port()
        argv = [sys.executable, "-m", "bench.hello_app", "--port", str(self.port)]
        argv += ["--tls-cert-file", str(pki / "apiserver.crt")]
        argv += ["--tls-private-key-file", str(pki / "apiserver.key")]
        self.log = (work / "hello.log").open("wb")
        self.process = subprocess.Popen(argv, cwd=REPO, stdout=self.log, stderr=subprocess.STDOUT)
        self.url = f"https://127.0.0.1:{self.port}"
        self.verify = ssl.create_default_context(cafile=pki / "ca.crt")
        deadline = time.monotonic() + 30
        while not self._answers():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"hello did not start; see {self.log.name}")
            time.sleep(0.05)

    def _answers(self) -> bool:
        try:
            return httpx.get(f"{self.url}/readyz", verify=self.verify).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=15)
        self.log.close()


def as_jane(served: Served) -> ssl.SSLContext:
    """Trusts ``served``'s CA and shows a certificate for jane, freshly signed by it."""
    pki = bootstrap(served.data_dir, None)
    jane = issue_client(pki.ca, "jane")
    pem = served.data_dir / "jane.pem"
    pem.write_bytes(jane.certificate_pem() + jane.key_pem())
    context = ssl.create_default_context(cafile=pki.ca_file)
    context.load_cert_chain(pem)
    return context


def prepare(served: Served, crowd: int) -> None:
    """The ConfigMap, jane's RoleBinding to `view`, and ``crowd`` RoleBindings of other users."""
    with served.client() as admin:
        admin.post(
            f"/api/v1/namespaces/{NAMESPACE}/configmaps",
            json={"metadata": {"name": "probe"}, "data": {"k": "v"}},
        ).raise_for_status()
        jane = role_binding("jane", NAMESPACE, "jane")
        jane["roleRef"]["name"] = "view"
        bindings = f"/apis/{RBAC}/v1/namespaces/{{}}/rolebindings"
        admin.post(bindings.format(NAMESPACE), json=jane).raise_for_status()
        if crowd:
            for n in range(50):
                admin.post("/api/v1/namespaces", json={"metadata": {"name": f"team-{n}"}})
        for n in range(crowd):
            namespace = NAMESPACE if n % 50 == 0 else f"team-{n % 50}"
            body = role_binding(f"user-{n}", namespace, f"user-{n}")
            admin.post(bindings.format(namespace), json=body).raise_for_status()


def cpu_per_get(pid: int, client: httpx.Client, path: str) -> float:
    """µs of the server's CPU per GET of ``path``, all on ``client``'s kept-alive connection."""
    client.get(path).raise_for_status()
    before = thread_cpu_seconds(pid)
    for _ in range(GETS):
        client.get(path).raise_for_status()
    return (thread_cpu_seconds(pid) - before) / GETS * 1e6


def until_allowed(client: httpx.Client) -> None:
    """RBAC follows its bindings by watch: wait for jane's."""
    deadline = time.monotonic() + 60
    while client.get(PATH).status_code != 200:
        if time.monotonic() > deadline:
            raise RuntimeError("RBAC never allowed jane's GET")
        time.sleep(0.05)


async def in_process(rounds: int) -> dict[str, list[float]]:
    """CPU µs per GET of the chain with and without authentication and authorization, in process."""
    plain = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR)
    await plain.start()
    await seed(plain)
    secured = await rbac_server(0)  # jane may edit in "default"
    try:
        with tempfile.TemporaryDirectory() as work:
            pki = bootstrap(Path(work), serving_names("127.0.0.1"))
        jane = issue_client(pki.ca, "jane").certificate_pem().decode()
        tls = {"tls": {"client_cert_chain": [jane]}}
        x509 = X509Authenticator([pki.ca.certificate])
        bare = build_handler_chain(plain, ChainOptions())
        checked = build_handler_chain(secured, ChainOptions(authorization_mode="RBAC"), [x509])
        variants = {
            "chain, anonymous, AlwaysAllow": lambda: cpu_per_request(bare, KUBECTL_HEADERS),
            "chain, x509 + RBAC": lambda: cpu_per_request(checked, KUBECTL_HEADERS, tls),
        }
        samples: dict[str, list[float]] = {name: [] for name in variants}
        for variant in variants.values():  # warm-up
            await variant()
        for round_number in range(rounds):
            for name in rotated(list(variants), round_number):
                samples[name].append(await variants[name]())
    finally:
        await asyncio.gather(plain.stop(), secured.stop())
    return samples


def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="security-bench-") as directory:
        work = Path(directory)
        always = Served(work, "always", True, "--authorization-mode=AlwaysAllow")
        rbac = Served(work, "rbac", True, "--authorization-mode=RBAC")
        crowded = Served(work, "crowded", True, "--authorization-mode=RBAC")
        hello = Hello(work, rbac.data_dir / "pki")
        clients: list[httpx.Client] = []
        try:
            built = time.perf_counter()
            for served, crowd in ((always, 0), (rbac, 0), (crowded, OTHERS)):
                prepare(served, crowd)
            print(f"   ({OTHERS:,} RoleBindings written in {time.perf_counter() - built:.0f}s)")
            anonymous = ssl.create_default_context(cafile=always.data_dir / "pki" / "ca.crt")
            phases: dict[str, tuple[int, httpx.Client, str]] = {}
            for name, pid, url, verify, path in (
                ("hello", hello.process.pid, hello.url, hello.verify, "/hello"),
                ("anonymous, AlwaysAllow", always.process.pid, always.url, anonymous, PATH),
                ("x509 + RBAC", rbac.process.pid, rbac.url, as_jane(rbac), PATH),
                (
                    f"x509 + RBAC, +{OTHERS:,} bindings",
                    crowded.process.pid,
                    crowded.url,
                    as_jane(crowded),
                    PATH,
                ),
            ):
                client = httpx.Client(base_url=url, verify=verify)
                clients.append(client)
                phases[name] = (pid, client, path)
            for _, client, _ in list(phases.values())[2:]:
                until_allowed(client)

            def measure(phase: str) -> float:
                return cpu_per_get(*phases[phase])

            samples: dict[str, list[float]] = {phase: [] for phase in phases}
            for phase in phases:  # warm-up
                measure(phase)
            for round_number in range(ROUNDS):
                for phase in rotated(list(phases), round_number):
                    samples[phase].append(measure(phase))
        finally:
            for client in clients:
                client.close()
            hello.stop()
            for served in (always, rbac, crowded):
                served.stop()
    return report(samples, as_served(in_process(ROUNDS)))


def report(wire: dict[str, list[float]], chain: dict[str, list[float]]) -> list[Row]:
    names = list(wire)
    hello, bare, secured, crowded = (median(wire[name]) for name in names)
    rows = [Row("security", f"{name}: server CPU µs per GET", spread(wire[name])) for name in names]
    rows += [
        Row("security", f"{name}: CPU µs per GET", spread(v, ",.1f")) for name, v in chain.items()
    ]
    added = median(chain["chain, x509 + RBAC"]) - median(chain["chain, anonymous, AlwaysAllow"])
    share = added / secured
    rows += [
        Row("security", "x509 + RBAC GET / hello, over TLS", f"{secured / hello:.1f}x"),
        Row("security", "x509 + RBAC - anonymous AlwaysAllow, wire", f"{secured - bare:,.0f} µs"),
        Row("security", "authentication + authorization add, in process", f"{added:,.1f} µs"),
        Row(
            "security",
            "their share of the x509 + RBAC GET's CPU",
            f"{share:.0%}",
            f"<= {SHARE_TARGET:.0%}",
            share <= SHARE_TARGET,
        ),
        Row(
            "security",
            f"GET with {OTHERS:,} other RoleBindings",
            f"{crowded / secured:.2f}x",
            "< 2x",
            crowded / secured < 2,
        ),
    ]
    print_rows(rows)
    return rows


if __name__ == "__main__":
    run()
