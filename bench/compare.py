"""``python -m bench compare [REF]``: this work tree's server against REF's (default ``main``), end to end.

Both servers run as users run them, from their own checkouts and virtualenvs (bench/checkout.py), on the
same storage, in the same run, beside the raw hello-JSON app (bench/hello_app.py: uvicorn with nothing
on top, the ceiling of any GET, answering a JSON object of the GET's size). Every load goes over real
sockets from the uvloop load generator:

- ``plain``: plain HTTP, no authentication (``--insecure-serving``; a REF from before TLS serves plain HTTP
  by default);
- ``tls``: TLS, a bearer token from ``--token-auth-file`` and RBAC (the user is bound to ``cluster-admin``
  and is not in ``system:masters``, so every request is authorized by the RBAC rules); skipped for a REF
  that cannot serve it.

Loads: GET of one ~1.6 KiB CronTab (the same request again and again, which a connection may answer from
its kept answer); GETMANY, GETs of 100 such CronTabs in turn (every one the whole way); LIST of 100 and of 1,000; CREATE; UPDATE (PUT of ConfigMaps);
PATCH (merge patch of a CronTab's labels); WATCH fan-out (watchers on one collection, one paced writer).
Rounds are interleaved with a rotated order, so load on the machine falls on both sides alike; a row gives
the median rate of each side, their ratio, and each side's server CPU per request (the figure noise
disturbs least). Storages: memory, sqlite and etcd (a throwaway etcd, one key prefix per server).

The exit status is 0 whatever the figures: they are to be read, side by side, not gated on.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import math
import ssl
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import yaml

from bench.checkout import Checkout, checkout, work_tree
from bench.common import ChildServer, Row, free_port, median, rotated
from bench.loadgen import Load, RequestFactory, drive, get_request, percentile, post_request
from bench.server_bench import crontab
from bench.storage_bench import raw_sqlite_rate
from bench.watch_fanout import fan_out

LOADS = ("get", "getmany", "list100", "list1000", "create", "update", "patch", "watch")
MODES = ("plain", "tls")
STORAGES = ("memory", "sqlite", "etcd")
CONNECTIONS = {
    "get": 32,
    "getmany": 32,
    "list100": 8,
    "list1000": 4,
    "create": 16,
    "update": 16,
    "patch": 16,
}
GET_SPREAD = 100
"""Objects that GETMANY reads in turn: a connection never asks for the same one twice in a row, so no
answer is replayed (apiserver/endpoints/replay.py) and every GET goes the whole way."""
SPREAD = 64
"""Objects that UPDATE and PATCH spread over, so that concurrent writes seldom meet on one object."""
WATCHERS, WATCH_WRITES, WATCH_RATE = 200, 40, 80.0
RAW = "raw SQLite commits"
"""The floor of CREATE on SQLite: one compare-and-insert per WAL+FULL commit (bench/storage_bench.py), in
the same run, with a value of the stored CronTab's size."""

GROUP = "/apis/stable.example.com/v1/namespaces"
TOKEN = "bench-token-0123456789abcdef"
BENCH_USER = "bench-user"
TOKEN_LINE = f'{TOKEN},{BENCH_USER},bench-uid,"bench"\n'
"""The bench user's line of a static token file (kube's format: token,user,uid,"groups")."""


def namespace(load: str) -> str:
    return f"bench-{load}"


@dataclass
class Served:
    """A running server of one side in one mode, and how to reach it."""

    side: str
    mode: str
    server: ChildServer
    tls: ssl.SSLContext | None = None
    headers: str = ""
    runs: int = field(default=0)

    def drive(self, factory: RequestFactory, **options: object) -> Load:
        return drive(
            self.server.port,
            factory,
            tls=self.tls,
            server_pid=self.server.pid,
            **options,  # type: ignore[arg-type]
        )


