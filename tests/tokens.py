"""What tests of bearer tokens share: kube's 401 Status, a copy of a server's kubeconfig whose user is a
bearer token and nothing else (no client certificate), as a user given a token writes one, and a client
without credentials of its own."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import yaml

from tests.serverproc import CA_FILE, ServerProcess

UNAUTHORIZED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "Unauthorized",
    "reason": "Unauthorized",
    "code": 401,
}
"""kube's Unauthorized handler: apierrors.NewUnauthorized("Unauthorized"), whatever failed."""


def kubeconfig_with_token(source: Path, token: str, path: Path) -> Path:
    config = yaml.safe_load(source.read_text())
    for user in config["users"]:
        user["user"] = {"token": token}
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    path.chmod(0o600)
    return path


def without_credentials(server: ServerProcess, **options: object) -> httpx.Client:
    """A client that trusts the server (its CA, over TLS) but shows no client certificate: what it sends
    in an Authorization header is all that can authenticate it."""
    verify: ssl.SSLContext | bool = True
    if server.secure:
        verify = ssl.create_default_context(cafile=str(server.data_dir / CA_FILE))
    return httpx.Client(base_url=server.url, verify=verify, **options)  # type: ignore[arg-type]
