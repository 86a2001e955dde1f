"""The admin kubeconfig written to the data directory once the server listens: the CA that signed the serving
certificate and the admin's client certificate embedded (``*-data``), as kubeadm's admin.conf and k3s's
k3s.yaml carry them, so that the file alone is enough for kubectl and every client library."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from apiserver.server.private import write_private


@dataclass(frozen=True, slots=True)
class Credentials:
    """PEM: the CA clients trust the server by (empty: the system's trust store, for a serving
    certificate of the user's own), the admin's certificate and key."""

    certificate_authority: bytes
    client_certificate: bytes
    client_key: bytes


def _data(pem: bytes) -> str:
    return base64.b64encode(pem).decode()


def kubeconfig_text(server_url: str, credentials: Credentials | None = None) -> str:
    """Without ``credentials`` (plain HTTP), a user with none."""
    cluster: dict[str, Any] = {"server": server_url}
    user: dict[str, Any] = {}
    if credentials is not None:
        if credentials.certificate_authority:
            cluster["certificate-authority-data"] = _data(credentials.certificate_authority)
        user["client-certificate-data"] = _data(credentials.client_certificate)
        user["client-key-data"] = _data(credentials.client_key)
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "apiforge", "cluster": cluster}],
        "users": [{"name": "admin", "user": user}],
        "contexts": [
            {
                "name": "apiforge",
                "context": {"cluster": "apiforge", "user": "admin", "namespace": "default"},
            }
        ],
        "current-context": "apiforge",
        "preferences": {},
    }
    return yaml.safe_dump(config, sort_keys=False)


def write_kubeconfig(path: Path, server_url: str, credentials: Credentials | None = None) -> None:
    """Written atomically and private (0600): a client reading it never sees half a file."""
    write_private(path, kubeconfig_text(server_url, credentials).encode())