def _serve_flags(side: Checkout) -> str:
    return subprocess.run(
        [str(side.python), "-m", "apiforge", "serve", "--help"],
        cwd=side.root,
        capture_output=True,
        text=True,
        check=False,
    ).stdout


def _mode_flags(help_text: str, mode: str, token_file: Path) -> list[str] | None:
    """The flags that make a side serve ``mode``; None when it cannot."""
    if mode == "plain":
        return ["--insecure-serving"] if "--insecure-serving" in help_text else []
    if "--token-auth-file" not in help_text:
        return None
    return ["--token-auth-file", str(token_file)]


def _contexts(kubeconfig: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(the bench user's context: the CA only; the admin's: the CA and the admin client certificate)."""
    config = yaml.safe_load(kubeconfig.read_text())
    cluster = config["clusters"][0]["cluster"]
    user = config["users"][0]["user"]
    ca = base64.b64decode(cluster["certificate-authority-data"]).decode()
    plain = ssl.create_default_context(cadata=ca)
    admin = ssl.create_default_context(cadata=ca)
    pem = kubeconfig.with_name("admin-client.pem")
    pem.write_bytes(
        base64.b64decode(user["client-certificate-data"])
        + base64.b64decode(user["client-key-data"])
    )
    pem.chmod(0o600)
    admin.load_cert_chain(pem)
    return plain, admin


def _connection(port: int, context: ssl.SSLContext | None) -> http.client.HTTPConnection:
    if context:
        return http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)
    return http.client.HTTPConnection("127.0.0.1", port, timeout=30)


def _request(
    port: int, method: str, path: str, body: object, context: ssl.SSLContext | None
) -> int:
    connection = _connection(port, context)
    try:
        connection.request(method, path, json.dumps(body), {"content-type": "application/json"})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def _get(served: Served, path: str) -> bytes:
    """The body of a GET of ``path`` as the bench user; an error unless 200."""
    connection = _connection(served.server.port, served.tls)
    headers = dict(
        line.split(": ", 1) for line in served.headers.split("\r\n") if line
    )  # the bench user's authorization, if any
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"GET {path} answered {response.status}: {body[:300]!r}")
        return body
    finally:
        connection.close()


def _list_revision(served: Served, path: str) -> str:
    """The resourceVersion of a list of ``path`` (one item), as the bench user."""
    return str(json.loads(_get(served, f"{path}?limit=1"))["metadata"]["resourceVersion"])


def _tls_ready(port: int, context: ssl.SSLContext, deadline: float) -> None:
    while time.perf_counter() < deadline:
        try:
            connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=2)
            connection.request("GET", "/readyz")
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"the TLS server on {port} was not ready in time")


def served_tls(label: str, server: ChildServer, kubeconfig: Path, timeout: float) -> Served:
    """A started TLS server as the bench user (bound to ``cluster-admin`` by the kubeconfig's admin, once
    /readyz answers the admin within ``timeout`` seconds), reached with the user's bearer token."""
    user_context, admin_context = _contexts(kubeconfig)
    _tls_ready(server.port, admin_context, time.perf_counter() + timeout)
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "bench-user"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "cluster-admin",
        },
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": BENCH_USER}],
    }
    path = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
    status = _request(server.port, "POST", path, binding, admin_context)
    if status != 201:
        raise RuntimeError(f"{server.name}: binding the bench user answered {status}")
    return Served(label, "tls", server, user_context, f"authorization: Bearer {TOKEN}\r\n")


