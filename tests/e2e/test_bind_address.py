"""A server bound to an IPv6 loopback or to the IPv4 wildcard writes a kubeconfig kubectl can use: the URL
has brackets around an IPv6 address and a wildcard becomes the loopback (it was http://::1:PORT, which
no client parses, and http://0.0.0.0:PORT), and the serving certificate names it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import ServerProcess, free_port


@pytest.mark.parametrize(
    ("bind_address", "host"), [("::1", "[::1]"), ("0.0.0.0", "127.0.0.1")], ids=["ipv6", "wildcard"]
)
def test_kubectl_reaches_the_server_through_its_kubeconfig(
    tmp_path: Path, bind_address: str, host: str
) -> None:
    server = ServerProcess(tmp_path / "server", free_port(), bind_address=bind_address)
    server.data_dir.mkdir()
    server.start()
    try:
        config = yaml.safe_load(server.kubeconfig.read_text())
        assert config["clusters"][0]["cluster"]["server"] == f"https://{host}:{server.port}"
        kubectl = Kubectl(kubectl_binary(33), server.kubeconfig, tmp_path / "cache")
        names = kubectl.run("get", "namespaces", "-o", "name").stdout.split()
        assert "namespace/default" in names
    finally:
        server.stop()
