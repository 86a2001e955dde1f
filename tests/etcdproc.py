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
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

READY_TIMEOUT = 20.0
"""Seconds to wait for /health; etcd is ready in 0.25-1.1 s on a loaded 2-core machine."""

_UNSUPPORTED_ARCH = {"aarch64": "arm64", "arm64": "arm64"}
"""etcd 3.4 refuses to start on these unless ETCD_UNSUPPORTED_ARCH names the architecture."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


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
    """One single-member etcd cluster on 127.0.0.1; its ports and data dir survive restarts."""

    def __init__(
        self, data_dir: Path, log_path: Path | None = None, extra_args: list[str] | None = None
    ) -> None:
        self.data_dir = data_dir
        self.extra_args = list(extra_args or [])
        self.log_path = log_path or data_dir.with_name(data_dir.name + ".log")
        self.client_port = 0
        self.peer_port = 0
        self.process: subprocess.Popen[bytes] | None = None

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

    def _launch(self) -> float:
        client, peer = self.url, f"http://127.0.0.1:{self.peer_port}"
        argv = [
            etcd_binary(),
            "--name=default",
            f"--data-dir={self.data_dir}",
            f"--listen-client-urls={client}",
            f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=default={peer}",
            "--unsafe-no-fsync=false",  # the default, stated: the crash tests rely on fsync
            # One member has no peers to miss heartbeats, so short raft timers are safe, and a
            # restart elects itself in ~0.1 s instead of the default election timeout's 1.1 s.
            "--heartbeat-interval=20",
            "--election-timeout=200",
            "--logger=zap",
            "--log-outputs=stderr",
            *self.extra_args,
        ]
        env = dict(os.environ)
        arch = _UNSUPPORTED_ARCH.get(platform.machine())
        if arch is not None:
            env.setdefault("ETCD_UNSUPPORTED_ARCH", arch)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
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
