"""A project's generated API served inside the test process, on a loopback port, for the pytest fixtures.

Unlike a subprocess `apiforge serve` (seconds to import and start), the server runs on an event loop in a
thread of the test process over memory storage, so a test pays only for building the app and starting its
controllers. Every server of a process after the first starts from a snapshot of the first one's storage
(``MemoryStorage.snapshot``): the objects a server writes when it first starts (default namespaces, roles,
service accounts, the CRDs given) are written once, and a later server finds them there.

It listens on a real socket (uvicorn, as `apiforge serve`), so that tools in other processes (kubectl, a kopf
operator) reach it through the kubeconfig it writes; TLS (the data directory's CA, an admin client
certificate, as `apiforge serve` makes them) and RBAC are options.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import httpx
import uvicorn
import yaml

from apiclient.config import Config, load_kubeconfig
from apiforge.testing.app import build_app
from apiserver.authentication.authenticator import Authenticator
from apiserver.server.apis import APIs
from apiserver.server.cli import client_url
from apiserver.server.connection import protocol_class
from apiserver.server.kubeconfig import write_kubeconfig
from apiserver.server.limits import ConnectionLimits
from apiserver.server.security import Security, prepare
from apiserver.server.startup import bind_listener
from apiserver.server.tlsoptions import TLSOptions
from apiserver.storage import MemoryStorage

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
START_TIMEOUT = 30.0
SERVED_TIMEOUT = 10.0  # seconds for a CRD given to be served
T = TypeVar("T")


@dataclass(frozen=True)
class Settings:
    """What a test server serves and how: the project directory whose ``generated/`` package it serves, the
    CustomResourceDefinition files installed at start, TLS, and RBAC (else every request is allowed)."""

    project: Path = field(default_factory=Path.cwd)
    crds: tuple[Path, ...] = ()
    tls: bool = True
    rbac: bool = False


def project_api(project: Path) -> tuple[APIs, Path]:
    """The APIs (the scheme and each resource's wiring) and OpenAPI directory of ``project``'s generated
    package (imported as ``generated``, as `apiforge serve` imports it from the project directory)."""
    if str(project) not in sys.path:
        sys.path.insert(0, str(project))
    from generated.server import OPENAPI_DIR, build_apis

    return build_apis(), OPENAPI_DIR


def read_crds(files: Sequence[Path]) -> list[dict[str, Any]]:
    """Every CustomResourceDefinition document of ``files`` (libyaml when available: large CRDs take
    seconds to parse in pure Python)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [
        document
        for file in files
        for document in yaml.load_all(file.read_text(), Loader=loader)
        if document and document.get("kind") == "CustomResourceDefinition"
    ]


class TestServer:
    """One server, started with ``start()`` (or ``with``) and stopped with ``stop()``; ``kubeconfig`` is the
    file external tools use, ``config()`` the typed clients' configuration."""

    __test__ = False  # not a test class, whatever pytest's naming rule says

    def __init__(
        self,
        settings: Settings,
        directory: Path,
        storage: MemoryStorage | None = None,
        crds: Sequence[dict[str, Any]] | None = None,
        pki: Path | None = None,
    ) -> None:
        self.settings = settings
        self.directory = directory
        self.storage = storage or MemoryStorage()
        self.kubeconfig = directory / "admin.kubeconfig"
        self.url = ""
        self._crds = read_crds(settings.crds) if crds is None else list(crds)
        self._pki = pki
        self.initial: MemoryStorage | None = None
        """The storage as it was once started and the CRDs served, before any test wrote: what later
        servers start from (``fork``)."""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._uvicorn: uvicorn.Server | None = None
        self._serving: Future[None] | None = None
        self._security: Security | None = None

    def start(self) -> None:
        """Serve, write the kubeconfig, and return once the CRDs given are served."""
        apis, openapi_dir = project_api(self.settings.project)
        self.directory.mkdir(parents=True, exist_ok=True)
        if self._pki is not None and self.settings.tls:  # its CA and certificates: no keys to make
            shutil.copytree(self._pki, self.directory / "pki", dirs_exist_ok=True)
        tls = TLSOptions(insecure_serving=not self.settings.tls)
        self._security = prepare(self.directory, "127.0.0.1", tls)
        listener = bind_listener("127.0.0.1", 0)
        port = listener.getsockname()[1]
        app = build_app(
            apis,
            openapi_dir,
            self.storage,
            authorization_mode="RBAC" if self.settings.rbac else "AlwaysAllow",
            authenticators=self._authenticators(),
            insecure=self._security is None,
            secure_port=port,
        )
        context = self._security.context if self._security is not None else None
        config = uvicorn.Config(
            app,
            lifespan="on",
            log_level="warning",
            access_log=False,
            # apiforge serve's protocol: it hands the client certificate to the x509 authenticator
            http=protocol_class(ConnectionLimits()),
            ssl_context_factory=(lambda _config, _default: context) if context else None,
        )
        self._uvicorn = uvicorn.Server(config)
        self._thread.start()
        self._serving = asyncio.run_coroutine_threadsafe(
            self._uvicorn.serve(sockets=[listener]), self._loop
        )
        self._wait_started()
        self.url = client_url("127.0.0.1", port, "https" if self._security else "http")
        credentials = self._security.credentials() if self._security is not None else None
        write_kubeconfig(self.kubeconfig, self.url, credentials)
        self._install_crds()
        self.initial = self._on_loop(self.storage.snapshot)

    def fork(self, directory: Path) -> TestServer:
        """A server of its own (not started) that starts from this one's storage as it was once started,
        with its CRDs and its PKI: what a test gets that changes cluster-wide state."""
        assert self.initial is not None, "fork a started server"
        pki = self.directory / "pki" if self.settings.tls else None
        return TestServer(self.settings, directory, self.initial.snapshot(), self._crds, pki)

    def _on_loop(self, function: Callable[[], T]) -> T:
        """``function``'s result, called on the server's loop (where the memory storage is written)."""

        async def call() -> T:
            return function()

        return asyncio.run_coroutine_threadsafe(call(), self._loop).result(START_TIMEOUT)

    def _authenticators(self) -> list[Authenticator]:
        return self._security.authenticators() if self._security is not None else []

    def _wait_started(self) -> None:
        assert self._uvicorn is not None and self._serving is not None
        deadline = time.monotonic() + START_TIMEOUT
        while not self._uvicorn.started:
            if self._serving.done():
                self._serving.result()  # uvicorn's own reason
                raise RuntimeError("the test server stopped while starting")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the test server did not start in {START_TIMEOUT:g} s")
            time.sleep(0.002)

    def _install_crds(self) -> None:
        """Create each CRD given (those already stored, in a server started from a snapshot, are kept) and
        wait until every served version of each answers a LIST."""
        if not self._crds:
            return
        with self.http() as client:
            for crd in self._crds:
                answer = client.post(CRD_PATH, json=crd)
                if answer.status_code not in (201, 409):
                    raise RuntimeError(f"CRD {crd['metadata']['name']}: {answer.text}")
            for crd in self._crds:
                _wait_served(client, crd)

    def http(self) -> httpx.Client:
        """An httpx client to the server as its admin (close it, or use it in ``with``)."""
        config = self.config()
        verify: Any = config.ssl_context if config.ssl_context is not None else True
        return httpx.Client(base_url=self.url, verify=verify, timeout=SERVED_TIMEOUT)

    def config(self) -> Config:
        """The typed clients' configuration (apiclient) from the admin kubeconfig."""
        return load_kubeconfig(self.kubeconfig)

    def write_kubeconfig(self, path: Path, namespace: str) -> Path:
        """A copy of the admin kubeconfig at ``path`` whose context defaults to ``namespace``."""
        document = yaml.safe_load(self.kubeconfig.read_text())
        for context in document["contexts"]:
            context["context"]["namespace"] = namespace
        path.write_text(yaml.safe_dump(document, sort_keys=False))
        path.chmod(0o600)
        return path

    def stop(self) -> None:
        if self._uvicorn is None or self._serving is None:
            return
        self._uvicorn.should_exit = True
        try:
            self._serving.result(START_TIMEOUT)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(START_TIMEOUT)
            self._loop.close()
            self._uvicorn = None

    def __enter__(self) -> TestServer:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def _wait_served(client: httpx.Client, crd: dict[str, Any]) -> None:
    """Until every served version of ``crd`` answers a LIST (polled every 10 ms)."""
    spec = crd["spec"]
    paths = [
        f"/apis/{spec['group']}/{version['name']}/{spec['names']['plural']}?limit=1"
        for version in spec["versions"]
        if version.get("served", True)
    ]
    deadline = time.monotonic() + SERVED_TIMEOUT
    for path in paths:
        while client.get(path).status_code != 200:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{crd['metadata']['name']} not served: {path}")
            time.sleep(0.01)
