"""Fault drills on a real 3-member etcd cluster under write load, shared by the tests and
``bench/etcd_faults_bench.py``: an apiforge server on the cluster, writers creating ConfigMaps, a
reflector-style watcher, a ``/readyz`` poll, and the figures of one fault (throughput before and during,
the worst gap between watch events and between acknowledged writes, readiness, status codes, and
whether every acknowledged write is stored and was delivered by the watch)."""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.etcdproc import EtcdCluster
from tests.serverproc import ServerProcess, free_port

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
WRITERS = 8


@dataclass
class Record:
    """What the load saw: (monotonic time, status) per write and readiness poll, watch arrival times."""

    writes: list[tuple[float, int]] = field(default_factory=list)
    acknowledged: list[str] = field(default_factory=list)
    watched: list[tuple[float, str]] = field(default_factory=list)
    ready: list[tuple[float, int]] = field(default_factory=list)
    bodies: list[str] = field(default_factory=list)
    """Bodies of the 5xx answers (their messages are checked for leaks)."""


@dataclass
class Figures:
    """One fault's figures, over a window before it and the window of the fault itself."""

    rate_before: float
    rate_during: float
    write_gap: float
    """Longest time without an acknowledged write in the fault window (how soon writes resume)."""
    watch_gap: float
    """Longest time without a watch event in the fault window (writes never stop for that long)."""
    statuses: Counter[int]
    ready: Counter[int]
    ready_after: Counter[int]
    """/readyz in the last two seconds of the run, after the repair."""
    lost: list[str]
    unseen: list[str]
    bodies: list[str]

    @property
    def ratio(self) -> float:
        return self.rate_during / self.rate_before if self.rate_before else 0.0

    def summary(self) -> str:
        return (
            f"writes/s {self.rate_before:.0f} before, {self.rate_during:.0f} during"
            f" ({self.ratio:.2f}x); longest write gap {self.write_gap:.2f}s; watch gap"
            f" {self.watch_gap:.2f}s; statuses {dict(self.statuses)}; readyz {dict(self.ready)},"
            f" after {dict(self.ready_after)};"
            f" lost {len(self.lost)}; unseen by the watch {len(self.unseen)}"
        )


def _longest_gap(times: list[float], start: float, end: float) -> float:
    """The longest interval between consecutive ``times`` (and the window's ends) over [start, end]."""
    inside = sorted(moment for moment in times if start <= moment <= end)
    before = [moment for moment in times if moment < start]
    marks = [max(before) if before else start, *inside, end]
    return max(later - earlier for earlier, later in itertools.pairwise(marks))


