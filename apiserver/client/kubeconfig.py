"""A kubeconfig read as client-go's clientcmd reads it, for the server's own calls to another API server:
the delegated TokenReviews and SubjectAccessReviews of an extension API server (``--authentication-kubeconfig``,
``--authorization-kubeconfig``). The current context's cluster and user: the server URL, its CA
(``certificate-authority`` or ``-data``, or ``insecure-skip-tls-verify``), a client certificate and key
(files or ``-data``) or a bearer token (``token`` or ``tokenFile``)."""

from __future__ import annotations

import base64
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml


class KubeconfigError(Exception):
    """The kubeconfig cannot be read or names nothing usable: the server does not start."""


@dataclass(frozen=True, slots=True)
class RemoteServer:
    """Where another API server is and how to reach it."""

    url: str
    context: ssl.SSLContext
    token: str = ""

    def client(self, timeout: float) -> httpx.AsyncClient:
        """An HTTP client to it; each call of a review gives up after ``timeout`` seconds."""
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return httpx.AsyncClient(
            base_url=self.url, verify=self.context, headers=headers, timeout=timeout
        )


def load_kubeconfig(path: Path) -> RemoteServer:
    """The current context of the kubeconfig at ``path``; raises KubeconfigError."""
    try:
        config = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise KubeconfigError(f"invalid kubeconfig {path}: {error}") from None
    if not isinstance(config, dict):
        raise KubeconfigError(f"invalid kubeconfig {path}: not a mapping")
    try:
        contexts = _named(config, "contexts", "context")
        current = config.get("current-context") or next(iter(contexts), "")
        context = contexts.get(current)
        if context is None:
            raise KubeconfigError(f'invalid kubeconfig {path}: context "{current}" does not exist')
        cluster = _named(config, "clusters", "cluster").get(context.get("cluster", ""))
        if cluster is None or not cluster.get("server"):
            raise KubeconfigError(f"invalid kubeconfig {path}: no server for context {current}")
        user = _named(config, "users", "user").get(context.get("user", ""), {})
        return RemoteServer(
            str(cluster["server"]).rstrip("/"),
            _ssl_context(cluster, user, path.parent),
            _token(user, path.parent),
        )
    except (OSError, ValueError, ssl.SSLError, TypeError, AttributeError) as error:
        raise KubeconfigError(f"invalid kubeconfig {path}: {error}") from None


def _named(config: dict[str, Any], section: str, key: str) -> dict[str, dict[str, Any]]:
    return {str(entry.get("name", "")): entry.get(key) or {} for entry in config.get(section) or ()}


def _read(entry: dict[str, Any], key: str, base: Path) -> bytes:
    """``key``-data (base64) or the file ``key`` names (relative to the kubeconfig, as clientcmd)."""
    data = entry.get(f"{key}-data")
    if data:
        return base64.b64decode(data)
    name = entry.get(key)
    return (base / name).read_bytes() if name else b""


def _ssl_context(cluster: dict[str, Any], user: dict[str, Any], base: Path) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if cluster.get("insecure-skip-tls-verify"):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        authority = _read(cluster, "certificate-authority", base)
        if authority:
            context.load_verify_locations(cadata=authority.decode())
    certificate = _read(user, "client-certificate", base)
    if certificate:
        key = _read(user, "client-key", base)
        # ssl loads a certificate chain from files only; the temporary file is gone once loaded
        with tempfile.NamedTemporaryFile() as pem:
            pem.write(certificate + b"\n" + key)
            pem.flush()
            context.load_cert_chain(pem.name)
    return context


def _token(user: dict[str, Any], base: Path) -> str:
    if user.get("token"):
        return str(user["token"])
    if user.get("tokenFile"):
        return (base / str(user["tokenFile"])).read_text().strip()
    return ""
