"""Start the oracle: etcd, kube-apiserver and kube-controller-manager on loopback ports of their own, over a
temporary data directory, with apiforge's defaults where kube has a choice (RBAC authorization, the
service-account issuer, the service cluster IP range), and stop them cleanly. The admin kubeconfig is written
to ``<data dir>/admin.kubeconfig``, as `apiforge serve` writes its own."""

from __future__ import annotations

import shutil
import signal
import ssl
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from apiserver.authentication.jwtkeys import DEFAULT_ISSUER
from oracle.binaries import binary
from oracle.pki import OraclePKI, make_pki
from tests.etcdproc import EtcdProcess
from tests.serverproc import free_port, kubeconfig_tls

READY_TIMEOUT = 120.0
"""kube-apiserver's post-start hooks (RBAC bootstrap, priority levels) take 5-20 s on a loaded 2-core box."""
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
"""apiforge's default --service-cluster-ip-range, so that the `kubernetes` Service gets the same address."""


@dataclass
class KubeCluster:
    """A running oracle; ``url`` and ``kubeconfig`` answer once ``start`` returns."""

    data_dir: Path
    port: int = 0
    etcd: EtcdProcess | None = None
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    _tls: ssl.SSLContext | None = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "admin.kubeconfig"

    def client(self, **options: object) -> httpx.Client:
        """An httpx client as the admin (the kubeconfig's CA and client certificate)."""
        return httpx.Client(base_url=self.url, verify=self._tls or True, **options)  # type: ignore[arg-type]

    def ssl_context(self) -> ssl.SSLContext | None:
        return self._tls

    def start(self) -> float:
        """Start etcd, then the apiserver (until /readyz), then the controller manager; seconds to ready."""
        started = time.monotonic()
        pki = make_pki(self.data_dir)
        self.etcd = EtcdProcess(self.data_dir / "etcd")
        self.etcd.start()
        self.port = free_port()
        pki.write_kubeconfig(self.kubeconfig, self.url)
        self._tls = kubeconfig_tls(self.kubeconfig)
        self._spawn("kube-apiserver", self._apiserver_args(pki))
        self._wait_ready(started)
        self._spawn("kube-controller-manager", self._controller_manager_args(pki))
        return time.monotonic() - started

    def stop(self) -> None:
        """SIGTERM each process, the controller manager first; SIGKILL what lingers 20 s."""
        for name in ("kube-controller-manager", "kube-apiserver"):
            process = self.processes.pop(name, None)
            if process is None or process.poll() is not None:
                continue
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self.etcd is not None:
            self.etcd.stop()
            self.etcd = None

    def log(self, name: str) -> Path:
        return self.data_dir / f"{name}.log"

    def _spawn(self, name: str, args: list[str]) -> None:
        with self.log(name).open("ab") as log:
            self.processes[name] = subprocess.Popen(
                [str(binary(name)), *args], stdout=log, stderr=subprocess.STDOUT
            )

    def _wait_ready(self, started: float) -> None:
        process = self.processes["kube-apiserver"]
        with self.client(timeout=2) as client:
            while time.monotonic() - started < READY_TIMEOUT:
                if process.poll() is not None:
                    tail = self.log("kube-apiserver").read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"kube-apiserver exited with {process.returncode}:\n{tail}")
                try:
                    if client.get("/readyz").status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("kube-apiserver did not become ready")

    def _apiserver_args(self, pki: OraclePKI) -> list[str]:
        assert self.etcd is not None
        # the recorded scenarios never load the server, and without priority and fairness kube's answers
        # carry no X-Kubernetes-PF-* headers naming the uids of its FlowSchema objects
        return [
            *apiserver_args(pki, self.data_dir, self.port, self.etcd.url),
            "--enable-priority-and-fairness=false",
        ]

    def _controller_manager_args(self, pki: OraclePKI) -> list[str]:
        return [
            f"--kubeconfig={self.kubeconfig}",
            f"--authentication-kubeconfig={self.kubeconfig}",
            f"--authorization-kubeconfig={self.kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={free_port()}",
            f"--cert-dir={self.data_dir / 'kcm-certs'}",
            f"--service-account-private-key-file={pki.service_account_key}",
            f"--root-ca-file={pki.pki.ca_file}",
            "--use-service-account-credentials=true",
            "--leader-elect=false",
            f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
        ]


def apiserver_args(pki: OraclePKI, data_dir: Path, port: int, etcd_url: str) -> list[str]:
    """kube-apiserver's flags for the oracle's PKI: loopback only, RBAC, the token file, the service-account
    keys and apiforge's service cluster IP range; its other settings are kube's defaults."""
    files = pki.pki
    return [
        f"--etcd-servers={etcd_url}",
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        f"--secure-port={port}",
        f"--cert-dir={data_dir / 'certs'}",
        f"--tls-cert-file={files.serving_cert_file}",
        f"--tls-private-key-file={files.serving_key_file}",
        f"--client-ca-file={files.ca_file}",
        f"--token-auth-file={pki.token_file}",
        f"--service-account-issuer={DEFAULT_ISSUER}",
        f"--service-account-key-file={pki.service_account_key}",
        f"--service-account-signing-key-file={pki.service_account_key}",
        f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
        "--authorization-mode=RBAC",
        # what apiforge serves beyond kube's defaults: the beta MutatingAdmissionPolicy and its binding
        "--feature-gates=MutatingAdmissionPolicy=true",
        "--runtime-config="
        + ",".join(
            f"{resource}=true"
            for resource in (
                "admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies",
                "admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicybindings",
            )
        ),
        f"--requestheader-client-ca-file={files.directory / 'front-proxy-ca.crt'}",
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        f"--proxy-client-cert-file={files.directory / 'front-proxy-client.crt'}",
        f"--proxy-client-key-file={files.directory / 'front-proxy-client.key'}",
    ]


@contextmanager
def running_cluster(data_dir: Path | None = None) -> Iterator[KubeCluster]:
    """A started oracle over ``data_dir`` (a temporary directory, removed afterwards, when None)."""
    temporary = data_dir is None
    directory = Path(tempfile.mkdtemp(prefix="apiforge-oracle-")) if data_dir is None else data_dir
    cluster = KubeCluster(directory)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        if temporary:
            shutil.rmtree(directory, ignore_errors=True)