class Bench:
    """The servers of one storage: each side in each mode it serves, and the hello apps."""

    def __init__(self, work: Path, sides: list[Checkout], storage: str, etcd_url: str) -> None:
        self.work = work
        self.sides = sides
        self.storage = storage
        self.etcd_url = etcd_url
        self.served: dict[tuple[str, str], Served] = {}
        self.hello: dict[str, Served] = {}
        self.token_file = work / "tokens.csv"
        self.token_file.write_text(TOKEN_LINE)
        self.token_file.chmod(0o600)

    def start(self, modes: list[str]) -> None:
        for side in self.sides:
            help_text = _serve_flags(side)
            for mode in modes:
                flags = _mode_flags(help_text, mode, self.token_file)
                if flags is None:
                    print(f"  {side.label} cannot serve {mode}: skipped", flush=True)
                    continue
                self.served[side.label, mode] = self._start_server(side, mode, flags)

    def _start_server(self, side: Checkout, mode: str, flags: list[str]) -> Served:
        name = f"{side.root.name}-{mode}-{self.storage}"
        data_dir = self.work / name
        port = free_port()
        storage = ["--storage", self.storage]
        if self.storage == "etcd":
            storage += ["--etcd-servers", self.etcd_url, "--etcd-prefix", f"/{name}"]
        argv = [
            *("-m", "apiforge", "serve", "--data-dir", str(data_dir)),
            *("--bind-address", "127.0.0.1", "--port", str(port)),
            *storage,
            *flags,
        ]
        server = ChildServer(
            name, argv, port, self.work / f"{name}.log", python=side.python, cwd=side.root
        )
        if mode == "plain":
            server.start()
            return Served(side.label, mode, server)
        kubeconfig = data_dir / "admin.kubeconfig"
        server.start(ready_file=kubeconfig, probe=False)
        return served_tls(side.label, server, kubeconfig, 30)

    def start_hello(self, modes: list[str], body_bytes: int) -> None:
        """The hello apps, answering a JSON object of ``body_bytes`` (the GET's object, once seeded)."""
        for mode in modes:
            port = free_port()
            argv = ["-m", "bench.hello_app", "--port", str(port), "--body-bytes", str(body_bytes)]
            tls = None
            if mode == "tls":
                donor = next((s for s in self.served.values() if s.mode == "tls"), None)
                if donor is None:
                    continue
                pki = self.work / donor.server.name / "pki"
                argv += ["--tls-cert-file", str(pki / "apiserver.crt")]
                argv += ["--tls-private-key-file", str(pki / "apiserver.key")]
                tls = donor.tls
            server = ChildServer(f"hello-{mode}", argv, port, self.work / f"hello-{mode}.log")
            server.start(probe=mode == "plain")
            self.hello[mode] = Served("hello", mode, server, tls)

    def stop(self) -> None:
        for served in [*self.served.values(), *self.hello.values()]:
            served.server.stop()

    def object_size(self, loads: list[str]) -> int:
        """The bytes of the GET's answer (a CronTab as stored), what the hello answers with too, so that
        `of floor` compares the same response; the bare hello when no GET is measured."""
        if "get" not in loads:
            return 0
        first = next(iter(self.served.values()))
        return len(_get(first, f"{GROUP}/{namespace('get')}/crontabs/get-1"))

    # -- data --------------------------------------------------------------------------------------

    def seed(self, served: Served, loads: list[str]) -> None:
        """The namespaces and objects every load reads or writes."""
        for load in loads:
            body = orjson.dumps(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace(load)}}
            )
            _expect(
                served.drive(
                    post_request("/api/v1/namespaces", lambda _i, b=body: b, served.headers),
                    expect=201,
                    connections=1,
                    limit=1,
                    warmup=0,
                )
            )
        counts = {
            "get": 1,
            "create": 1,  # the raw commits' floor writes rows of its size
            "getmany": GET_SPREAD,
            "list100": 100,
            "list1000": 1000,
            "patch": SPREAD,
        }
        for load, count in counts.items():
            if load in loads:
                path = f"{GROUP}/{namespace(load)}/crontabs"
                factory = post_request(path, _crontab_body(load), served.headers)
                _expect(
                    served.drive(
                        factory, expect=201, connections=8, limit=count, seconds=60, warmup=0
                    )
                )
        if "update" in loads:
            path = f"/api/v1/namespaces/{namespace('update')}/configmaps"
            factory = post_request(path, _configmap_body(), served.headers)
            _expect(
                served.drive(factory, expect=201, connections=8, limit=SPREAD, seconds=60, warmup=0)
            )


