"""The connection timeouts of `serve` (applied in server/connection.py), apart so that the command line loads
without uvicorn."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """Seconds (0: none). Header and idle as kube-apiserver's net/http server sets them
    (k8s.io/apiserver pkg/server/secure_serving.go: ReadHeaderTimeout 32 s, IdleTimeout 90 s); kube sets no
    body read timeout, so the body gets what ``--request-timeout`` gives a request by default."""

    read_header_timeout: float = 32.0
    read_body_timeout: float = 60.0
    idle_timeout: float = 90.0
