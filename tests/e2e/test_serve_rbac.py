"""`apiforge serve --authorization-mode=RBAC` as a real process on SQLite: it starts, is ready, and its
anonymous clients (over TLS, with no client certificate) read /version and /readyz only, as kube's
system:public-info-viewer allows; everything else is kube's 403, while the admin of the written kubeconfig
(system:masters) reads. Restarted, it reconciles the bootstrap policy it stored the first time and is ready
again."""

from __future__ import annotations

from pathlib import Path

from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import ServerProcess, free_port


def test_an_anonymous_client_reads_public_info_only(tmp_path: Path) -> None:
    server = ServerProcess(
        tmp_path / "data", free_port(), extra_args=("--authorization-mode", "RBAC")
    )
    server.start()
    try:
        with server.anonymous_client() as anonymous:
            assert anonymous.get("/version").status_code == 200
            assert anonymous.get("/readyz").status_code == 200
            refused = anonymous.get("/api/v1/namespaces")
            assert refused.status_code == 403
            assert refused.json()["message"] == (
                'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in'
                ' API group "" at the cluster scope'
            )
            # as against kube, an anonymous client cannot even discover the API (system:discovery is
            # for authenticated users)
            assert anonymous.get("/api").json()["message"] == (
                'forbidden: User "system:anonymous" cannot get path "/api"'
            )
        kubectl = Kubectl(kubectl_binary(33), server.kubeconfig, tmp_path / "cache")
        assert "default" in kubectl.run("get", "namespaces").stdout
    finally:
        assert server.stop() == 0
    server.start()
    try:
        with server.anonymous_client() as anonymous:
            assert anonymous.get("/version").status_code == 200
            assert anonymous.get("/api/v1/namespaces").status_code == 403
    finally:
        assert server.stop() == 0
