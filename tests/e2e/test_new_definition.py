"""Dropping a definition file (a real CRD, or the compact format) into definitions/ and running generate is all
it takes for the server to serve the new kind — checked with kubectl against a freshly generated server."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.pipeline import GenerateConfig, generate
from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import FIXTURES, ServerProcess, free_port
from tests.shipped import copy_shipped_definitions

GATEWAY_CLASSES = FIXTURES / "crds" / "gateway.networking.k8s.io_gatewayclasses.yaml"
COMPACT = """\
group: tools.example.com
kind: Gadget
shortNames: [gd]
versions:
  v1:
    storage: true
    schema:
      spec:
        color:
          type: string
          enum: [red, blue]
          default: red
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    copy_shipped_definitions(root / "definitions")
    shutil.copy(GATEWAY_CLASSES, root / "definitions" / GATEWAY_CLASSES.name)
    (
        root / "definitions" / "tools.example.com"
    ).mkdir()  # the README's example, as a user would add it
    (root / "definitions" / "tools.example.com" / "gadget.yaml").write_text(COMPACT)
    generate(GenerateConfig(root / "definitions", root / "generated"))
    return root


@pytest.fixture(scope="module")
def kubectl(project: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    # run from the project: its freshly generated package shadows the repository's
    server = ServerProcess(tmp_path_factory.mktemp("data"), free_port(), cwd=project)
    server.start()
    yield Kubectl(kubectl_binary(32), server.kubeconfig, tmp_path_factory.mktemp("cache"))
    server.stop()


def test_new_kinds_are_discovered(kubectl: Kubectl) -> None:
    rows = [line.split() for line in kubectl.run("api-resources").stdout.splitlines()]
    assert ["gatewayclasses", "gc", "gateway.networking.k8s.io/v1", "false", "GatewayClass"] in rows
    assert ["gadgets", "gd", "tools.example.com/v1", "true", "Gadget"] in rows


def test_real_crd_resource_round_trips(kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = tmp_path / "gatewayclass.yaml"
    manifest.write_text(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata:\n  name: example\n"
        "spec:\n  controllerName: acme.io/gateway-controller\n"
    )
    applied = kubectl.run("apply", "-f", str(manifest)).stdout
    assert applied == "gatewayclass.gateway.networking.k8s.io/example created\n"
    output = kubectl.run(
        "get", "gatewayclass", "example", "-o", "jsonpath={.spec.controllerName}"
    ).stdout
    assert output == "acme.io/gateway-controller"
    invalid = manifest.read_text().replace("acme.io/gateway-controller", "not a domain path")
    manifest.write_text(invalid.replace("name: example", "name: broken"))
    result = kubectl.run("create", "-f", str(manifest), check=False)
    assert result.returncode == 1 and "spec.controllerName" in result.stderr


def test_compact_definition_defaults_apply(kubectl: Kubectl) -> None:
    kubectl.run(
        "create",
        "-f",
        "-",
        stdin="apiVersion: tools.example.com/v1\nkind: Gadget\nmetadata:\n  name: g1\nspec: {}\n",
    )
    assert kubectl.run("get", "gd", "g1", "-o", "jsonpath={.spec.color}").stdout == "red"
