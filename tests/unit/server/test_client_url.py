"""The kubeconfig's server URL for each kind of bind address, as kube-apiserver's loopback client config
chooses it (k8s.io/apiserver/pkg/server/config.go LoopbackHostPort, then net.JoinHostPort)."""

from __future__ import annotations

import pytest

from apiserver.server.cli import client_url


@pytest.mark.parametrize(
    ("bind_address", "url"),
    [
        ("127.0.0.1", "https://127.0.0.1:6443"),
        ("0.0.0.0", "https://127.0.0.1:6443"),  # the wildcard is no address to connect to
        ("::", "https://[::1]:6443"),
        ("::1", "https://[::1]:6443"),  # an IPv6 literal needs brackets in a URL (RFC 3986 §3.2.2)
        ("fd00::2", "https://[fd00::2]:6443"),
        ("fe80::1%eth0", "https://[fe80::1%25eth0]:6443"),  # RFC 6874: the zone's % escaped
        ("10.1.2.3", "https://10.1.2.3:6443"),
        ("apiserver.internal", "https://apiserver.internal:6443"),
    ],
)
def test_client_url(bind_address: str, url: str) -> None:
    assert client_url(bind_address, 6443) == url
