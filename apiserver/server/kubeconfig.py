"""The admin kubeconfig written to the data directory once the server listens."""

from __future__ import annotations

import os
from pathlib import Path

import yaml


def kubeconfig_text(server_url: str) -> str:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "apiforge", "cluster": {"server": server_url}}],
        # no credentials over plain HTTP (anonymous): a token no authenticator knows is refused (401)
        "users": [{"name": "admin", "user": {}}],
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


def write_kubeconfig(path: Path, server_url: str) -> None:
    """Written atomically and private (0600): a client reading it never sees half a file."""
    temporary = path.with_suffix(".tmp")
    # created 0600, never readable by others even for a moment, whatever the umask
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(kubeconfig_text(server_url))
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)
