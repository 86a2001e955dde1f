"""kubectl scale, then kubectl apply --server-side: the scale is recorded in managedFields as kube records it
(k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager/scalehandler.go: an Update entry with
``subresource: scale`` owning the parent's replicas path, taken from the applier), so the apply that sets
replicas again conflicts (409, kube's message) instead of silently reverting the scale, and
``--force-conflicts`` takes the field back. The same holds for writes through /status."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.test_kubectl import CRONTAB
from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import ServerProcess


@pytest.fixture(scope="module")
def kubectl(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "scale-owners"}}
    assert server.http("POST", "/api/v1/namespaces", json=body).status_code == 201
    cache = tmp_path_factory.mktemp("kubectl-cache")
    yield Kubectl(kubectl_binary(33), server.kubeconfig, cache, "scale-owners")


def managed(kubectl: Kubectl, name: str) -> list[dict[str, Any]]:
    text = kubectl.run("get", "ct", name, "-o", "yaml", "--show-managed-fields").stdout
    entries: list[dict[str, Any]] = yaml.safe_load(text)["metadata"]["managedFields"]
    return entries


def replicas(kubectl: Kubectl, name: str) -> str:
    return kubectl.run("get", "ct", name, "-o", "jsonpath={.spec.replicas}").stdout


def test_scale_then_server_side_apply_conflicts(kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = tmp_path / "ct.yaml"
    manifest.write_text(CRONTAB.format(name="scaled", image="img:1", replicas=2))
    kubectl.run("apply", "--server-side", "-f", str(manifest))
    assert kubectl.run("scale", "ct", "scaled", "--replicas=5").stdout.strip() == (
        "crontab.stable.example.com/scaled scaled"
    )
    entries = {(e["manager"], e.get("subresource", "")): e for e in managed(kubectl, "scaled")}
    scaler = kubectl.binary.name  # kubectl scale names no manager: its User-Agent's first segment
    scale = entries[(scaler, "scale")]
    assert scale["operation"] == "Update"
    assert scale["apiVersion"] == "stable.example.com/v1"
    assert scale["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    # the applier lost the field it no longer decides
    applier = entries[("kubectl", "")]
    assert "f:replicas" not in applier["fieldsV1"]["f:spec"]
    assert applier["operation"] == "Apply"

    refused = kubectl.run("apply", "--server-side", "-f", str(manifest), check=False)
    assert refused.returncode != 0
    assert (
        f'Apply failed with 1 conflict: conflict with "{scaler}" with subresource "scale" using '
        "stable.example.com/v1: .spec.replicas"
    ) in refused.stderr
    assert replicas(kubectl, "scaled") == "5"

    kubectl.run("apply", "--server-side", "--force-conflicts", "-f", str(manifest))
    assert replicas(kubectl, "scaled") == "2"
    owners = {(e["manager"], e.get("subresource", "")) for e in managed(kubectl, "scaled")}
    assert (scaler, "scale") not in owners  # its only field was taken back


def test_apply_without_replicas_keeps_the_scale(kubectl: Kubectl, tmp_path: Path) -> None:
    """An applier that drops replicas after a scale does not own them any more: the scale stays."""
    manifest = tmp_path / "ct.yaml"
    manifest.write_text(CRONTAB.format(name="dropped", image="img:1", replicas=2))
    kubectl.run("apply", "--server-side", "-f", str(manifest))
    kubectl.run("scale", "ct", "dropped", "--replicas=7")
    without = yaml.safe_load(CRONTAB.format(name="dropped", image="img:1", replicas=2))
    del without["spec"]["replicas"]
    manifest.write_text(yaml.safe_dump(without))
    kubectl.run("apply", "--server-side", "-f", str(manifest))
    assert replicas(kubectl, "dropped") == "7"


def test_scale_to_the_same_replicas_takes_nothing(kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = tmp_path / "ct.yaml"
    manifest.write_text(CRONTAB.format(name="same", image="img:1", replicas=2))
    kubectl.run("apply", "--server-side", "-f", str(manifest))
    kubectl.run("scale", "ct", "same", "--replicas=2")
    owners = {(e["manager"], e.get("subresource", "")) for e in managed(kubectl, "same")}
    assert owners == {("kubectl", "")}
    kubectl.run("apply", "--server-side", "-f", str(manifest))


def test_status_writes_are_owned_with_subresource_status(kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = tmp_path / "ct.yaml"
    manifest.write_text(CRONTAB.format(name="status", image="img:1", replicas=2))
    kubectl.run("apply", "--server-side", "-f", str(manifest))
    kubectl.run(
        "patch", "ct", "status", "--subresource=status", "--type=merge",
        "-p", '{"status": {"replicas": 3}}', "--field-manager=controller",
    )  # fmt: skip
    entries = {(e["manager"], e.get("subresource", "")): e for e in managed(kubectl, "status")}
    status = entries[("controller", "status")]
    assert status["operation"] == "Update"
    assert status["fieldsV1"] == {"f:status": {".": {}, "f:replicas": {}}}
