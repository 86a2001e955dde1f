"""Start a real `apiforge serve` process on a free loopback port, for integration and end-to-end tests.

It serves TLS, as `apiforge serve` does by default; ``client()`` is an httpx client holding the credentials of
the kubeconfig the server wrote (its CA and the admin's client certificate), ``connect()`` a raw socket
wrapped in the same TLS. A server started with ``--insecure-serving`` is plain HTTP and both are bare."""

from __future__ import annotations

import base64
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from apiserver.server.cli import client_url

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
"""The data files the suite reads, vendored with their origins and licences (SOURCES.md there)."""
READY_TIMEOUT = 90.0
"""Seconds a server may take to be ready: 2-3 s on an idle machine, 20 s measured at load 24 on two cores, and
more in that load's bursts (a bound that is not the thing tested)."""
CA_FILE = "test-ca.pem"
CLIENT_FILE = "test-client.pem"
"""The kubeconfig's CA and client certificate with its key, as files (for OpenSSL and requests)."""


PORT_TAKEN = "bind: address already in use"
"""What `apiforge serve` says when its port is taken (kube's wording)."""
PORT_ATTEMPTS = 3
_PICKED: set[int] = set()
"""The ports free_port handed out: a server meant for one of them moves to another when it was taken."""


def free_port() -> int:
    """A loopback port free now, the kernel's pick. Nothing holds it: until a server binds it, another test
    worker may be handed it too, so ``ServerProcess.start`` moves to a fresh one when its port was taken."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    _PICKED.add(port)
    return port


class PortTaken(RuntimeError):
    """The server could not bind the port free_port picked for it: another process took it first."""


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
    server_ca: Path | None = None
    """The CA of a serving certificate of the test's own (--tls-cert-file): the kubeconfig names none."""
    ready_timeout: float = READY_TIMEOUT
    _tls: ssl.SSLContext | None = None

    @property
    def secure(self) -> bool:
        return "--insecure-serving" not in self.extra_args

    @property
    def url(self) -> str:
        return client_url(self.bind_address, self.port, "https" if self.secure else "http")

    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS a client of the written kubeconfig uses (None over plain HTTP); once started."""
        return self._tls

    @property
    def requests_tls(self) -> dict[str, Any]:
        """The kubeconfig's credentials as ``requests`` takes them (``verify``, ``cert``)."""
        return {"verify": str(self.data_dir / CA_FILE), "cert": str(self.data_dir / CLIENT_FILE)}

    def client(self, **options: Any) -> httpx.Client:
        """An httpx client to the server as its admin, with the kubeconfig's credentials."""
        return httpx.Client(base_url=self.url, verify=self._tls or True, **options)

    def anonymous_client(self, **options: Any) -> httpx.Client:
        """An httpx client that trusts the server's CA and presents no credentials (system:anonymous)."""
        verify: ssl.SSLContext | bool = True
        if self.secure:
            verify = ssl.create_default_context(
                cafile=str(self.server_ca or self.data_dir / CA_FILE)
            )
        return httpx.Client(base_url=self.url, verify=verify, **options)

    def http(self, method: str, path: str, **options: Any) -> httpx.Response:
        """One request on a connection of its own (``httpx.request`` with the kubeconfig's credentials)."""
        with self.client() as client:
            return client.request(method, path, **options)

    def async_client(self, **options: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, verify=self._tls or True, **options)

    def connect(
        self, timeout: float | None = None, receive_buffer: int | None = None
    ) -> socket.socket:
        """A connection to the server, in TLS unless it serves plain HTTP: for tests of the bytes sent.
        ``receive_buffer``: the kernel's receive buffer (SO_RCVBUF), set before connecting."""
        connection = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer is not None:
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        connection.settimeout(timeout)
        connection.connect(("127.0.0.1", self.port))
        if self._tls is None:
            return connection
        return self._tls.wrap_socket(connection, server_hostname="127.0.0.1")

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "admin.kubeconfig"

    def start(self, extra_env: dict[str, str] | None = None) -> float:
        """Start and wait until the kubeconfig exists and /readyz answers; returns seconds to ready. A port
        from free_port that another process took meanwhile is replaced by a fresh one (``port`` changes)."""
        for _ in range(PORT_ATTEMPTS - 1):
            try:
                return self._start(extra_env)
            except PortTaken:
                self.port = free_port()
        return self._start(extra_env)

    def _start(self, extra_env: dict[str, str] | None) -> float:
        self.kubeconfig.unlink(missing_ok=True)
        env = {**os.environ, **(extra_env or {})}
        started = time.monotonic()
        credentials_read = False
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
        while time.monotonic() - started < self.ready_timeout:
            if self.process.poll() is not None:
                code, output = self.process.returncode, ""
                if self.process.stdout:  # closed here: left to the collector, its ResourceWarning
                    with self.process.stdout:  # would fail whichever test runs next
                        output = self.process.stdout.read().decode()
                self.process = None
                if PORT_TAKEN in output and self.port in _PICKED:
                    raise PortTaken(output)
                raise RuntimeError(f"server exited with {code}:\n{output}")
            if self.kubeconfig.exists():
                if not credentials_read:
                    self._tls = kubeconfig_tls(self.kubeconfig, self.server_ca)
                    credentials_read = True
                try:
                    with self.client(timeout=1) as client:
                        if client.get("/readyz").status_code == 200:
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


def kubeconfig_tls(kubeconfig: Path, server_ca: Path | None = None) -> ssl.SSLContext | None:
    """The TLS context the kubeconfig as written describes (its current context's cluster and user), as
    kubectl would build it; None for a plain-HTTP server. The client certificate and key are written next
    to the kubeconfig for OpenSSL, which loads them from a file only."""
    config = yaml.safe_load(kubeconfig.read_text())
    cluster = config["clusters"][0]["cluster"]
    if not cluster["server"].startswith("https://"):
        return None
    user = config["users"][0]["user"]
    authority = kubeconfig.with_name(CA_FILE)
    if "certificate-authority-data" in cluster:
        authority.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
    else:
        assert server_ca is not None, "the kubeconfig names no CA: the test must"
        authority.write_bytes(server_ca.read_bytes())
    context = ssl.create_default_context(cafile=authority)
    pem = kubeconfig.with_name(CLIENT_FILE)
    pem.write_bytes(
        base64.b64decode(user["client-certificate-data"])
        + base64.b64decode(user["client-key-data"])
    )
    context.load_cert_chain(pem)
    return context


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
        with server.client(timeout=timeout) as client:
            yield client
    finally:
        server.stop()
