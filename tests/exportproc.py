"""`apiforge export crds` and `apiforge conversion-webhook` as the export tests run them: the CLI in a
subprocess, the webhook's certificate (issued for ``<service>.<namespace>.svc``, the name kube verifies), the
webhook process, and the ExternalName Service that leads the exported CRDs' Service reference to it on this
machine. kube-apiserver resolves a webhook's Service by its ClusterIPServiceResolver, which sends an
ExternalName Service to its DNS name (staging/src/k8s.io/apiserver/pkg/util/proxy/proxy.go, ResolveCluster);
apiforge does the same, so both servers take the CRDs exactly as exported."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests import certs
from tests.kubectl import Kubectl
from tests.serverproc import REPO, free_port

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
ENV = {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
"""The convert project's hooks are tests.convertproject.hooks: importable from this repository's root."""


def apiforge(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """Run the apiforge CLI; it must succeed."""
    result = subprocess.run(
        [sys.executable, "-m", "apiforge", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **ENV},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result


@dataclass(frozen=True)
class WebhookTLS:
    """The webhook's serving certificate and key, and the CA that signed them (the CRDs' caBundle)."""

    certificate: Path
    key: Path
    ca_file: Path


def webhook_tls(directory: Path, *service_names: str) -> WebhookTLS:
    """A CA and a certificate for 127.0.0.1 and each ``<service>.<namespace>.svc`` name, written under
    ``directory``."""
    authority = certs.ca("conversion-ca")
    pair = certs.serving(authority, "127.0.0.1", service_names)
    certificate, key = pair.write(directory, "serving")
    ca_file = directory / "ca.crt"
    ca_file.write_text(authority.pem)
    return WebhookTLS(certificate, key, ca_file)


def trusting(ca_file: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca_file))


@contextmanager
def running_webhook(project: Path, tls: WebhookTLS) -> Iterator[int]:
    """`apiforge conversion-webhook` of ``project``, up (its /healthz answers); yields its port, and checks
    that it stops cleanly."""
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "apiforge",
            "conversion-webhook",
            f"--tls-cert-file={tls.certificate}",
            f"--tls-private-key-file={tls.key}",
            "--bind-address=127.0.0.1",
            f"--port={port}",
        ],
        cwd=project,
        env={**os.environ, **ENV},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    try:
        # it says where it serves once the socket listens
        assert "serving conversion webhook on" in process.stdout.readline()
        with httpx.Client(verify=trusting(tls.ca_file)) as http:
            assert http.get(f"https://127.0.0.1:{port}/healthz").text == "ok\n"
        yield port
    finally:
        process.terminate()
        code = process.wait(timeout=10)
        process.stdout.close()
    assert code == 0


def export(
    definitions: Path, out: Path, service: str, namespace: str, port: int, ca_file: Path
) -> list[Path]:
    """The CRD files `apiforge export crds` writes (as docs/export.md runs it), the webhook named by its
    Service."""
    apiforge(
        "export",
        "crds",
        f"--definitions={definitions}",
        f"--out={out}",
        f"--webhook-namespace={namespace}",
        f"--webhook-service={service}",
        f"--webhook-port={port}",
        f"--ca-bundle={ca_file}",
    )
    return sorted(out.glob("*_*.yaml"))


def external_name_service(name: str, namespace: str) -> dict[str, Any]:
    """A Service naming localhost: where a Service reference leads on a machine without a cluster network."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"type": "ExternalName", "externalName": "localhost"},
    }


def crd_name(file: Path) -> str:
    name: str = yaml.safe_load(file.read_text())["metadata"]["name"]
    return name


def established(tool: Kubectl, files: list[Path]) -> None:
    """kubectl waits until each CRD of ``files`` is Established."""
    names = [f"crd/{crd_name(f)}" for f in files]
    tool.run("wait", "--for=condition=Established", "--timeout=60s", *names)


def assert_unchanged(http: httpx.Client, files: list[Path]) -> None:
    """Each CRD stored as exported: nothing the server had to default, drop or rewrite."""
    for file in files:
        sent = yaml.safe_load(file.read_text())
        stored = http.get(f"{CRD_PATH}/{sent['metadata']['name']}").json()
        assert stored["spec"] == sent["spec"], file.name
