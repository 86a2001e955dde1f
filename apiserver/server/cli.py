"""`apiforge serve` once its options are parsed (apiserver.server.options): serve until SIGTERM/SIGINT.

The admin kubeconfig is written (or its own entries refreshed) only once the socket listens (with --workers, once
every worker does), so on a first start its presence means "ready".

TLS by default: the PKI, the TLS context and the x509 authenticator are prepared before anything serves
(server/security.py), and before workers fork, so that they share them. Plain HTTP only with
--insecure-serving.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import uvicorn
import uvloop

from apiserver.authentication.authenticator import Authenticator
from apiserver.authentication.requestheader import RequestHeaderAuthenticator
from apiserver.authentication.token import TokenAuthentication
from apiserver.endpoints.http import ASGIApp
from apiserver.server.accept import accepting_all
from apiserver.server.apis import APIs
from apiserver.server.app import APIServer
from apiserver.server.authentication_info import (
    AuthenticationInfoError,
    config_maps,
    publish,
    published,
)
from apiserver.server.chain import build_handler_chain
from apiserver.server.connection import protocol_class
from apiserver.server.delegation_options import DelegationError
from apiserver.server.kubeconfig import write_kubeconfig
from apiserver.server.options import ServeOptions
from apiserver.server.security import Security, SecurityError, prepare
from apiserver.server.startup import StartupError, bind_failure, bind_listener
from apiserver.server.tlssniff import sniffing
from apiserver.server.token_options import TokenSetupError, token_authentication
from apiserver.server.workers import Supervisor, claim_port
from apiserver.storage import open_storage
from apiserver.storage.interface import StorageError

log = logging.getLogger(__name__)
GC_THRESHOLD = 50_000


class _Server(uvicorn.Server):
    """uvicorn re-raises SIGTERM after its graceful shutdown, so the process would die by the signal; an API
    server that shut down cleanly exits 0 (as kube-apiserver does).

    The first signal tells the server it is shutting down (``shutting_down``: /readyz fails) and, with a
    ``delay`` (``--shutdown-delay-duration``), serves on that long before uvicorn stops listening, as kube's
    ShutdownDelayDuration; a second signal stops at once."""

    def __init__(
        self, config: uvicorn.Config, shutting_down: Callable[[], None], delay: float
    ) -> None:
        super().__init__(config)
        self.shutting_down = shutting_down
        self.delay = delay
        self.draining = False
        self.loop: asyncio.AbstractEventLoop | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.shutting_down()
        if self.draining or not self.delay or self.loop is None:
            super().handle_exit(sig, frame)
            return
        self.draining = True
        log.info(
            "shutting down in %gs (--shutdown-delay-duration): /readyz fails meanwhile", self.delay
        )
        stop = super().handle_exit
        self.loop.call_soon_threadsafe(self.loop.call_later, self.delay, stop, sig, frame)

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        previous = {
            sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


async def _serve(
    server: ASGIApp,
    shutting_down: Callable[[], None],
    options: ServeOptions,
    security: Security | None,
    listener: socket.socket,
    on_ready: Callable[[], None] | None = None,
) -> None:
    """Serve on ``listener`` until SIGTERM/SIGINT. Alone, the process announces itself once listening (the
    kubeconfig); as a worker on the supervisor's port, it tells the supervisor (``on_ready``), which does."""
    context = security.context if security is not None else None
    # over TLS, a TCP listener whose connections start TLS after a look at their first bytes
    # (tlssniff: plain HTTP on the TLS port is answered as Go answers it)
    http = (
        protocol_class(options.connection)
        if context is None
        else sniffing(
            protocol_class(options.connection), context, options.connection.read_header_timeout
        )
    )
    config = uvicorn.Config(
        server,
        host=options.bind_address,
        port=options.port,
        lifespan="off",  # the server starts and stops around uvicorn (_serve_process)
        log_level=options.log_level,
        access_log=False,
        loop="uvloop",
        # each turn of the loop accepts every waiting connection, as Go's accept loop (server/accept.py)
        http=accepting_all(http, listener),
        # uvicorn closes idle keep-alive connections after whole seconds; 0 ("none") as a day
        timeout_keep_alive=max(1, round(options.connection.idle_timeout))
        if options.connection.idle_timeout
        else 86400,
        timeout_graceful_shutdown=5,
        # nothing reads the client address or scheme, so X-Forwarded-* rewriting is per-request work for
        # nothing; and kube-apiserver sends no Server header (Go's net/http does not)
        proxy_headers=False,
        server_header=False,
    )
    runner = _Server(config, shutting_down, options.shutdown_delay)
    runner.loop = asyncio.get_running_loop()
    task = asyncio.create_task(runner.serve(sockets=[listener]))
    while not runner.started and not task.done():
        await asyncio.sleep(0.01)
    if runner.started:
        if on_ready is not None:
            on_ready()
        else:
            announce(options, security, listener.getsockname()[1])
    await task


