"""kubectl against `--authorization-mode=RBAC`: the in-process app served by uvicorn on a
loopback port, where kubectl (which sends no token over plain HTTP) is an administrator in system:masters
(tests/inprocess.py BearerUsers) and acts as other users by impersonation (`--as`), as kube checks it.
kubectl 1.27 and 1.33: a user without bindings gets kube's 403, reads after `kubectl create rolebinding ...
--clusterrole=view`, still cannot create, and `auth can-i` (with `--list` and `--as`) tells the truth."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
import yaml

from apiserver.authentication.user import UserInfo
from apiserver.server.cli import client_url
from apiserver.server.kubeconfig import kubeconfig_text
from apiserver.server.private import write_private
from tests.inprocess import BearerUsers, build_app
from tests.kubectl import Kubectl, kubectl_binary

pytestmark = pytest.mark.timeout(120)
ROOT = UserInfo("root", groups=("system:masters",))


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    app = build_app(authorization_mode="RBAC", authenticators=[BearerUsers(ROOT)])
    # bound here and handed over: no other process can take the port meanwhile
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    path = tmp_path_factory.mktemp("rbac") / "kubeconfig"
    # a user entry with a token, so that kubectl does not prompt for a password; BearerUsers reads it
    # as ROOT, as it reads a request without one
    config = yaml.safe_load(kubeconfig_text(client_url("127.0.0.1", port, "http")))
    config["users"][0]["user"] = {"token": f"{ROOT.name}/{','.join(ROOT.groups)}"}
    write_private(path, yaml.safe_dump(config).encode())
    yield path
    server.should_exit = True
    thread.join(30)
    listener.close()


@pytest.fixture(params=[27, 33], ids=lambda minor: f"kubectl-1.{minor}")
def kubectl(
    request: pytest.FixtureRequest, kubeconfig: Path, tmp_path_factory: pytest.TempPathFactory
) -> Kubectl:
    return Kubectl(
        kubectl_binary(request.param), kubeconfig, tmp_path_factory.mktemp("cache"), "default"
    )


def eventually(kubectl: Kubectl, *args: str) -> str:
    """A command that succeeds once the authorizer has seen a new binding (it follows a watch)."""
    deadline = time.monotonic() + 10
    while True:
        result = kubectl.run(*args, check=False)
        if result.returncode == 0 or time.monotonic() > deadline:
            assert result.returncode == 0, result.stderr
            return result.stdout
        time.sleep(0.1)


def test_a_user_reads_after_a_binding_to_view_and_can_i_tells_the_truth(kubectl: Kubectl) -> None:
    user = f"alice-{kubectl.binary.name.rsplit('.', 1)[-1]}"
    token = f"--as={user}"
    refused = kubectl.run(token, "get", "configmaps", check=False)
    assert refused.returncode == 1
    assert (
        f'Error from server (Forbidden): configmaps is forbidden: User "{user}" cannot list resource'
        ' "configmaps" in API group "" in the namespace "default"'
    ) in refused.stderr
    assert (
        kubectl.run(token, "auth", "can-i", "list", "configmaps", check=False).stdout.strip()
        == "no"
    )
    kubectl.run("create", "rolebinding", f"{user}-view", "--clusterrole=view", f"--user={user}")
    eventually(kubectl, token, "get", "configmaps")
    assert kubectl.run(token, "auth", "can-i", "list", "configmaps").stdout.strip() == "yes"
    denied = kubectl.run(token, "create", "configmap", "mine", check=False)
    assert denied.returncode == 1
    assert f'User "{user}" cannot create resource "configmaps"' in denied.stderr
    assert (
        kubectl.run(token, "auth", "can-i", "create", "configmaps", check=False).stdout.strip()
        == "no"
    )
    rules = kubectl.run(token, "auth", "can-i", "--list").stdout
    listed = {line.split()[0] for line in rules.splitlines()[1:] if line.strip()}
    assert {
        "configmaps",
        "crontabs.stable.example.com",
        "selfsubjectaccessreviews.authorization.k8s.io",
    } <= listed
    assert "secrets" not in listed
    # the user may not list namespaces (view grants them in its namespace only); the administrator may
    assert kubectl.run(token, "get", "ns", check=False).returncode == 1
    assert kubectl.run("auth", "can-i", "get", "secrets").stdout.strip() == "yes"
    assert kubectl.run(token, "auth", "can-i", "get", "secrets", check=False).stdout.strip() == "no"
    assert "cluster-admin" in kubectl.run("get", "clusterroles").stdout
    wide = kubectl.run("get", "rolebindings", "-o", "wide").stdout
    assert f"{user}-view" in wide and "view" in wide and user in wide
