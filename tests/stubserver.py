"""A stub HTTP server in a thread and a kubectl pointed at it: for tests that watch what kubectl sends (its
requests and bodies) without a real apiforge server behind it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.kubectl import Kubectl, kubectl_binary


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on a free loopback port for the duration; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def kubectl_for(minor: int, url: str, directory: Path) -> Kubectl:
    """kubectl 1.<minor> with an anonymous kubeconfig for ``url`` (namespace default) kept in ``directory``;
    the test is skipped when that kubectl is not installed."""
    try:
        binary = kubectl_binary(minor)
    except FileNotFoundError as missing:
        pytest.skip(f"kubectl 1.{minor} is not installed: {missing}")
    directory.mkdir(parents=True, exist_ok=True)
    kubeconfig = directory / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: c, cluster: {{server: '{url}'}}}}]\n"
        "users: [{name: u, user: {}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u, namespace: default}}]\n"
        "current-context: x\n"
    )
    return Kubectl(binary, kubeconfig, directory / "cache")
