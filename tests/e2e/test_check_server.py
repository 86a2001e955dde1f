"""`apiforge check --kubeconfig` against a running server: the server's CRD is the old revision, and its
stored objects are judged by the new one (pruned fields, schema failures, conversions that lose data), with
real processes: `apiforge serve` holding the CRD and its objects, `apiforge check` reading them."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import ServerProcess, free_port

pytestmark = pytest.mark.timeout(120)

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "maxLength": 20},
                "size": {"type": "integer"},
                "note": {"type": "string"},
            },
        }
    },
}

OLD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gizmos.evo.example.com"},
    "spec": {
        "group": "evo.example.com",
        "names": {
            "plural": "gizmos",
            "singular": "gizmo",
            "kind": "Gizmo",
            "listKind": "GizmoList",
        },
        "scope": "Namespaced",
        "versions": [
            {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": SCHEMA}}
        ],
    },
}


def new_revision() -> dict[str, Any]:
    """v1 drops spec.note and allows names of 5 characters at most; a new v2 has no spec.size, and
    converts as a CRD without a webhook does (pruned to its schema)."""
    crd = copy.deepcopy(OLD)
    v1 = crd["spec"]["versions"][0]
    spec = v1["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    del spec["note"]
    spec["name"]["maxLength"] = 5
    v2 = copy.deepcopy(v1)
    v2.update(name="v2", storage=False)
    del v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"]
    crd["spec"]["versions"].append(v2)
    return crd


def check(server: ServerProcess, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`apiforge check` of the definitions in ``project`` against the server."""
    return subprocess.run(
        [sys.executable, "-m", "apiforge", "check", f"--kubeconfig={server.kubeconfig}", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )


def install_old(server: ServerProcess, tmp_path: Path, crd: dict[str, Any] = OLD) -> None:
    """The old revision's CRD, created and established."""
    assert server.http("POST", CRDS, json=crd).status_code == 201
    Kubectl(kubectl_binary(33), server.kubeconfig, tmp_path / "cache").run(
        "wait", "--for=condition=Established", "--timeout=30s", "crd/gizmos.evo.example.com"
    )


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path / "data", free_port(), storage="memory")
    process.data_dir.mkdir()
    process.start()
    yield process
    process.stop()


