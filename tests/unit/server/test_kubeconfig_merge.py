"""A restart refreshes only apiforge's own entries of DATA_DIR/admin.kubeconfig (cluster ``apiforge``, user
``admin``, context ``apiforge``): the contexts and users the README's Security section has a user add, and the
context they chose, survive; the file stays 0600. kubectl reads the result (``kubectl config view``)."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from apiserver.server.kubeconfig import Credentials, write_kubeconfig
from tests.kubectl import kubectl_binary

OLD = Credentials(b"old-ca", b"old-cert", b"old-key")
NEW = Credentials(b"new-ca", b"new-cert", b"new-key")


def named(config: dict[str, Any], key: str) -> dict[str, Any]:
    return {entry["name"]: entry for entry in config[key]}


def read(path: Path) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load(path.read_text())
    return config


def add_users_own(path: Path) -> None:
    """What `kubectl config set-credentials jane ... && set-context jane ... && use-context jane` writes."""
    config = read(path)
    config["users"].append({"name": "jane", "user": {"token": "jane-token"}})
    config["contexts"].append(
        {"name": "jane", "context": {"cluster": "apiforge", "user": "jane", "namespace": "team"}}
    )
    config["clusters"].append({"name": "elsewhere", "cluster": {"server": "https://10.0.0.1:6443"}})
    config["contexts"][0]["context"]["namespace"] = "mine"  # set-context apiforge --namespace mine
    config["current-context"] = "jane"
    path.write_text(yaml.safe_dump(config))


def test_a_missing_kubeconfig_is_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "admin.kubeconfig"
    write_kubeconfig(path, "https://127.0.0.1:6443", OLD)
    config = read(path)
    assert config["current-context"] == "apiforge"
    assert list(named(config, "clusters")) == ["apiforge"] and list(named(config, "users")) == [
        "admin"
    ]


@pytest.mark.usefixtures("open_umask")
def test_a_restart_refreshes_only_its_own_entries(tmp_path: Path) -> None:
    path = tmp_path / "admin.kubeconfig"
    write_kubeconfig(path, "https://127.0.0.1:6443", OLD)
    add_users_own(path)
    path.chmod(0o644)
    write_kubeconfig(path, "https://127.0.0.1:7443", NEW)  # a restart on another port, a renewed CA
    config = read(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    clusters, users, contexts = (named(config, key) for key in ("clusters", "users", "contexts"))
    assert clusters["apiforge"]["cluster"] == {
        "server": "https://127.0.0.1:7443",
        "certificate-authority-data": "bmV3LWNh",
    }
    assert users["admin"]["user"] == {
        "client-certificate-data": "bmV3LWNlcnQ=",
        "client-key-data": "bmV3LWtleQ==",
    }
    assert clusters["elsewhere"] == {
        "name": "elsewhere",
        "cluster": {"server": "https://10.0.0.1:6443"},
    }
    assert users["jane"] == {"name": "jane", "user": {"token": "jane-token"}}
    assert contexts["jane"]["context"] == {
        "cluster": "apiforge",
        "user": "jane",
        "namespace": "team",
    }
    assert contexts["apiforge"]["context"] == {
        "cluster": "apiforge",
        "user": "admin",
        "namespace": "mine",
    }
    assert config["current-context"] == "jane"


def test_a_context_named_apiforge_is_pointed_back_at_apiforge(tmp_path: Path) -> None:
    path = tmp_path / "admin.kubeconfig"
    write_kubeconfig(path, "https://127.0.0.1:6443", OLD)
    config = read(path)
    config["contexts"][0]["context"].update(cluster="elsewhere", user="jane")
    del config["current-context"]
    path.write_text(yaml.safe_dump(config))
    write_kubeconfig(path, "https://127.0.0.1:6443", OLD)
    config = read(path)
    assert named(config, "contexts")["apiforge"]["context"]["cluster"] == "apiforge"
    assert named(config, "contexts")["apiforge"]["context"]["user"] == "admin"
    assert config["current-context"] == "apiforge"


@pytest.mark.parametrize("text", ["", "not: [valid", "- a list\n", "\xff"])
def test_a_file_that_is_no_kubeconfig_is_replaced(tmp_path: Path, text: str) -> None:
    path = tmp_path / "admin.kubeconfig"
    path.write_bytes(text.encode("latin-1"))
    write_kubeconfig(path, "https://127.0.0.1:6443", OLD)
    assert list(named(read(path), "users")) == ["admin"]


def test_kubectl_reads_the_merged_file(tmp_path: Path) -> None:
    path = tmp_path / "admin.kubeconfig"
    write_kubeconfig(path, "https://127.0.0.1:6443", OLD)
    add_users_own(path)
    write_kubeconfig(path, "https://127.0.0.1:6443", NEW)
    view = subprocess.run(
        [kubectl_binary(33), "--kubeconfig", str(path), "config", "get-contexts", "-o", "name"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert view.stdout.split() == ["apiforge", "jane"]
