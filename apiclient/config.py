"""Where a client connects and as whom, read as client-go's clientcmd reads a kubeconfig (the current context
or a named one; a cluster's server, CA data or file and insecure-skip-tls-verify; a user's client certificate
and key as data or files, bearer token or token file, impersonation), or from a pod's service account as
client-go's rest.InClusterConfig."""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")


class ConfigError(Exception):
    """The kubeconfig or the in-cluster environment does not say how to connect."""


@dataclass(frozen=True)
class Config:
    """A server and the credentials to present to it."""

    server: str
    ssl_context: ssl.SSLContext | None = None
    token: str = ""
    token_file: str = ""
    impersonate_user: str = ""
    impersonate_groups: tuple[str, ...] = ()
    headers: dict[str, str] = field(default_factory=dict)

    def request_headers(self) -> dict[str, str]:
        """The headers every request carries: the bearer token (a token file is read on each request, as
        client-go re-reads a rotated service-account token) and impersonation."""
        headers = dict(self.headers)
        token = Path(self.token_file).read_text().strip() if self.token_file else self.token
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if self.impersonate_user:
            headers["Impersonate-User"] = self.impersonate_user
        return headers

    def impersonation_groups(self) -> list[tuple[str, str]]:
        """``Impersonate-Group`` repeats, once per group."""
        return [("Impersonate-Group", group) for group in self.impersonate_groups]


def load_kubeconfig(path: str | Path | None = None, context: str | None = None) -> Config:
    """The configuration of ``context`` (default: the current one) in the kubeconfig at ``path`` (default:
    the first file of $KUBECONFIG, else ~/.kube/config)."""
    if path is None:
        path = (os.environ.get("KUBECONFIG") or "").split(os.pathsep)[
            0
        ] or Path.home() / ".kube/config"
    source = Path(path)
    try:
        document = yaml.safe_load(source.read_text()) or {}
    except (OSError, yaml.YAMLError) as error:
        raise ConfigError(f"reading kubeconfig {source}: {error}") from None
    name = context or document.get("current-context") or ""
    context_entry = _named(document, "contexts", name, "context")
    cluster = _named(document, "clusters", context_entry.get("cluster", ""), "cluster")
    user = (
        _named(document, "users", context_entry.get("user", ""), "user")
        if context_entry.get("user")
        else {}
    )
    server = cluster.get("server")
    if not server:
        raise ConfigError(
            f"kubeconfig {source}: cluster {context_entry.get('cluster')!r} has no server"
        )
    base = source.parent
    return Config(
        server=str(server).rstrip("/"),
        ssl_context=_ssl_context(cluster, user, base) if str(server).startswith("https") else None,
        token=str(user.get("token") or ""),
        token_file=str(_relative(base, user["tokenFile"])) if user.get("tokenFile") else "",
        impersonate_user=str(user.get("as") or ""),
        impersonate_groups=tuple(user.get("as-groups") or ()),
    )


def in_cluster() -> Config:
    """A pod's configuration: KUBERNETES_SERVICE_HOST and _PORT, the service account's CA and token."""
    host, port = (
        os.environ.get("KUBERNETES_SERVICE_HOST"),
        os.environ.get("KUBERNETES_SERVICE_PORT"),
    )
    if not host or not port:
        raise ConfigError(
            "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and"
            " KUBERNETES_SERVICE_PORT must be defined"
        )
    authority = f"[{host}]" if ":" in host else host
    context = ssl.create_default_context(cafile=str(SERVICE_ACCOUNT / "ca.crt"))
    return Config(f"https://{authority}:{port}", context, token_file=str(SERVICE_ACCOUNT / "token"))


def _named(document: dict[str, Any], section: str, name: str, key: str) -> dict[str, Any]:
    for entry in document.get(section) or ():
        if isinstance(entry, dict) and entry.get("name") == name:
            value = entry.get(key)
            return value if isinstance(value, dict) else {}
    raise ConfigError(f"kubeconfig: no {key} named {name!r}")


def _relative(base: Path, value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path


def _ssl_context(cluster: dict[str, Any], user: dict[str, Any], base: Path) -> ssl.SSLContext:
    if cluster.get("insecure-skip-tls-verify"):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif cluster.get("certificate-authority-data"):
        context = ssl.create_default_context(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
        )
    elif cluster.get("certificate-authority"):
        context = ssl.create_default_context(
            cafile=str(_relative(base, cluster["certificate-authority"]))
        )
    else:
        context = ssl.create_default_context()
    certificate = _pem(user, "client-certificate", base)
    key = _pem(user, "client-key", base)
    if certificate and key:
        # ssl loads a certificate chain from files only: a private temporary file, removed at once
        with tempfile.NamedTemporaryFile("wb", suffix=".pem") as pem:
            os.chmod(pem.name, 0o600)
            pem.write(certificate + b"\n" + key)
            pem.flush()
            context.load_cert_chain(pem.name)
    return context


def _pem(user: dict[str, Any], name: str, base: Path) -> bytes:
    if user.get(f"{name}-data"):
        return base64.b64decode(user[f"{name}-data"])
    if user.get(name):
        return _relative(base, user[name]).read_bytes()
    return b""
