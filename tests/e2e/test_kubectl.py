"""Real kubectl binaries (1.27, 1.28, 1.30, 1.32, 1.33) against a real apiforge server: the commands of the toolchain
issue's acceptance, each version in a namespace of its own on one server."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import FIXTURES, ServerProcess

CRONTAB = """\
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: {name}
spec:
  cronSpec: "* * * * */5"
  image: {image}
  replicas: {replicas}
"""


@pytest.fixture(scope="module", params=[27, 28, 30, 32, 33], ids=lambda minor: f"kubectl-1.{minor}")
def kubectl(
    request: pytest.FixtureRequest, server: ServerProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Kubectl]:
    namespace = f"kubectl-1-{request.param}"
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    assert server.http("POST", "/api/v1/namespaces", json=body).status_code == 201
    cache = tmp_path_factory.mktemp("kubectl-cache")
    yield Kubectl(kubectl_binary(request.param), server.kubeconfig, cache, namespace)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "manifest.yaml"
    path.write_text(text)
    return path


def test_api_resources_lists_crontabs(server: ServerProcess, kubectl: Kubectl) -> None:
    # the gcloud dispatcher picks kubectl.1.<minor> from /version: exercise it too
    dispatcher = Kubectl(Path("kubectl"), server.kubeconfig, kubectl.cache_dir, kubectl.namespace)
    for client in (kubectl, dispatcher):
        output = client.run("api-resources").stdout
        line = next(row for row in output.splitlines() if row.startswith("crontabs"))
        assert line.split() == ["crontabs", "ct", "stable.example.com/v1", "true", "CronTab"]
        assert any(row.split()[:2] == ["namespaces", "ns"] for row in output.splitlines())


def test_auth_whoami(kubectl: Kubectl) -> None:
    """kubectl 1.27 asks authentication.k8s.io/v1beta1 (then v1alpha1) for its SelfSubjectReview, later ones
    v1 first (staging/src/k8s.io/kubectl/pkg/cmd/auth/whoami.go); each gets the admin, and the impersonated
    user with --as."""
    review = json.loads(kubectl.run("auth", "whoami", "-o", "json").stdout)
    expected = "authentication.k8s.io/v1beta1" if kubectl.binary.name.endswith("1.27") else None
    assert review["kind"] == "SelfSubjectReview"
    assert expected in (None, review["apiVersion"]), review["apiVersion"]
    user = review["status"]["userInfo"]
    assert user["username"] == "system:admin" and "system:masters" in user["groups"]
    table = kubectl.run("auth", "whoami", "--as", "jane", "--as-group", "team").stdout.split()
    assert table[:2] == ["ATTRIBUTE", "VALUE"] and table[table.index("Username") + 1] == "jane"


def test_create_get_yaml_and_printer_columns(kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = write(tmp_path, CRONTAB.format(name="kc-create", image="img:1", replicas=2))
    assert (
        kubectl.run("create", "-f", str(manifest)).stdout.strip()
        == "crontab.stable.example.com/kc-create created"
    )
    table = kubectl.run("get", "crontabs").stdout.splitlines()
    assert table[0].split() == ["NAME", "SPEC", "REPLICAS", "AGE"]
    row = next(line.split() for line in table if line.startswith("kc-create"))
    assert row[1:6] == ["*", "*", "*", "*", "*/5"] and row[6] == "2"
    wide = kubectl.run("get", "ct", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "SPEC", "REPLICAS", "IMAGE", "AGE"]
    obj = yaml.safe_load(kubectl.run("get", "ct", "kc-create", "-o", "yaml").stdout)
    assert (
        obj["metadata"]["uid"]
        and obj["metadata"]["resourceVersion"]
        and obj["metadata"]["creationTimestamp"]
    )
    assert obj["metadata"]["generation"] == 1
    assert obj["spec"] == {"cronSpec": "* * * * */5", "image": "img:1", "replicas": 2}
    assert "kc-create" in kubectl.run("get", "all").stdout  # category "all"


def test_apply_create_then_configure(kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = write(tmp_path, CRONTAB.format(name="kc-apply", image="img:1", replicas=1))
    assert (
        kubectl.run("apply", "-f", str(manifest)).stdout.strip()
        == "crontab.stable.example.com/kc-apply created"
    )
    assert kubectl.run("apply", "-f", str(manifest)).stdout.strip() == (
        "crontab.stable.example.com/kc-apply unchanged"
    )
    manifest.write_text(CRONTAB.format(name="kc-apply", image="img:2", replicas=3))
    assert kubectl.run("apply", "-f", str(manifest)).stdout.strip() == (
        "crontab.stable.example.com/kc-apply configured"
    )
    spec = json.loads(kubectl.run("get", "ct", "kc-apply", "-o", "json").stdout)["spec"]
    assert spec == {"cronSpec": "* * * * */5", "image": "img:2", "replicas": 3}


def test_get_watch_sees_an_update_made_elsewhere(
    server: ServerProcess, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl.run(
        "create", "-f", str(write(tmp_path, CRONTAB.format(name="kc-watch", image="a", replicas=1)))
    )
    watcher = kubectl.popen(
        "get",
        "ct",
        "kc-watch",
        "-w",
        "--output-watch-events",
        "-o",
        'jsonpath={.type} {.object.spec.image}{"\\n"}',
    )
    try:
        assert watcher.stdout is not None
        # kubectl lists first (the object as ADDED), then watches from the list's resourceVersion: a change
        # made once the first line is out reaches the watch however late it connects
        assert watcher.stdout.readline().strip() == "ADDED a"
        response = server.http(
            "PATCH",
            f"/apis/stable.example.com/v1/namespaces/{kubectl.namespace}/crontabs/kc-watch",
            json={"spec": {"image": "changed-elsewhere"}},
            headers={"content-type": "application/merge-patch+json"},
        )
        assert response.status_code == 200
        assert watcher.stdout.readline().strip() == "MODIFIED changed-elsewhere"
    finally:
        watcher.kill()
        watcher.communicate()


def test_delete(kubectl: Kubectl, tmp_path: Path) -> None:
    kubectl.run(
        "create",
        "-f",
        str(write(tmp_path, CRONTAB.format(name="kc-delete", image="a", replicas=1))),
    )
    assert (
        kubectl.run("delete", "ct", "kc-delete").stdout.strip()
        == 'crontab.stable.example.com "kc-delete" deleted'
    )
    missing = kubectl.run("get", "ct", "kc-delete", check=False)
    assert missing.returncode == 1
    assert (
        'Error from server (NotFound): crontabs.stable.example.com "kc-delete" not found'
        in missing.stderr
    )


def test_explain_crontab_spec(kubectl: Kubectl) -> None:
    output = kubectl.run("explain", "crontab.spec").stdout
    assert "GROUP:      stable.example.com" in output
    assert "KIND:       CronTab" in output
    assert "VERSION:    v1" in output
    assert "FIELD: spec <Object>" in output
    assert "cronSpec\t<string>" in output
    assert "replicas\t<integer>" in output


def test_validation_error_reaches_kubectl(kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = write(tmp_path, CRONTAB.format(name="kc-bad", image="a", replicas='"many"'))
    result = kubectl.run("create", "-f", str(manifest), check=False)
    assert result.returncode == 1
    # kube's structural schema error for a custom resource (apiextensions-apiserver's validation), then the
    # scale subresource's own reading of the replicas path (customresource validateScaleSpec: NestedInt64)
    assert result.stderr == (
        'The CronTab "kc-bad" is invalid: \n'
        '* spec.replicas: Invalid value: "string": '
        'spec.replicas in body must be of type integer: "string"\n'
        "* .spec.replicas: Invalid value: 0: .spec.replicas accessor error: "
        "many is of the type string, expected int64\n"
    )


def test_crontab_sample_from_the_kubernetes_docs(kubectl: Kubectl) -> None:
    sample = FIXTURES / "custom-resources" / "k8s-docs-crontab" / "my-crontab.yaml"
    result = kubectl.run("apply", "-f", str(sample))
    assert result.stdout == "crontab.stable.example.com/my-new-cron-object created\n"


def test_auth_can_i_with_json_speaking_kubectl(server: ServerProcess, kubectl: Kubectl) -> None:
    # kubectl up to 1.31 posts the SelfSubjectAccessReview as JSON (1.32+ sends protobuf)
    older = Kubectl(kubectl_binary(30), server.kubeconfig, kubectl.cache_dir, kubectl.namespace)
    assert older.run("auth", "can-i", "create", "crontabs").stdout.strip() == "yes"
    rules = older.run("auth", "can-i", "--list").stdout
    assert "*.*" in rules


def test_built_in_configmap_apply_patch_and_typed_create(kubectl: Kubectl, tmp_path: Path) -> None:
    # create configmap: kubectl 1.32+ send it as protobuf; apply of a change sends a strategic merge patch
    created = kubectl.run("create", "configmap", "kc-typed", "--from-literal=a=1").stdout
    assert created.strip() == "configmap/kc-typed created"
    manifest = write(
        tmp_path, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kc-cm\ndata:\n  a: '1'\n"
    )
    assert kubectl.run("apply", "-f", str(manifest)).stdout.strip() == "configmap/kc-cm created"
    manifest.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kc-cm\ndata:\n  b: '2'\n"
    )
    assert kubectl.run("apply", "-f", str(manifest)).stdout.strip() == "configmap/kc-cm configured"
    kubectl.run("patch", "configmap", "kc-cm", "-p", '{"data":{"c":"3"}}')
    data = json.loads(kubectl.run("get", "cm", "kc-cm", "-o", "json").stdout)["data"]
    assert data == {"b": "2", "c": "3"}  # apply removed a (no longer applied), patch added c
    assert (
        kubectl.run("create", "secret", "generic", "kc-secret", "--from-literal=k=v").returncode
        == 0
    )
    assert kubectl.run("auth", "can-i", "delete", "configmaps").stdout.strip() == "yes"


def test_more_commands_of_the_conventions(kubectl: Kubectl, tmp_path: Path) -> None:
    """replace, label, annotate, scale, patch --subresource=status, wait, describe, diff, get --raw, version
    (API-CONVENTIONS.md §13)."""
    manifest = write(tmp_path, CRONTAB.format(name="kc-more", image="a", replicas=1))
    kubectl.run("create", "-f", str(manifest))
    manifest.write_text(CRONTAB.format(name="kc-more", image="b", replicas=1))
    assert (
        kubectl.run("replace", "-f", str(manifest)).stdout.strip()
        == "crontab.stable.example.com/kc-more replaced"
    )
    kubectl.run("label", "ct", "kc-more", "tier=gold")
    kubectl.run("annotate", "ct", "kc-more", "note=hello")
    assert (
        kubectl.run("scale", "ct", "kc-more", "--replicas=4").stdout.strip()
        == "crontab.stable.example.com/kc-more scaled"
    )
    assert (
        kubectl.run("get", "ct", "-l", "tier=gold", "-o", "name").stdout.strip()
        == "crontab.stable.example.com/kc-more"
    )
    obj = json.loads(kubectl.run("get", "ct", "kc-more", "-o", "json").stdout)
    assert obj["spec"]["replicas"] == 4 and obj["spec"]["image"] == "b"
    assert obj["metadata"]["annotations"]["note"] == "hello"
    condition = {
        "type": "Ready",
        "status": "True",
        "reason": "Done",
        "message": "ok",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    status_patch = json.dumps({"status": {"conditions": [condition]}})
    kubectl.run(
        "patch", "ct", "kc-more", "--subresource=status", "--type=merge", "-p", status_patch
    )
    waited = kubectl.run("wait", "--for=condition=Ready", "ct/kc-more", "--timeout=20s")
    assert waited.stdout.strip() == "crontab.stable.example.com/kc-more condition met"
    described = kubectl.run("describe", "ct", "kc-more").stdout.splitlines()
    assert described[:2] == ["Name:         kc-more", f"Namespace:    {kubectl.namespace}"]
    assert (
        "API Version:  stable.example.com/v1" in described and "Kind:         CronTab" in described
    )
    manifest.write_text(CRONTAB.format(name="kc-more", image="c", replicas=4))
    diff = kubectl.run("diff", "-f", str(manifest), check=False)
    assert (
        diff.returncode == 1 and "+  image: c" in diff.stdout
    )  # differs, computed by a server dry run
    assert (
        kubectl.run("get", "ct", "kc-more", "-o", "jsonpath={.spec.image}").stdout == "b"
    )  # dry run only
    assert kubectl.run("get", "--raw", "/healthz").stdout == "ok"
    assert "stable.example.com/v1" in kubectl.run("api-versions").stdout.split()
    version = json.loads(kubectl.run("version", "-o", "json").stdout)
    assert version["serverVersion"]["gitVersion"] == "v1.32.0+apiforge"
    assert (
        kubectl.run("delete", "ct", "-l", "tier=gold").stdout.strip()
        == 'crontab.stable.example.com "kc-more" deleted'
    )


def test_server_side_apply_conflicts_and_migration(kubectl: Kubectl, tmp_path: Path) -> None:
    """apply --server-side (create, conflict with the client-side applier, force), diff --server-side, and
    kubectl's client-side → server-side migration of an object first applied client-side (§5.6)."""
    manifest = write(tmp_path, CRONTAB.format(name="kc-ssa", image="a", replicas=1))
    assert kubectl.run("apply", "--server-side", "-f", str(manifest)).stdout.strip() == (
        "crontab.stable.example.com/kc-ssa serverside-applied"
    )
    migrated = write(tmp_path, CRONTAB.format(name="kc-csa", image="a", replicas=1))
    kubectl.run(
        "apply", "-f", str(migrated)
    )  # client-side first: last-applied annotation, kubectl-client-side-apply
    migrated.write_text(CRONTAB.format(name="kc-csa", image="b", replicas=1))
    assert kubectl.run("apply", "--server-side", "-f", str(migrated)).stdout == (
        "crontab.stable.example.com/kc-csa serverside-applied\n"
    )
    obj = json.loads(
        kubectl.run("get", "ct", "kc-csa", "-o", "json", "--show-managed-fields").stdout
    )
    assert obj["spec"]["image"] == "b"
    assert "kubectl" in {entry["manager"] for entry in obj["metadata"]["managedFields"]}
    kubectl.run("patch", "ct", "kc-ssa", "--type=merge", "-p", '{"spec":{"image":"patched"}}')
    manifest.write_text(CRONTAB.format(name="kc-ssa", image="mine", replicas=1))
    conflict = kubectl.run("apply", "--server-side", "-f", str(manifest), check=False)
    assert conflict.returncode == 1
    assert 'conflict with "kubectl-patch"' in conflict.stderr and ".spec.image" in conflict.stderr
    diff = kubectl.run(
        "diff", "--server-side", "--force-conflicts", "-f", str(manifest), check=False
    )
    assert diff.returncode == 1 and "+  image: mine" in diff.stdout
    forced = kubectl.run("apply", "--server-side", "--force-conflicts", "-f", str(manifest))
    assert forced.stdout == "crontab.stable.example.com/kc-ssa serverside-applied\n"
    assert kubectl.run("get", "ct", "kc-ssa", "-o", "jsonpath={.spec.image}").stdout == "mine"


