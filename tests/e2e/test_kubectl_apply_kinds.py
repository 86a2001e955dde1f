"""`kubectl apply` (client-side, kubectl's default) twice with a change, for every shipped kind a client may
patch: the second apply sends a strategic merge patch, which kube-apiserver takes for all its compiled types
(the merge keys of k8s.io/api's Go tags) and refuses only for custom resources (415, after which kubectl
sends a JSON merge patch). The table must cover every patchable resource discovery lists."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kindsamples import CASES, NAMESPACE, Case, manifest
from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import ServerProcess
from tests.shipped import assert_status, user_added_resources


@pytest.fixture(scope="module")
def kubectl(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    assert server.http("POST", "/api/v1/namespaces", json=body).status_code == 201
    yield Kubectl(
        kubectl_binary(33), server.kubeconfig, tmp_path_factory.mktemp("cache"), NAMESPACE
    )


def _patchable(server: ServerProcess) -> set[str]:
    """Every top-level resource discovery says takes patch, named plural.group (plural for the core group)."""
    groups = [("", "/api/v1")]
    for group in server.http("GET", "/apis").json()["groups"]:
        groups += [(group["name"], f"/apis/{v['groupVersion']}") for v in group["versions"]]
    names = set()
    for group, path in groups:
        for resource in server.http("GET", path).json()["resources"]:
            if "/" not in resource["name"] and "patch" in resource["verbs"]:
                names.add(f"{resource['name']}.{group}" if group else resource["name"])
    return names


def test_the_table_covers_every_patchable_resource(server: ServerProcess) -> None:
    assert _patchable(server) - user_added_resources() == {case.resource for case in CASES}


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.resource)
def test_apply_twice_with_a_change(kubectl: Kubectl, tmp_path: Path, case: Case) -> None:
    path = tmp_path / "manifest.yaml"
    for value in ("first", "second"):
        path.write_text(manifest(case, value))
        verb = "created" if value == "first" else "configured"
        output = kubectl.run("apply", "-f", str(path)).stdout
        assert output.rstrip().endswith(verb), output
    read = kubectl.run("get", "-f", str(path), "-o", f"jsonpath={case.path}").stdout
    assert read == ("c2Vjb25k" if case.resource == "secrets" else "second")  # base64 of "second"
    applied = json.loads(kubectl.run("get", "-f", str(path), "-o", "json").stdout)
    annotation = applied["metadata"]["annotations"][
        "kubectl.kubernetes.io/last-applied-configuration"
    ]
    assert "second" in annotation


WIDGETS = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.smp.example.com}
spec:
  group: smp.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}
"""
WIDGET = (
    "apiVersion: smp.example.com/v1\nkind: Widget\nmetadata: {{name: w}}\nspec: {{size: {size}}}\n"
)


def test_a_custom_resource_refuses_strategic_merge_patch_and_kubectl_applies_it_anyway(
    server: ServerProcess, kubectl: Kubectl, tmp_path: Path
) -> None:
    """kube's customresource_handler.go serves JSON patch, merge patch and apply patch only; kubectl apply
    then falls back to a merge patch, so applying a custom resource twice works as well."""
    crd = tmp_path / "crd.yaml"
    crd.write_text(WIDGETS)
    kubectl.run("apply", "-f", str(crd))
    kubectl.run("wait", "--for=condition=Established", "-f", str(crd), "--timeout=10s")
    widget = tmp_path / "widget.yaml"
    for size in (1, 2):
        widget.write_text(WIDGET.format(size=size))
        kubectl.run("apply", "-f", str(widget))
    assert kubectl.run("get", "-f", str(widget), "-o", "jsonpath={.spec.size}").stdout == "2"
    response = server.http(
        "PATCH",
        f"/apis/smp.example.com/v1/namespaces/{NAMESPACE}/widgets/w",
        content=json.dumps({"spec": {"size": 3}}),
        headers={"content-type": "application/strategic-merge-patch+json"},
    )
    status = assert_status(response, 415, "UnsupportedMediaType")
    assert status["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )
