"""The audit log under kubectl 1.27 and 1.33 (1.33 writes built-in kinds as protobuf) with a policy that
records objects: what kubectl sent is recorded as its JSON whatever the wire spoke (a create, a server-side
apply's YAML patch), a secret's contents never, and `--as` as the impersonated user. The log is read as soon
as kubectl returns: an event is written before its response's last bytes leave."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.auditlog import audited_server
from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import ServerProcess

pytestmark = [pytest.mark.timeout(120)]
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    resources: [{group: "", resources: [secrets]}]
  - level: Metadata
    verbs: [get, list, watch]
  - level: RequestResponse
    omitManagedFields: true
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    work = tmp_path_factory.mktemp("audit")
    (work / "policy.yaml").write_text(POLICY)
    with audited_server(
        work,
        "--audit-policy-file",
        str(work / "policy.yaml"),
        "--audit-log-path",
        str(work / "audit.log"),
    ) as process:
        grant_edit(process, "jane")
        yield process


def grant_edit(server: ServerProcess, user: str) -> None:
    """Bind ``user`` to the `edit` ClusterRole in default (the server authorizes with RBAC), and wait until
    the authorizer, which follows the bindings' watch, lets the user list configmaps."""
    binding = {
        "metadata": {"name": f"{user}-edit"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }
    with server.client(timeout=10) as client:
        created = client.post(
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", json=binding
        )
        assert created.status_code == 201, created.text
        deadline = time.monotonic() + 10
        while client.get(CONFIGMAPS, headers={"impersonate-user": user}).status_code != 200:
            assert time.monotonic() < deadline, "the binding never took effect"
            time.sleep(0.05)


@pytest.fixture(scope="module", params=[27, 33], ids=lambda minor: f"kubectl-1.{minor}")
def kubectl(
    request: pytest.FixtureRequest, server: ServerProcess, tmp_path_factory: pytest.TempPathFactory
) -> Kubectl:
    cache = tmp_path_factory.mktemp("kubectl-cache")
    return Kubectl(kubectl_binary(request.param), server.kubeconfig, cache, "default")


def log_text(server: ServerProcess) -> str:
    return (server.data_dir.parent / "audit.log").read_text()


def events(server: ServerProcess, verb: str, resource: str, name: str = "") -> list[dict[str, Any]]:
    """The ResponseComplete events of writes to ``resource`` (named ``name``, when given)."""
    found = []
    for line in log_text(server).splitlines():
        event = json.loads(line)
        ref = event.get("objectRef", {})
        if (event["verb"], ref.get("resource")) == (verb, resource) and (
            not name
            or ref.get("name") == name
            or event.get("requestObject", {}).get("metadata", {}).get("name") == name
        ):
            found.append(event)
    return found


def test_a_create_is_recorded_with_its_object(server: ServerProcess, kubectl: Kubectl) -> None:
    name = f"audited-{kubectl.binary.name.replace('.', '-')}"
    kubectl.run("create", "namespace", name)
    [event] = events(server, "create", "namespaces", name)
    assert event["level"] == "RequestResponse"
    assert event["userAgent"].startswith("kubectl")
    sent = event["requestObject"]
    assert (sent["apiVersion"], sent["kind"], sent["metadata"]["name"]) == ("v1", "Namespace", name)
    answered = event["responseObject"]
    assert answered["metadata"]["uid"] and "managedFields" not in answered["metadata"]
    assert event["responseStatus"]["code"] == 201


def test_server_side_apply_is_recorded_as_json(server: ServerProcess, kubectl: Kubectl) -> None:
    name = f"applied-{kubectl.binary.name.replace('.', '-')}"
    manifest = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  color: blue\n"
    kubectl.run("apply", "--server-side", "-f", "-", stdin=manifest)
    [event] = events(server, "patch", "configmaps", name)
    assert event["requestObject"] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"color": "blue"},
    }


def test_secret_contents_are_not_recorded(server: ServerProcess, kubectl: Kubectl) -> None:
    name = f"hidden-{kubectl.binary.name.replace('.', '-')}"
    kubectl.run("create", "secret", "generic", name, "--from-literal=password=t0p-s3cr3t")
    [event] = events(server, "create", "secrets")[-1:]
    assert event["level"] == "Metadata"
    assert "requestObject" not in event and "responseObject" not in event
    text = log_text(server)
    assert "t0p-s3cr3t" not in text
    assert "dDBwLXMzY3IzdA" not in text  # its base64


def test_kubectl_as_is_the_impersonated_user(server: ServerProcess, kubectl: Kubectl) -> None:
    name = f"as-{kubectl.binary.name.replace('.', '-')}"
    kubectl.run("--as=jane", "--as-group=auditors", "create", "configmap", name)
    [event] = events(server, "create", "configmaps", name)
    assert event["impersonatedUser"] == {
        "username": "jane",
        "groups": ["auditors", "system:authenticated"],
    }
    assert event["requestObject"]["metadata"]["name"] == name
