"""A real etcd server for tests and benches: free loopback ports, a private data dir, and the ability
to stop, ``kill -9`` and restart it on the same data.

The storage suite must prove the etcd backend against the real thing, and CI must not quietly skip
it: when the ``etcd`` binary is missing a test fails with a message saying what to install (``make test``
installs it before pytest starts); a test never installs system packages itself.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.serverproc import free_port

READY_TIMEOUT = 20.0
"""Seconds to wait for /health; etcd is ready in 0.25-1.1 s on a loaded 2-core machine."""

_UNSUPPORTED_ARCH = {"aarch64": "arm64", "arm64": "arm64"}
"""etcd 3.4 refuses to start on these unless ETCD_UNSUPPORTED_ARCH names the architecture."""


def etcd_binary() -> str:
    """The path of ``etcd``; a missing one fails the test with what to install."""
    found = shutil.which("etcd")
    if found is None:
        raise RuntimeError(
            "the etcd tests need an etcd 3.4+ server binary on PATH: run `make etcd` (as root it installs"
            " Debian's etcd-server and etcd-client) or install it yourself"
        )
    return found


def etcdctl_binary() -> str | None:
    """The path of ``etcdctl`` if it is installed (it comes with Debian's etcd-client)."""
    return shutil.which("etcdctl")


class EtcdProcess:
    """One etcd on 127.0.0.1: a single-member cluster, or a member of an :class:`EtcdCluster`; its ports
    and data dir survive restarts."""

    def __init__(
        self, data_dir: Path, log_path: Path | None = None, extra_args: list[str] | None = None
    ) -> None:
        self.data_dir = data_dir
        self.extra_args = list(extra_args or [])
        self.log_path = log_path or data_dir.with_name(data_dir.name + ".log")
        self.client_port = 0
        self.peer_port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.name = "default"
        self.cluster: str | None = None
        """``--initial-cluster`` when a member of a larger cluster (set by EtcdCluster)."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.client_port}"

    @property
    def endpoints(self) -> list[str]:
        return [self.url]

    def start(self) -> float:
        """Start on fresh free ports (retrying if one was taken meanwhile); seconds until healthy."""
        last_error: RuntimeError | None = None
        for _ in range(3):
            self.client_port, self.peer_port = free_port(), free_port()
            if self.client_port == self.peer_port:
                continue
            try:
                return self._launch()
            except RuntimeError as error:
                last_error = error
        raise last_error or RuntimeError("could not find two free ports for etcd")

    def restart(self) -> float:
        """Start again on the same ports and data dir (after ``stop`` or ``kill``)."""
        if self.process is not None:
            raise RuntimeError("etcd is still running")
        return self._launch()

    def stop(self) -> None:
        """SIGTERM, as an orderly shutdown would; SIGKILL only if it does not exit within 10 s."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def kill(self) -> None:
        """``kill -9``: a crash, with no chance to flush anything."""
        if self.process is None:
            return
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.process = None

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/health", timeout=1) as response:
                return bool(json.load(response).get("health") == "true")
        except (OSError, ValueError, urllib.error.URLError):
            return False

    def tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    @property
    def peer_url(self) -> str:
        return f"http://127.0.0.1:{self.peer_port}"

    def pause(self) -> None:
        """SIGSTOP: the member hangs with its connections open, as a stuck disk or a VM pause does."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def status(self) -> dict[str, Any] | None:
        """The member's Maintenance.Status through etcd's JSON gateway (member_id, leader: as strings),
        or None when it does not answer."""
        request = urllib.request.Request(f"{self.url}/v3/maintenance/status", data=b"{}")
        try:
            with urllib.request.urlopen(request, timeout=1) as response:
                found: dict[str, Any] = json.load(response)
                return found
        except (OSError, ValueError, urllib.error.URLError):
            return None

    def _launch(self) -> float:
        started = time.monotonic()
        self._spawn()
        return self._wait_healthy(started)

    def _spawn(self) -> None:
        client, peer = self.url, self.peer_url
        if self.cluster is None:
            # One member has no peers to miss heartbeats, so short raft timers are safe, and a
            # restart elects itself in ~0.1 s instead of the default election timeout's 1.1 s.
            members = [f"--initial-cluster=default={peer}", "--heartbeat-interval=20"]
            members.append("--election-timeout=200")
        else:  # etcd's defaults (100 ms, 1 s): shorter ones elect spuriously on a busy machine
            members = [f"--initial-cluster={self.cluster}", "--initial-cluster-token=test"]
        argv = [
            etcd_binary(),
            f"--name={self.name}",
            f"--data-dir={self.data_dir}",
            f"--listen-client-urls={client}",
            f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            *members,
            "--unsafe-no-fsync=false",  # the default, stated: the crash tests rely on fsync
            "--logger=zap",
            "--log-outputs=stderr",
            *self.extra_args,
        ]
        env = dict(os.environ)
        arch = _UNSUPPORTED_ARCH.get(platform.machine())
        if arch is not None:
            env.setdefault("ETCD_UNSUPPORTED_ARCH", arch)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)

    def _wait_healthy(self, started: float) -> float:
        assert self.process is not None
        while (elapsed := time.monotonic() - started) < READY_TIMEOUT:
            if self.process.poll() is not None:
                code = self.process.returncode
                self.process = None
                raise RuntimeError(f"etcd exited with {code}:\n{self.tail()}")
            if self.healthy():
                return elapsed
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"etcd was not healthy within {READY_TIMEOUT}s:\n{self.tail()}")


def running_etcd(parent: Path) -> Iterator[EtcdProcess]:
    """An etcd with its data under ``parent``, for the body of a fixture (``yield from``): started,
    then stopped when the fixture's scope ends."""
    process = EtcdProcess(parent / "data")
    process.start()
    yield process
    process.stop()


class EtcdCluster:
    """A 3-member (by default) etcd cluster on loopback, each member an :class:`EtcdProcess` that can be
    paused, killed and restarted on its own."""

    def __init__(self, parent: Path, size: int = 3) -> None:
        self.members = [EtcdProcess(parent / f"m{index}") for index in range(size)]
        for index, member in enumerate(self.members):
            member.name = f"m{index}"

    @property
    def endpoints(self) -> list[str]:
        return [member.url for member in self.members]

    def start(self) -> None:
        """Start every member on free ports; returns once each reports healthy (a leader elected)."""
        ports = {free_port() for _ in range(2 * len(self.members))}
        if len(ports) < 2 * len(self.members):
            raise RuntimeError("could not find free ports for the etcd cluster")
        for member in self.members:
            member.client_port, member.peer_port = ports.pop(), ports.pop()
        cluster = ",".join(f"{member.name}={member.peer_url}" for member in self.members)
        started = time.monotonic()
        for member in self.members:
            member.cluster = cluster
            member._spawn()
        for member in self.members:
            member._wait_healthy(started)

    def restart(self, *members: EtcdProcess) -> None:
        """Restart killed ``members`` together (one alone may wait for another to form a quorum)."""
        started = time.monotonic()
        for member in members:
            member._spawn()
        for member in members:
            member._wait_healthy(started)

    def stop(self) -> None:
        for member in self.members:
            if member.process is not None and member.process.poll() is None:
                member.resume()  # a paused member cannot act on SIGTERM
            member.stop()

    def leader(self, timeout: float = 10.0) -> EtcdProcess:
        """The member the others agree leads (waiting for an election to settle)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            statuses = {member.name: member.status() for member in self.members}
            ids = {
                name: status["header"]["member_id"] for name, status in statuses.items() if status
            }
            leaders = {status.get("leader") for status in statuses.values() if status}
            if len(leaders) == 1 and (leader := leaders.pop()):
                for member in self.members:
                    if ids.get(member.name) == leader:
                        return member
            time.sleep(0.05)
        raise RuntimeError(f"no agreed etcd leader within {timeout}s")

    def followers(self) -> list[EtcdProcess]:
        leader = self.leader()
        return [member for member in self.members if member is not leader]


def running_cluster(parent: Path) -> Iterator[EtcdCluster]:
    """A 3-member cluster under ``parent`` for the body of a fixture (``yield from``)."""
    cluster = EtcdCluster(parent)
    cluster.start()
    yield cluster
    cluster.stop()
