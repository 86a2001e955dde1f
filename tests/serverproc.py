"""Start a real `apiforge serve` process on a free loopback port, for integration and end-to-end tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from apiserver.server.cli import client_url

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CONFORMANCE = SHARED / "conformance"
READY_TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class ServerProcess:
    """A running server; ``url`` answers once ``start`` returns."""

    data_dir: Path
    port: int
    storage: str = "sqlite"
    cwd: Path = REPO  # the generated package of this directory is the one served
    extra_args: tuple[str, ...] = ()
    bind_address: str = "127.0.0.1"
    # the apiforge command: this interpreter's by default, an installed console script for the wheel test
    command: tuple[str, ...] = (sys.executable, "-m", "apiforge")
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return client_url(self.bind_address, self.port)

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "admin.kubeconfig"

    def start(self, extra_env: dict[str, str] | None = None) -> float:
        """Start and wait until the kubeconfig exists and /readyz answers; returns seconds to ready."""
        self.kubeconfig.unlink(missing_ok=True)
        env = {**os.environ, **(extra_env or {})}
        started = time.monotonic()
        self.process = subprocess.Popen(
            [
                *self.command,
                "serve",
                "--data-dir",
                str(self.data_dir),
                "--bind-address",
                self.bind_address,
                "--port",
                str(self.port),
                "--storage",
                self.storage,
                *self.extra_args,
            ],
            cwd=self.cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        while time.monotonic() - started < READY_TIMEOUT:
            if self.process.poll() is not None:
                output = self.process.stdout.read().decode() if self.process.stdout else ""
                raise RuntimeError(f"server exited with {self.process.returncode}:\n{output}")
            if self.kubeconfig.exists():
                try:
                    if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                        return time.monotonic() - started
                except httpx.HTTPError:
                    pass
            time.sleep(0.02)
        self.stop()
        raise RuntimeError("server did not become ready")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Stop the process (SIGTERM by default, SIGKILL to simulate a crash); returns its exit code."""
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            code = self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()
        self.process = None
        return code


@contextmanager
def client_on_backend(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    etcd_fixture: str = "etcd",
    timeout: float = 20,
) -> Iterator[httpx.Client]:
    """A client to a server on the backend the fixture's ``request.param`` names ("sqlite", or "etcd": then
    on the etcd fixture named ``etcd_fixture``), stopped on exit: the body of a fixture parametrized over
    backends, so that a module asserts the same answers on each."""
    extra: tuple[str, ...] = ()
    if request.param == "etcd":
        extra = ("--etcd-servers", request.getfixturevalue(etcd_fixture).url)
    server = ServerProcess(
        Path(tmp_path_factory.mktemp("data")), free_port(), storage=request.param, extra_args=extra
    )
    server.start()
    try:
        with httpx.Client(base_url=server.url, timeout=timeout) as client:
            yield client
    finally:
        server.stop()
