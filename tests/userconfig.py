"""Kubeconfigs for users other than the admin, as an operator makes them: a client certificate signed with the
data directory's CA (DATA_DIR/pki/ca.crt and ca.key) put in a copy of the written admin.kubeconfig, as
`kubectl config set-credentials --embed-certs` writes it."""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from tests import certs
from tests.serverproc import ServerProcess


def server_ca(server: ServerProcess) -> certs.Pair:
    """The CA the server made, as its operator signs users with it (DATA_DIR/pki/ca.crt and ca.key)."""
    return certs.load(server.data_dir / "pki" / "ca.crt", server.data_dir / "pki" / "ca.key")


def user_kubeconfig(
    server: ServerProcess, path: Path, user: certs.Pair, *chain: certs.Pair
) -> Path:
    """The admin kubeconfig with its user swapped for ``user`` (and ``chain`` after it), as `kubectl
    config set-credentials --embed-certs` writes it."""
    config = yaml.safe_load(server.kubeconfig.read_text())
    certificate = (user.pem + "".join(link.pem for link in chain)).encode()
    config["users"] = [
        {
            "name": "admin",
            "user": {
                "client-certificate-data": base64.b64encode(certificate).decode(),
                "client-key-data": base64.b64encode(user.key_pem).decode(),
            },
        }
    ]
    path.write_text(yaml.safe_dump(config))
    return path