def _expect(load: Load) -> None:
    if load.failures:
        raise RuntimeError(f"seeding failed: {load.first_failure}")


def _crontab_body(tag: str) -> Callable[[int], bytes]:
    """CronTabs named ``<tag>-<i>`` (sequence numbers start at 1, so the GET's object is ``get-1``)."""
    template = orjson.dumps(crontab("NAME-PLACEHOLDER"))
    return lambda i: template.replace(b"NAME-PLACEHOLDER", f"{tag}-{i}".encode())


def _configmap_body() -> Callable[[int], bytes]:
    def body(i: int) -> bytes:
        name = f"update-{(i - 1) % SPREAD + 1}"
        return orjson.dumps(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "labels": {"app": "bench"}},
                "data": {"round": str(i), "settings": "x" * 1024},
            }
        )

    return body


def _phase(served: Served, load: str, tag: str, seconds: float) -> Load:
    """One measured run of ``load`` against ``served``."""
    headers = served.headers
    if load == "get":
        factory = get_request(f"{GROUP}/{namespace('get')}/crontabs/get-1", headers)
    elif load == "getmany":
        base = f"{GROUP}/{namespace('getmany')}/crontabs/getmany-"
        requests = [get_request(f"{base}{n}", headers)(0) for n in range(1, GET_SPREAD + 1)]
        factory = lambda i: requests[(i - 1) % GET_SPREAD]  # noqa: E731
    elif load in ("list100", "list1000"):
        factory = get_request(f"{GROUP}/{namespace(load)}/crontabs", headers)
    elif load == "create":
        factory = post_request(
            f"{GROUP}/{namespace('create')}/crontabs", _crontab_body(tag), headers
        )
        return served.drive(factory, expect=201, connections=CONNECTIONS[load], seconds=seconds)
    elif load == "update":
        body = _configmap_body()
        base = f"/api/v1/namespaces/{namespace('update')}/configmaps/update-"

        def update(i: int) -> bytes:
            return post_request(f"{base}{(i - 1) % SPREAD + 1}", body, headers, method="PUT")(i)

        factory = update
    else:  # patch
        base = f"{GROUP}/{namespace('patch')}/crontabs/patch-"

        def patch(i: int) -> bytes:
            payload = orjson.dumps({"metadata": {"labels": {"round": f"{tag}-{i}"}}})
            return post_request(
                f"{base}{(i - 1) % SPREAD + 1}",
                lambda _i: payload,
                headers,
                method="PATCH",
                content_type="application/merge-patch+json",
            )(i)

        factory = patch
    return served.drive(factory, connections=CONNECTIONS[load], seconds=seconds)


@dataclass
class Samples:
    """Per (side, mode, load): requests/s and server CPU µs per request, one sample a round."""

    rates: dict[tuple[str, str, str], list[float]] = field(default_factory=dict)
    cpu: dict[tuple[str, str, str], list[float]] = field(default_factory=dict)
    failures: dict[tuple[str, str, str], str] = field(default_factory=dict)
    p99_ms: dict[tuple[str, str, str], list[float]] = field(default_factory=dict)
    """Per round: the 99th percentile of request latency (watch: of delivery after the write was sent)."""

    def add(
        self, key: tuple[str, str, str], rate: float, cpu_us: float, failure: str, p99_ms: float
    ) -> None:
        self.rates.setdefault(key, []).append(rate)
        self.cpu.setdefault(key, []).append(cpu_us)
        self.p99_ms.setdefault(key, []).append(p99_ms)
        if failure and key not in self.failures:
            self.failures[key] = failure


