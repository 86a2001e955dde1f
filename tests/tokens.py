"""What tests of bearer tokens share: kube's 401 Status, and a copy of a server's kubeconfig whose user is a
bearer token and nothing else (no client certificate), as a user given a token writes one."""

from __future__ import annotations

from pathlib import Path

import yaml

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