def client_url(bind_address: str, port: int, scheme: str = "https") -> str:
    """The URL a local client (the kubeconfig) reaches a server bound to ``bind_address`` at: a wildcard
    address becomes the loopback of its family and an IPv6 literal gets brackets, as kube-apiserver's
    loopback client config does (k8s.io/apiserver/pkg/server/config.go ``LoopbackHostPort``)."""
    host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(bind_address, bind_address)
    if ":" not in host:
        return f"{scheme}://{host}:{port}"
    # a zone index ("fe80::1%eth0") is written %25 in a URL (RFC 6874), which kubectl parses
    return f"{scheme}://[{host.replace('%', '%25')}]:{port}"


def announce(options: ServeOptions, security: Security | None, port: int) -> None:
    """Write the kubeconfig (its presence means ready) and say so in one line that names what a user needs
    next: the URL and the kubeconfig to export."""
    url = client_url(options.bind_address, port, "http" if security is None else "https")
    credentials = security.credentials() if security is not None else None
    kubeconfig = options.data_dir / "admin.kubeconfig"
    write_kubeconfig(kubeconfig, url, credentials)
    where = ",".join(options.etcd_servers) if options.storage == "etcd" else options.data_dir
    workers = f", {options.workers} workers" if options.workers > 1 else ""
    log.info(
        "apiforge serving on %s (storage: %s at %s%s); ready: export KUBECONFIG=%s",
        url,
        options.storage,
        where,
        workers,
        kubeconfig,
    )


def prepare_data_dir(data_dir: Path) -> None:
    """The data directory holds the database (every Secret) and the kubeconfig: its owner's only (0700),
    whatever the umask, as k3s keeps its data directory."""
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(data_dir, 0o700)