def measure(
    bench: Bench, loads: list[str], rounds: int, seconds: float, watchers: int = WATCHERS
) -> Samples:
    """Every load on every served side (and GET on the hello apps), rounds interleaved in rotated order."""
    samples = Samples()
    phases: list[tuple[Served | None, str]] = [
        (served, load) for served in bench.served.values() for load in loads
    ]
    if "get" in loads or "getmany" in loads:
        phases += [(hello, "get") for hello in bench.hello.values()]
    stored_size = 0
    if bench.storage == "sqlite" and "create" in loads:
        phases.append(
            (None, "create")
        )  # the floor: raw single-row commits of a stored object's size
        first = next(iter(bench.served.values()))
        stored_size = len(_get(first, f"{GROUP}/{namespace('create')}/crontabs/create-1"))
    for round_number in range(rounds + 1):  # round 0 warms every phase up and is not counted
        for served, load in rotated(phases, round_number):
            if served is None:
                raw = bench.work / f"raw-{round_number}"
                raw.mkdir()
                rate = raw_sqlite_rate(raw, seconds=seconds, value=b"v" * stored_size)
                if round_number:
                    samples.add((RAW, "-", load), rate, math.nan, "", math.nan)
                continue
            served.runs += 1
            tag = f"{served.server.name}-{served.runs}"
            key = (served.side, served.mode, load)
            if load == "watch":
                collection = f"{GROUP}/{namespace('watch')}/crontabs"
                # from the list's resourceVersion, as a reflector watches (kube-apiserver refuses a watch
                # from "now" when its etcd cannot request watch progress, as etcd before 3.4.31 cannot)
                revision = _list_revision(served, collection)
                result = fan_out(
                    served.server.port,
                    f"{collection}?watch=1&allowWatchBookmarks=true&resourceVersion={revision}",
                    collection,
                    tag,
                    _crontab_body(tag),
                    watchers=watchers,
                    writes=WATCH_WRITES,
                    rate=WATCH_RATE,
                    stalled=False,
                    server_pid=served.server.pid,
                    tls=served.tls,
                    headers=served.headers,
                )
                rate = result.delivered / result.seconds if result.seconds else 0.0
                failure = f"{result.missing} deliveries missing" if result.missing else ""
                if round_number:
                    p99 = percentile(result.from_send, 0.99) * 1e3
                    samples.add(key, rate, result.server_us_per_delivery, failure, p99)
                continue
            try:
                measured = _phase(served, load, tag, seconds)
            except TimeoutError:  # a server that answers nothing for STALL_SECONDS fails the phase
                measured = Load(0, 1, seconds, 0.0, 0.0, first_failure=f"{load} stalled")
            if round_number:
                samples.add(
                    key, measured.rate, measured.server_us, measured.first_failure, measured.p99_ms
                )
    return samples


def _table(storage: str, samples: Samples, sides: list[Checkout]) -> list[list[str]]:
    """One line per mode and load: each side's median rate and CPU per request, and their ratios (the
    work tree over REF: above 1 is faster, below 1 is cheaper in CPU); GET also as a share of hello, and
    CREATE on SQLite as a share of raw single-row commits."""
    new, old = sides[0].label, sides[1].label
    lines: list[list[str]] = []
    raw = samples.rates.get((RAW, "-", "create"))
    if raw:
        lines.append([f"{storage} {RAW}", f"{median(raw):,.0f}", *["-"] * 5, "1.00", ""])
    for mode in MODES:
        hello = samples.rates.get(("hello", mode, "get"))
        floors = {"get": hello, "getmany": hello, "create": raw}
        for load in LOADS:
            ours, theirs = (
                samples.rates.get((new, mode, load)),
                samples.rates.get((old, mode, load)),
            )
            if ours is None:
                continue
            our_cpu = median(samples.cpu[new, mode, load])
            line = [f"{storage} {mode} {load}", f"{median(ours):,.0f}", f"{our_cpu:,.0f}"]
            if theirs:
                their_cpu = median(samples.cpu[old, mode, load])
                line += [f"{median(theirs):,.0f}", f"{their_cpu:,.0f}"]
                line += [f"{median(ours) / median(theirs):.2f}", f"{our_cpu / their_cpu:.2f}"]
            else:
                line += ["-", "-", "-", "-"]
            floor = floors.get(load)
            line.append(f"{median(ours) / median(floor):.2f}" if floor else "")
            failed = [side for side in (new, old) if (side, mode, load) in samples.failures]
            line.append(
                ", ".join(f"{side}: {samples.failures[side, mode, load][:80]!r}" for side in failed)
            )
            lines.append(line)
    return lines