def test_edit_cluster_info_and_services(kubectl: Kubectl, tmp_path: Path) -> None:
    """edit (with a scripted EDITOR), cluster-info (which needs core services), and a Service whose ports
    merge by port under a strategic merge patch, as kube's Service does."""
    kubectl.run(
        "create",
        "-f",
        str(write(tmp_path, CRONTAB.format(name="kc-edit", image="before", replicas=1))),
    )
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/image: before/image: after/' \"$1\"\n")
    editor.chmod(0o755)
    edited = kubectl.run("edit", "ct", "kc-edit", env={"KUBE_EDITOR": str(editor)})
    assert edited.stdout.strip() == "crontab.stable.example.com/kc-edit edited"
    assert kubectl.run("get", "ct", "kc-edit", "-o", "jsonpath={.spec.image}").stdout == "after"
    info = re.sub(r"\x1b\[[0-9;]*m", "", kubectl.run("cluster-info").stdout)  # without its colours
    assert "Kubernetes control plane is running at https://127.0.0.1:" in info
    # kube's ValidateService: with more than one port, each is named
    service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: kc-svc\nspec:\n  ports:\n  - port: 80\n    name: http\n    targetPort: 8080\n"
    kubectl.run("apply", "-f", str(write(tmp_path, service)))
    kubectl.run(
        "patch",
        "svc",
        "kc-svc",
        "-p",
        '{"spec":{"ports":[{"port":443,"targetPort":8443,"name":"https"}]}}',
    )
    ports = json.loads(kubectl.run("get", "svc", "kc-svc", "-o", "json").stdout)["spec"]["ports"]
    assert sorted(port["port"] for port in ports) == [80, 443]  # merged by port, not replaced
    assert "kc-svc" in kubectl.run("get", "all").stdout


def test_create_namespace_and_json_patch(kubectl: Kubectl) -> None:
    """create namespace (protobuf from kubectl 1.32 on) and patch --type json (§13)."""
    name = f"{kubectl.namespace}-extra"
    assert kubectl.run("create", "namespace", name).stdout.strip() == f"namespace/{name} created"
    assert kubectl.run("get", "ns", name, "-o", "jsonpath={.status.phase}").stdout == "Active"
    kubectl.run("create", "configmap", "kc-json", "--from-literal=a=1")
    patch = '[{"op":"add","path":"/data/b","value":"2"},{"op":"test","path":"/data/a","value":"1"}]'
    kubectl.run("patch", "configmap", "kc-json", "--type=json", "-p", patch)
    data = json.loads(kubectl.run("get", "cm", "kc-json", "-o", "json").stdout)["data"]
    assert data == {"a": "1", "b": "2"}
    failed = kubectl.run(
        "patch",
        "configmap",
        "kc-json",
        "--type=json",
        "-p",
        '[{"op":"test","path":"/data/a","value":"9"}]',
        check=False,
    )
    assert failed.returncode == 1 and failed.stderr.startswith(
        "The request is invalid"
    )  # 422, as kube
