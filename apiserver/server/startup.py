"""Start-up failures as one line: a user who starts a server on a taken port or a locked data directory needs
the reason, not uvicorn's and asyncio's tracebacks around it (those stay available with `serve -v`).

kube-apiserver does the same: `Error: failed to create listener: failed to listen on 0.0.0.0:6443: listen tcp
0.0.0.0:6443: bind: address already in use` and exit 1 (k8s.io/apiserver/pkg/server/options/serving.go).
"""

from __future__ import annotations

import socket

from apiserver.server.workers import address_family


class StartupError(Exception):
    """The server cannot start, for a reason its operator can act on: the message says which."""


def bind_listener(host: str, port: int) -> socket.socket:
    """The socket a single server process serves on, bound before anything else starts, so that a taken port
    fails at once (before the data directory is locked or a certificate written) and port 0 is resolved to the
    port the kernel picked before the kubeconfig names it."""
    sock = socket.socket(address_family(host), socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise bind_failure(host, port, error) from error
    return sock


def bind_failure(host: str, port: int, error: OSError) -> StartupError:
    """A failed bind as Go words it (`bind: address already in use`), without Python's `[Errno 98]`."""
    reason = error.strerror or str(error)
    return StartupError(f"failed to listen on {host}:{port}: bind: {reason[0].lower()}{reason[1:]}")
