"""kubectl's everyday writes through a deprecated version whose fields the hub keeps nested:
tests/convertproject's Order, whose v1 has spec.customerName and spec.city where the hub v2 has
spec.customer.name and spec.customer.address.city. Read in v1, an object once carried a leftover
``customer: {}``, so every later write through v1 failed with ``strict decoding error: unknown field
"spec.customer"``; here create, re-apply (client- and server-side), edit and replace all succeed, with kubectl
1.27 and 1.33, and the hub object is right after each."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.convertproject import generate_project
from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import REPO, ServerProcess, free_port

ORDER_V1 = """\
apiVersion: moves.example.com/v1
kind: Order
metadata:
  name: {name}
spec:
  customerName: {customer}
  city: {city}
  total: {total}
"""
HUB = "orders.v2.moves.example.com"
V1 = "orders.v1.moves.example.com"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    # run from the project: its freshly generated package shadows the repository's
    project = generate_project(tmp_path_factory.mktemp("convertproject"))
    process = ServerProcess(tmp_path_factory.mktemp("data"), free_port(), cwd=project)
    # the project's hooks are tests.convertproject.hooks: importable from this repository's root
    process.start(
        extra_env={
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
        }
    )
    yield process
    process.stop()


@pytest.fixture(scope="module", params=[27, 33], ids=lambda minor: f"kubectl-1.{minor}")
def kubectl(
    request: pytest.FixtureRequest, server: ServerProcess, tmp_path_factory: pytest.TempPathFactory
) -> Kubectl:
    namespace = f"moves-1-{request.param}"
    binary = kubectl_binary(request.param)
    Kubectl(binary, server.kubeconfig, tmp_path_factory.mktemp("cache")).run(
        "create", "namespace", namespace
    )
    return Kubectl(binary, server.kubeconfig, tmp_path_factory.mktemp("cache"), namespace)


def manifest(tmp_path: Path, name: str, customer: str, city: str, total: int) -> str:
    path = tmp_path / f"{name}-{total}.yaml"
    path.write_text(ORDER_V1.format(name=name, customer=customer, city=city, total=total))
    return str(path)


def spec(kubectl: Kubectl, resource: str, name: str) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(kubectl.run("get", resource, name, "-o", "json").stdout)
    result: dict[str, Any] = obj["spec"]
    return result


def hub_spec(customer: str, city: str, total: int) -> dict[str, Any]:
    return {"customer": {"name": customer, "address": {"city": city}}, "total": total}


def test_client_side_apply_twice(kubectl: Kubectl, tmp_path: Path) -> None:
    created = kubectl.run("apply", "-f", manifest(tmp_path, "csa", "Ada", "Paris", 1))
    assert "order.moves.example.com/csa created" in created.stdout
    assert "moves.example.com/v1 Order is deprecated" in created.stderr
    assert spec(kubectl, V1, "csa") == {"customerName": "Ada", "city": "Paris", "total": 1}
    configured = kubectl.run("apply", "-f", manifest(tmp_path, "csa", "Ada", "Lyon", 2))
    assert "order.moves.example.com/csa configured" in configured.stdout
    assert spec(kubectl, HUB, "csa") == hub_spec("Ada", "Lyon", 2)


def test_server_side_apply_twice(kubectl: Kubectl, tmp_path: Path) -> None:
    kubectl.run("apply", "--server-side", "-f", manifest(tmp_path, "ssa", "Bo", "Oslo", 1))
    applied = kubectl.run(
        "apply", "--server-side", "-f", manifest(tmp_path, "ssa", "Cy", "Oslo", 5)
    )
    assert "order.moves.example.com/ssa serverside-applied" in applied.stdout
    assert spec(kubectl, HUB, "ssa") == hub_spec("Cy", "Oslo", 5)
    assert spec(kubectl, V1, "ssa") == {"customerName": "Cy", "city": "Oslo", "total": 5}


def test_edit(kubectl: Kubectl, tmp_path: Path) -> None:
    kubectl.run("create", "-f", manifest(tmp_path, "edited", "Di", "Rome", 1))
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/city: Rome/city: Turin/' \"$1\"\n")
    editor.chmod(0o755)
    edited = kubectl.run("edit", V1, "edited", env={"KUBE_EDITOR": str(editor)})
    assert edited.stdout.strip() == "order.moves.example.com/edited edited"
    assert spec(kubectl, HUB, "edited") == hub_spec("Di", "Turin", 1)


def test_replace_what_was_read(kubectl: Kubectl, tmp_path: Path) -> None:
    kubectl.run("create", "-f", manifest(tmp_path, "replaced", "Ed", "Nice", 1))
    read = yaml.safe_load(kubectl.run("get", V1, "replaced", "-o", "yaml").stdout)
    assert "customer" not in read["spec"]
    read["spec"]["total"] = 9
    path = tmp_path / "replace.yaml"
    path.write_text(yaml.safe_dump(read))
    replaced = kubectl.run("replace", "-f", str(path))
    assert replaced.stdout.strip() == "order.moves.example.com/replaced replaced"
    assert spec(kubectl, HUB, "replaced") == hub_spec("Ed", "Nice", 9)
