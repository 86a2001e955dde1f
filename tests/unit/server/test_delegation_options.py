"""The extension-server options read their files before the server serves: a kubeconfig that cannot be
read, or half of the proxy certificate pair, stops the server at start with the flag named."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiserver.server.delegation_options import DelegationError, DelegationOptions


def test_a_kubeconfig_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    options = DelegationOptions(authorization_kubeconfig=str(tmp_path / "missing"))
    with pytest.raises(DelegationError, match="--authorization-kubeconfig: invalid kubeconfig"):
        options.check()


def test_a_kubeconfig_without_a_server_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text("apiVersion: v1\nkind: Config\ncontexts: []\nclusters: []\nusers: []\n")
    with pytest.raises(DelegationError, match="--authentication-kubeconfig"):
        DelegationOptions(authentication_kubeconfig=str(config)).check()


def test_the_proxy_certificate_needs_its_key() -> None:
    with pytest.raises(DelegationError, match="must be given together"):
        DelegationOptions(proxy_client_cert_file="proxy.crt").check()


def test_the_proxy_certificate_defaults_to_the_pkis_front_proxy_client(tmp_path: Path) -> None:
    assert DelegationOptions().proxy_client_cert(tmp_path) == (
        tmp_path / "front-proxy-client.crt",
        tmp_path / "front-proxy-client.key",
    )
    assert DelegationOptions().proxy_client_cert(None) is None