@pytest.fixture
def plain_server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A server over plain HTTP where anyone may do anything: reached by its URL alone."""
    process = ServerProcess(
        tmp_path / "plain-data",
        free_port(),
        storage="memory",
        extra_args=("--insecure-serving", "--authorization-mode=AlwaysAllow"),
    )
    process.data_dir.mkdir()
    process.start()
    yield process
    process.stop()


def test_stored_objects_are_judged_by_the_new_revision(
    server: ServerProcess, tmp_path: Path
) -> None:
    install_old(server, tmp_path)
    objects = "/apis/evo.example.com/v1/namespaces/default/gizmos"
    for name, spec in (
        ("fits", {"name": "short", "size": 1}),
        ("long", {"name": "much-too-long", "size": 2, "note": "kept until now"}),
    ):
        body = {
            "apiVersion": "evo.example.com/v1",
            "kind": "Gizmo",
            "metadata": {"name": name},
            "spec": spec,
        }
        assert server.http("POST", objects, json=body).status_code == 201
    definitions = tmp_path / "definitions"
    definitions.mkdir()
    (definitions / "gizmo.yaml").write_text(yaml.safe_dump(new_revision(), sort_keys=False))

    result = check(server, tmp_path, "--format=json")

    assert result.returncode == 1, result.stderr
    found = {
        (f["rule"], f["version"], f["field"], f["message"].split(":")[0])
        for f in json.loads(result.stdout)
    }
    assert ("field-removed", "v1", "spec.note", "spec.note was removed") in found
    assert ("validation-tightened", "v1", "spec.name", "spec.name") in found
    assert ("stored-object-pruned", "v1", "spec.note", "stored default/long") in found
    assert (
        "stored-object-invalid",
        "v1",
        "spec.name",
        "stored default/long fails the new schema",
    ) in found
    # every stored object loses spec.size through v2, which has no such field and no conversion to keep it
    for name in ("fits", "long"):
        assert ("conversion-lossy", "v2", "spec.size", f"stored default/{name}") in found
    assert not any(
        f[3].startswith("stored default/fits") and f[0] != "conversion-lossy" for f in found
    )


def test_a_version_objects_are_stored_in_cannot_be_dropped(
    plain_server: ServerProcess, tmp_path: Path
) -> None:
    """kube-apiserver refuses a CRD without a version of its status.storedVersions; the check says so
    before the CRD is applied. The server is named by --server alone (plain HTTP, anyone may read)."""
    server = plain_server
    install_old(server, tmp_path)
    v2_only = new_revision()
    v2_only["spec"]["versions"] = [{**v2_only["spec"]["versions"][1], "storage": True}]
    definitions = tmp_path / "definitions"
    definitions.mkdir()
    (definitions / "gizmo.yaml").write_text(yaml.safe_dump(v2_only, sort_keys=False))

    result = subprocess.run(
        [sys.executable, "-m", "apiforge", "check", f"--server={server.url}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 1, result.stderr
    assert (
        ': breaking: stored-version-removed: Gizmo.evo.example.com/v1: status.storedVersions[0]: Invalid value: "v1": '
        "missing from spec.versions; v1 was previously a storage version" in result.stdout
    )


NOTE_ONLY = {"type": "object", "properties": {"note": {"type": "string"}}}

HOOKED = """\
group: evo.example.com
kind: Gizmo
versions:
  v1:
    storage: true
    schema:
      spec: {type: object, required: false, properties: {note: {type: string, required: false}}}
  v1alpha1:
    schema:
      spec: {type: object, required: false, properties: {note: {type: string, required: false}}}
    conversion: {toHub: "gizmohooks:to_hub", fromHub: "gizmohooks:from_hub"}
"""
"""The server's Gizmo (its spec holding a note alone) and a new version whose hooks convert it."""

HOOKS = """\
def to_hub(obj):
    return obj


def from_hub(obj):
    if obj.get("spec", {}).get("note") == "unconvertible":
        raise ValueError("a note this hook cannot carry")
    return obj
"""


def test_a_hook_that_raises_on_a_stored_object_is_reported(
    server: ServerProcess, tmp_path: Path
) -> None:
    """The new revision's fromHub hook (imported from the project directory, where `apiforge check` runs)
    raises on one stored object: that object's conversion fails, the other's does not."""
    old = copy.deepcopy(OLD)
    old["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = NOTE_ONLY
    install_old(server, tmp_path, old)
    objects = "/apis/evo.example.com/v1/namespaces/default/gizmos"
    for name, note in (("plain", "fine"), ("odd", "unconvertible")):
        body = {"apiVersion": "evo.example.com/v1", "kind": "Gizmo", "metadata": {"name": name}}
        body["spec"] = {"note": note}
        assert server.http("POST", objects, json=body).status_code == 201
    (tmp_path / "definitions").mkdir()
    (tmp_path / "definitions" / "gizmo.yaml").write_text(HOOKED)
    (tmp_path / "gizmohooks.py").write_text(HOOKS)

    result = check(server, tmp_path, "--format=json")

    assert result.returncode == 1, result.stderr
    # nothing else: the server's CRD does not declare apiVersion, kind and metadata, and the compact
    # definition does, which is no change
    (failed,) = json.loads(result.stdout)
    assert (failed["rule"], failed["severity"], failed["version"]) == (
        "conversion-failed",
        "breaking",
        "v1",
    )
    assert (
        failed["message"]
        == "stored default/odd: v1alpha1: ValueError: a note this hook cannot carry"
    )
