"""The admin kubeconfig written to the data directory once the server listens: the CA that signed the serving
certificate and the admin's client certificate embedded (``*-data``), as kubeadm's admin.conf and k3s's
k3s.yaml carry them, so that the file alone is enough for kubectl and every client library.

A user adds contexts and users of their own to it (the README's Security section does): a restart refreshes only
the entries apiforge names (cluster ``apiforge``, user ``admin``, context ``apiforge``) and keeps the rest, as
``kubectl config set-cluster`` and ``set-credentials`` would."""

from __future__ import annotations

import base64
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

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


CLUSTER: Final = "apiforge"
USER: Final = "admin"
CONTEXT: Final = "apiforge"

log = logging.getLogger(__name__)


def kubeconfig(server_url: str, credentials: Credentials | None = None) -> dict[str, Any]:
    """Without ``credentials`` (plain HTTP), a user with none."""
    cluster: dict[str, Any] = {"server": server_url}
    user: dict[str, Any] = {}
    if credentials is not None:
        if credentials.certificate_authority:
            cluster["certificate-authority-data"] = _data(credentials.certificate_authority)
        user["client-certificate-data"] = _data(credentials.client_certificate)
        user["client-key-data"] = _data(credentials.client_key)
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CLUSTER, "cluster": cluster}],
        "users": [{"name": USER, "user": user}],
        "contexts": [
            {
                "name": CONTEXT,
                "context": {"cluster": CLUSTER, "user": USER, "namespace": "default"},
            }
        ],
        "current-context": CONTEXT,
        "preferences": {},
    }


def kubeconfig_text(server_url: str, credentials: Credentials | None = None) -> str:
    return yaml.safe_dump(kubeconfig(server_url, credentials), sort_keys=False)


def merged(existing: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """``existing`` with apiforge's cluster and user replaced by ``ours`` (added when missing) and its
    context pointed at them (a namespace the user set on it is kept); everything else as it was."""
    config = dict(existing)
    for key in ("clusters", "users", "contexts"):
        entry = ours[key][0]
        entries = existing.get(key)
        entries = list(entries) if isinstance(entries, list) else []
        at = next(
            (
                i
                for i, e in enumerate(entries)
                if isinstance(e, dict) and e.get("name") == entry["name"]
            ),
            None,
        )
        if at is None:
            entries.append(entry)
        elif key == "contexts" and isinstance(entries[at].get("context"), dict):
            entries[at] = {
                **entries[at],
                "context": {
                    **entry["context"],
                    **entries[at]["context"],
                    "cluster": CLUSTER,
                    "user": USER,
                },
            }
        else:
            entries[at] = entry
        config[key] = entries
    if not config.get("current-context"):
        config["current-context"] = CONTEXT
    return config


def _existing(path: Path) -> dict[str, Any] | None:
    """The kubeconfig already at ``path`` as a mapping; None when there is none or it is not one."""
    try:
        config = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        log.warning("%s is not a kubeconfig (%s): writing a new one", path, error)
        return None
    if not isinstance(config, dict):
        log.warning("%s is not a kubeconfig (not a mapping): writing a new one", path)
        return None
    return config


def write_kubeconfig(path: Path, server_url: str, credentials: Credentials | None = None) -> None:
    """Written when missing, otherwise only apiforge's entries refreshed; atomically and private (0600):
    a client reading it never sees half a file."""
    ours = kubeconfig(server_url, credentials)
    existing = _existing(path)
    config = ours if existing is None else merged(existing, ours)
    write_private(path, yaml.safe_dump(config, sort_keys=False).encode())