def run(apis: APIs, openapi_dir: Path, options: ServeOptions) -> None:
    """Serve ``apis``: one process, or with --workers a supervisor of forked workers. A reason not to start
    is a :class:`StartupError` (the command line prints it as one line)."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    prepare_data_dir(options.data_dir)
    listener = bind_listener(options.bind_address, options.port) if options.workers == 1 else None
    try:
        security = prepare(options.data_dir, options.bind_address, options.tls)
    # as kube-apiserver, which will not serve without its certificates
    except SecurityError as error:
        raise StartupError(f"cannot serve TLS: {error}") from error
    url = client_url(options.bind_address, options.port, "http" if security is None else "https")
    try:  # before any worker forks: every worker verifies what any other signs
        tokens = token_authentication(options.tokens, options.data_dir, url)
        options.delegation.check()
    except (TokenSetupError, DelegationError) as error:
        raise StartupError(str(error)) from error
    if listener is not None:
        _serve_process(apis, openapi_dir, options, security, tokens, listener)
        return
    try:
        reservation = claim_port(options.bind_address, options.port)
    except OSError as error:  # as a single process fails when the port is taken
        raise bind_failure(options.bind_address, options.port, error) from error
    supervisor = Supervisor(
        options.workers,
        reservation,
        lambda worker_listener, on_ready: _serve_process(
            apis, openapi_dir, options, security, tokens, worker_listener, on_ready
        ),
        lambda port: announce(options, security, port),
    )
    sys.exit(supervisor.run())


def _serve_process(
    apis: APIs,
    openapi_dir: Path,
    options: ServeOptions,
    security: Security | None,
    tokens: TokenAuthentication,
    listener: socket.socket,
    on_ready: Callable[[], None] | None = None,
) -> None:
    """One server process: its storage client, its APIServer, its event loop (a worker's, after the fork,
    so that no gRPC channel or loop is ever shared across a fork). The server starts before uvicorn serves
    (not in uvicorn's lifespan), so that a failure to start is ours to report, as one line."""
    storage = open_storage(
        options.storage,
        options.data_dir,
        etcd_servers=options.etcd_servers,
        etcd_prefix=options.etcd_prefix,
    )
    server = APIServer(
        apis,
        storage,
        openapi_dir,
        options.etcd_compaction_interval,
        authorization_modes=options.chain.authorization_modes,
        tokens=tokens,
        delegated_authorizer=options.delegation.authorizer(),
        kind_options=options.kind_options,
        secure_port=options.port,
        # replicas share etcd only: on SQLite this process is the only replica, so it leads at once
        leader_election=options.leader_election if options.storage == "etcd" else None,
    )
    server.context.proxy_client_cert = options.delegation.proxy_client_cert(
        security.pki.directory if security is not None else None
    )
    delegated_tokens = options.delegation.token_authenticator()
    if delegated_tokens is not None:  # after the server's own token authenticators
        server.context.tokens.authenticators.append(delegated_tokens)
    # A server allocates many short-lived dicts per request; CPython's default first-generation threshold
    # (700) ran ~107 ms full collections many times a second under watch fan-out.
    gc.set_threshold(GC_THRESHOLD, 20, 100)
    # uvicorn applies loop="uvloop" only in Server.run(); serving from our own coroutine needs the loop here
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        authenticators: list[Authenticator] = []
        try:
            runner.run(server.start())
            if security is not None:
                authenticators = runner.run(_authenticators(server, options, security))
        except Exception as error:  # the process ends: what did start goes with it
            raise StartupError(_start_failure(error)) from error
        chain = build_handler_chain(
            server, options.chain, authenticators, insecure=security is None
        )
        try:
            runner.run(
                _serve(chain, server.shutdown_initiated, options, security, listener, on_ready)
            )
        finally:
            runner.run(server.stop())
            chain.close()


async def _authenticators(
    server: APIServer, options: ServeOptions, security: Security
) -> list[Authenticator]:
    """The certificate authenticators, kube's request-header one first: from the flags, or from the
    front's extension-apiserver-authentication ConfigMap; and this server's own ConfigMap, published for
    the extension servers behind it."""
    delegation = options.delegation
    resource = config_maps(server.scheme)
    cluster_cas, cluster_header = await delegation.cluster_authentication(resource)
    data = published(security.client_cas, delegation.published_request_header(security.pki))
    await publish(server.context.store(resource.group, resource.plural), data)
    authenticators = security.authenticators(cluster_cas)
    request_header = delegation.request_header_authenticator()
    if request_header is None and cluster_header is not None:
        request_header = RequestHeaderAuthenticator(cluster_header)
    if request_header is not None:
        authenticators.insert(0, request_header)
    return authenticators


def _start_failure(error: Exception) -> str:
    """What stopped the server's start: storage and OS errors speak for themselves; anything else is named
    by its type too (a defect, whose traceback `serve -v` shows)."""
    if isinstance(error, StorageError | OSError | AuthenticationInfoError):
        return str(error)
    return f"start-up failed: {type(error).__name__}: {error}"
