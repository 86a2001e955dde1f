"""`apiforge serve --authorization-mode=RBAC` as a real process on SQLite: it starts, is ready, and its
anonymous clients (no authenticator reads credentials in this branch) read /version and /readyz only, as
kube's system:public-info-viewer allows; everything else is kube's 403, which kubectl reports. Restarted, it reconciles
the bootstrap policy it stored the first time and is ready again."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import ServerProcess, free_port


def test_an_anonymous_client_reads_public_info_only(tmp_path: Path) -> None:
    server = ServerProcess(
        tmp_path / "data", free_port(), extra_args=("--authorization-mode", "RBAC")
    )
    server.start()
    try:
        assert httpx.get(f"{server.url}/version").status_code == 200
        assert httpx.get(f"{server.url}/readyz").status_code == 200
        refused = httpx.get(f"{server.url}/api/v1/namespaces")
        assert refused.status_code == 403
        assert refused.json()["message"] == (
            'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API'
            ' group "" at the cluster scope'
        )
        # as against kube, an anonymous kubectl cannot even discover the API (system:discovery is for
        # authenticated users)
        assert httpx.get(f"{server.url}/api").json()["message"] == (
            'forbidden: User "system:anonymous" cannot get path "/api"'
        )
        kubectl = Kubectl(kubectl_binary(33), server.kubeconfig, tmp_path / "cache")
        denied = kubectl.run("get", "namespaces", check=False)
        assert denied.returncode == 1
        assert "Error from server (Forbidden)" in denied.stderr
    finally:
        assert server.stop() == 0
    server.start()
    try:
        assert httpx.get(f"{server.url}/version").status_code == 200
        assert httpx.get(f"{server.url}/api/v1/namespaces").status_code == 403
    finally:
        assert server.stop() == 0