HEADER = [
    "storage mode load",
    "rate",
    "µs CPU",
    "REF rate",
    "REF µs",
    "rate x",
    "CPU x",
    "of floor",
    "failures",
]


def _print_table(lines: list[list[str]]) -> None:
    widths = [max(len(line[i]) for line in [HEADER, *lines]) for i in range(len(HEADER) - 1)]
    for line in [HEADER, *lines]:
        cells = [
            f"{cell:<{widths[0]}}" if i == 0 else f"{cell:>{widths[i]}}"
            for i, cell in enumerate(line[:-1])
        ]
        print("  " + "  ".join(cells) + (f"  {line[-1]}" if line[-1] else ""), flush=True)


@contextmanager
def _etcd(work: Path, needed: bool) -> Iterator[str]:
    if not needed:
        yield ""
        return
    from tests.etcdproc import EtcdProcess

    etcd = EtcdProcess(work / "etcd-data")
    etcd.start()
    try:
        yield etcd.url
    finally:
        etcd.stop()


def run(
    ref: str, storages: list[str], modes: list[str], loads: list[str], rounds: int, seconds: float
) -> list[Row]:
    sides = [work_tree(), checkout(ref)]
    print(
        f"comparing the {sides[0].label} with {sides[1].label} (REF); rates are requests/s (watch: deliveries/s),"
        " µs CPU is the server's per request (per delivery)",
        flush=True,
    )
    rows: list[Row] = []
    with (
        tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp,
        _etcd(Path(tmp), "etcd" in storages) as etcd_url,
    ):
        for storage in storages:
            work = Path(tmp) / storage
            work.mkdir()
            bench = Bench(work, sides, storage, etcd_url)
            try:
                bench.start(modes)
                for served in bench.served.values():
                    bench.seed(served, loads)
                bench.start_hello(modes, bench.object_size(loads))
                samples = measure(bench, loads, rounds, seconds)
            finally:
                bench.stop()
            lines = _table(storage, samples, sides)
            _print_table(lines)
            rows += [Row("compare", line[0], f"x{line[5]} rate, x{line[6]} CPU") for line in lines]
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench compare", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "ref", nargs="?", default="main", help="the git ref to compare with (default main)"
    )
    parser.add_argument("--storage", default=",".join(STORAGES), help="comma-separated storages")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: plain, tls")
    parser.add_argument("--loads", default=",".join(LOADS), help="comma-separated loads")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--seconds", type=float, default=1.0, help="seconds each measured phase runs"
    )
    options = parser.parse_args(argv)
    chosen = {
        "storage": options.storage.split(","),
        "modes": options.modes.split(","),
        "loads": options.loads.split(","),
    }
    allowed = {"storage": STORAGES, "modes": MODES, "loads": LOADS}
    for name, values in chosen.items():
        unknown = [v for v in values if v not in allowed[name]]
        if unknown:
            parser.error(
                f"unknown {name}: {', '.join(unknown)} (choose from {', '.join(allowed[name])})"
            )
    run(
        options.ref,
        chosen["storage"],
        chosen["modes"],
        chosen["loads"],
        options.rounds,
        options.seconds,
    )
    return 0