class Drill:
    """A server on ``cluster`` and the load on it, from ``start`` to ``stop``."""

    def __init__(self, cluster: EtcdCluster, work: Path) -> None:
        servers = ",".join(cluster.endpoints)
        self.server = ServerProcess(
            work / "server", free_port(), storage="etcd", extra_args=("--etcd-servers", servers)
        )
        self.server.data_dir.mkdir(parents=True, exist_ok=True)
        self.record = Record()
        self.log: list[str] = []
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._writers: list[threading.Thread] = []
        self._writing = threading.Event()
        """Set when the writers are to stop."""
        self.stored: set[str] = set()
        self.ended = 0.0
        self._watch_client: httpx.Client | None = None
        self._serial = 0
        self._run = uuid.uuid4().hex[:8]
        self._lock = threading.Lock()

    @contextmanager
    def running(self) -> Iterator[Drill]:
        self.server.start()
        self._spawn(self._drain_log)
        try:
            start = self.server.http("GET", CONFIGMAPS).json()["metadata"]["resourceVersion"]
            self._spawn(lambda: self._watch(start))
            self._spawn(self._poll_ready)
            for _ in range(WRITERS):
                self._spawn(self._write, writer=True)
            yield self
            self._settle()
        finally:
            self._stop.set()
            self._end_watch()
            self.server.stop()
            for thread in self._threads:
                thread.join(timeout=30)

    def _settle(self) -> None:
        """Stop the writers, let the watch catch up, and list what is stored."""
        self._writing.set()
        for thread in self._writers:
            thread.join(timeout=60)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            seen = {name for _, name in self.record.watched}
            if all(name in seen for name in self.record.acknowledged):
                break
            time.sleep(0.1)
        with self.server.client(timeout=30) as client:
            items = client.get(CONFIGMAPS).json()["items"]
        self.stored = {item["metadata"]["name"] for item in items}
        self.ended = time.monotonic()

    def _spawn(self, target: Callable[[], None], *, writer: bool = False) -> None:
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        (self._writers if writer else self._threads).append(thread)

    def _drain_log(self) -> None:
        """Read the server's output (an unread pipe would block its logging once full)."""
        process = self.server.process
        if process is None or process.stdout is None:
            return
        for line in process.stdout:
            self.log.append(line.decode(errors="replace"))

    def _name(self) -> str:
        with self._lock:
            self._serial += 1
            return f"load-{self._run}-{self._serial}"  # drills share the cluster: names must not repeat

    def _write(self) -> None:
        with self.server.client(timeout=30) as client:
            while not self._writing.is_set():
                name = self._name()
                body = {"metadata": {"name": name}, "data": {"k": "v"}}
                try:
                    response = client.post(CONFIGMAPS, json=body)
                except httpx.HTTPError:
                    continue
                self.record.writes.append((time.monotonic(), response.status_code))
                if response.status_code == 201:
                    self.record.acknowledged.append(name)
                elif response.status_code >= 500:
                    self.record.bodies.append(response.text)

    def _end_watch(self) -> None:
        """Close the watch's connection: a server waits (up to 5 s) for open watches when it stops."""
        if self._watch_client is not None:
            with suppress(Exception):
                self._watch_client.close()
            # the server notices a closed watch when it next has an event to send it
            with suppress(httpx.HTTPError):
                self.server.http("POST", CONFIGMAPS, json={"metadata": {"name": "wake"}})

    def _watch(self, resource_version: str) -> None:
        """A reflector's watch: resumes from the last resourceVersion whenever the stream ends."""
        try:
            self._watching(resource_version)
        except Exception:
            if not self._stop.is_set():  # closing the connection under it is how it ends
                raise

    def _watching(self, resource_version: str) -> None:
        with self.server.client(timeout=httpx.Timeout(30, read=60)) as client:
            self._watch_client = client
            while not self._stop.is_set():
                url = f"{CONFIGMAPS}?watch=true&resourceVersion={resource_version}"
                try:
                    with client.stream("GET", f"{url}&timeoutSeconds=30") as response:
                        if response.status_code != 200:  # storage down: a reflector backs off
                            time.sleep(0.2)
                            continue
                        for line in response.iter_lines():
                            event = json.loads(line)
                            if event["type"] == "ERROR":  # 410 Expired: relist, as a reflector does
                                resource_version = self._relist(client)
                                break
                            meta = event["object"]["metadata"]
                            resource_version = meta["resourceVersion"]
                            if event["type"] == "ADDED":
                                self.record.watched.append((time.monotonic(), meta["name"]))
                            if self._stop.is_set():
                                return
                except httpx.HTTPError:
                    time.sleep(0.1)

    def _relist(self, client: httpx.Client) -> str:
        listed = client.get(CONFIGMAPS).json()
        now = time.monotonic()
        self.record.watched.extend((now, item["metadata"]["name"]) for item in listed["items"])
        return str(listed["metadata"]["resourceVersion"])

    def _poll_ready(self) -> None:
        with self.server.client(timeout=10) as client:
            while not self._stop.is_set():
                try:
                    code = client.get("/readyz").status_code
                except httpx.HTTPError:
                    code = 0
                self.record.ready.append((time.monotonic(), code))
                self._stop.wait(0.2)

    def wait_for_writes(self, count: int, timeout: float = 30.0) -> None:
        """Until ``count`` writes were acknowledged (the load is under way)."""
        deadline = time.monotonic() + timeout
        while len(self.record.acknowledged) < count:
            if time.monotonic() > deadline:
                codes = Counter(code for _, code in self.record.writes)
                raise AssertionError(
                    f"only {len(self.record.acknowledged)} writes in {timeout}s: {dict(codes)}"
                )
            time.sleep(0.05)

    def figures(self, before: tuple[float, float], during: tuple[float, float]) -> Figures:
        """The figures of the fault window ``during`` against ``before``; call after ``running``
        has ended (every acknowledged write is checked against the final list and the watch)."""
        record = self.record
        ok = [moment for moment, code in record.writes if code < 300]

        def rate(window: tuple[float, float]) -> float:
            start, end = window
            return sum(start <= moment < end for moment in ok) / (end - start)

        start, end = during
        seen = {name for _, name in record.watched}
        return Figures(
            rate_before=rate(before),
            rate_during=rate(during),
            write_gap=_longest_gap(ok, start, end),
            watch_gap=_longest_gap([moment for moment, _ in record.watched], start, end),
            statuses=Counter(code for moment, code in record.writes if start <= moment < end),
            ready=Counter(code for moment, code in record.ready if start <= moment < end),
            ready_after=Counter(code for moment, code in record.ready if moment >= self.ended - 2),
            lost=[name for name in record.acknowledged if name not in self.stored],
            unseen=[name for name in record.acknowledged if name not in seen],
            bodies=record.bodies,
        )


def drill(
    cluster: EtcdCluster,
    work: Path,
    fault: Callable[[], Callable[[], None]],
    *,
    warmup: float = 2.0,
    length: float = 8.0,
    settle: float = 3.0,
) -> tuple[Figures, list[str]]:
    """Run the load for ``warmup`` seconds, then ``fault()`` (which returns its repair) for
    ``length`` seconds, repair, and ``settle``; the figures and the server's log."""
    run = Drill(cluster, work)
    with run.running():
        run.wait_for_writes(20)
        time.sleep(warmup)
        fault_start = time.monotonic()
        repair = fault()
        time.sleep(length)
        fault_end = time.monotonic()
        repair()
        time.sleep(settle)
    figures = run.figures((fault_start - warmup, fault_start), (fault_start, fault_end))
    return figures, run.log


Fault = Callable[[], Callable[[], None]]


def faults(cluster: EtcdCluster) -> dict[str, Fault]:
    """The drills' faults by name: each does its harm and returns its repair."""

    def hang_follower() -> Callable[[], None]:
        victim = cluster.followers()[0]
        victim.pause()
        return victim.resume

    def hang_leader() -> Callable[[], None]:
        victim = cluster.leader()
        victim.pause()
        return victim.resume

    def kill_leader() -> Callable[[], None]:
        victim = cluster.leader()
        victim.kill()
        return lambda: cluster.restart(victim)

    def lose_quorum() -> Callable[[], None]:
        first, second = cluster.followers()
        first.kill()
        second.kill()
        return lambda: cluster.restart(first, second)

    return {
        "follower hung": hang_follower,
        "leader hung": hang_leader,
        "leader killed": kill_leader,
        "quorum lost": lose_quorum,
    }
