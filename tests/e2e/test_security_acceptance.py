"""Serving securely, as a user sees it: one `apiforge serve` over TLS with RBAC, reached only by real clients
with the kubeconfig as written (kubectl 1.27 and 1.33, httpx with the data directory's CA).

The parts together: a user with a freshly signed client certificate is refused with kube's 403, reads after a
RoleBinding to `view`, still cannot create, and `auth can-i --list` / `auth whoami` say so; impersonation is
the admin's and a user's only once granted; escalation through Roles and RoleBindings is refused in kube's
words; aggregated roles follow their labels; a token from `kubectl create token` authenticates the
`kubernetes` Python client as its service account, with the RBAC bound to the account and to its groups;
anonymous clients read the public information and nothing else; the audit log has each of these requests,
once per stage, with who asked (and as whom), what, and the answer."""

from __future__ import annotations

import json
import ssl
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests import certs
from tests.kubectl import Kubectl, certificate_user, kubectl_binary, whoami
from tests.pyclient import core_v1
from tests.serverproc import ServerProcess, free_port
from tests.tokens import kubeconfig_with_token
from tests.userconfig import server_ca, user_kubeconfig

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning"),
]
SETTLE = 10.0
"""Seconds a change of bindings or labels may take to reach the authorizer (it follows watches)."""


POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
rules:
  - level: None
    nonResourceURLs: ["/healthz*", "/livez*", "/readyz*", "/version"]
  - level: Metadata
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    work = tmp_path_factory.mktemp("acceptance")
    (work / "policy.yaml").write_text(POLICY)
    audit = (
        "--audit-policy-file",
        str(work / "policy.yaml"),
        "--audit-log-path",
        str(work / "audit.log"),
    )
    process = ServerProcess(
        work / "data",
        free_port(),
        storage="memory",
        extra_args=audit,  # RBAC: the default
    )
    process.data_dir.mkdir()
    process.start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def admin(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    """kubectl 1.33 with the admin.kubeconfig the server wrote, unchanged."""
    return Kubectl(
        kubectl_binary(33), server.kubeconfig, tmp_path_factory.mktemp("admin"), "default"
    )


@pytest.fixture(scope="module")
def as_user(
    server: ServerProcess, tmp_path_factory: pytest.TempPathFactory
) -> Callable[..., Kubectl]:
    """kubectl 1.33 as a user whose client certificate was just signed with the data directory's CA."""
    home = tmp_path_factory.mktemp("users")

    def make(name: str, *groups: str) -> Kubectl:
        pair = certs.client(server_ca(server), name, groups)
        config = user_kubeconfig(server, home / f"{name}.kubeconfig", pair)
        return Kubectl(kubectl_binary(33), config, home / f"cache-{name}", "default")

    return make


def until(kubectl: Kubectl, *args: str, succeeds: bool = True) -> str:
    """``kubectl args`` once it succeeds (or fails, with ``succeeds`` False): the authorizer follows a watch."""
    deadline = time.monotonic() + SETTLE
    while True:
        result = kubectl.run(*args, check=False)
        if (result.returncode == 0) == succeeds or time.monotonic() > deadline:
            assert (result.returncode == 0) == succeeds, result.stdout + result.stderr
            return result.stdout + result.stderr
        time.sleep(0.1)


def can_i(kubectl: Kubectl, *args: str) -> str:
    return kubectl.run("auth", "can-i", *args, check=False).stdout.strip()


def listed(kubectl: Kubectl, *args: str) -> dict[str, str]:
    """`kubectl auth can-i --list`: each resource (or non-resource URL) and its verbs column."""
    rows: dict[str, str] = {}
    for line in kubectl.run("auth", "can-i", "--list", *args).stdout.splitlines()[1:]:
        if line.strip():
            rows[line.split()[0]] = line[line.rindex("[") :].strip()
    return rows


@pytest.mark.parametrize("minor", [27, 33])
def test_kubectl_as_the_admin_of_the_written_kubeconfig(
    server: ServerProcess, tmp_path: Path, minor: int
) -> None:
    admin = Kubectl(kubectl_binary(minor), server.kubeconfig, tmp_path, "default")
    if (
        minor >= 28
    ):  # kubectl 1.27's whoami asks for SelfSubjectReview v1alpha1/v1beta1 only (v1 is 1.28's)
        assert certificate_user(whoami(admin)) == {
            "username": "system:admin",
            "groups": ["system:masters", "system:authenticated"],
        }
    admin.run("create", "configmap", f"admin-{minor}", "--from-literal=a=b")
    assert can_i(admin, "*", "*") == "yes"
    assert listed(admin)["*.*"] == "[*]"


def test_a_new_user_is_refused_then_reads_after_a_binding_to_view_and_still_cannot_create(
    admin: Kubectl, as_user: Callable[..., Kubectl]
) -> None:
    alice = as_user("alice", "dev")
    assert certificate_user(whoami(alice)) == {
        "username": "alice",
        "groups": ["dev", "system:authenticated"],
    }
    refused = alice.run("get", "configmaps", check=False)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): configmaps is forbidden: User "alice" cannot list resource'
        ' "configmaps" in API group "" in the namespace "default"'
    )
    assert can_i(alice, "list", "configmaps") == "no"
    before = listed(alice)
    assert "configmaps" not in before
    assert before["selfsubjectreviews.authentication.k8s.io"] == "[create]"

    admin.run("create", "rolebinding", "alice-view", "--clusterrole=view", "--user=alice")
    until(alice, "get", "configmaps")
    assert can_i(alice, "list", "configmaps") == "yes"
    after = listed(alice)
    assert after["configmaps"] == "[get list watch]"
    assert "secrets" not in after
    denied = alice.run("create", "configmap", "mine", check=False)
    assert denied.returncode == 1
    assert denied.stderr.strip() == (
        'error: failed to create configmap: configmaps is forbidden: User "alice" cannot create'
        ' resource "configmaps" in API group "" in the namespace "default"'
    )
    assert can_i(alice, "create", "configmaps") == "no"
    # the binding is in "default" only
    assert alice.run("get", "configmaps", "-n", "kube-system", check=False).returncode == 1


def test_impersonation_is_the_admins_and_a_users_once_granted(
    admin: Kubectl, as_user: Callable[..., Kubectl]
) -> None:
    assert whoami(admin, "--as=erin", "--as-group=ops") == {
        "username": "erin",
        "groups": ["ops", "system:authenticated"],
    }
    dave = as_user("dave")
    # --raw: kubectl's discovery prints a refused impersonation as "unknown", against kube too
    # (TremoloSecurity/kube-oidc-proxy#71); the request itself shows the server's words
    raw = ("get", "--raw", "/api", "--as=erin")  # discovery: every authenticated user may
    refused = dave.run(*raw, check=False)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): users "erin" is forbidden: User "dave" cannot impersonate'
        ' resource "users" in API group "" at the cluster scope'
    )
    assert can_i(dave, "impersonate", "users") == "no"
    admin.run("create", "clusterrole", "impersonate-erin", "--verb=impersonate", "--resource=users")
    admin.run(
        "create",
        "clusterrolebinding",
        "dave-impersonates",
        "--clusterrole=impersonate-erin",
        "--user=dave",
    )
    until(dave, *raw)
    assert whoami(dave, "--as=erin")["username"] == "erin"
    assert can_i(dave, "impersonate", "users") == "yes"
    # groups are a resource of their own: not granted
    grouped = dave.run(*raw, "--as-group=ops", check=False)
    assert grouped.returncode == 1
    assert 'User "dave" cannot impersonate resource "groups"' in grouped.stderr


def test_escalation_is_refused_in_kubes_words(
    admin: Kubectl, as_user: Callable[..., Kubectl]
) -> None:
    carol = as_user("carol")
    admin.run("create", "rolebinding", "carol-edit", "--clusterrole=edit", "--user=carol")
    # edit writes no RBAC objects; this Role lets carol write them, so that the escalation check decides
    admin.run(
        "create",
        "role",
        "rbac-writer",
        "--verb=create",
        "--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io",
    )
    admin.run("create", "rolebinding", "carol-rbac", "--role=rbac-writer", "--user=carol")
    until(carol, "create", "role", "carol-reads", "--verb=get", "--resource=configmaps")
    groups = '(groups=["system:authenticated"])'
    role = carol.run("create", "role", "all-secrets", "--verb=*", "--resource=secrets", check=False)
    assert role.returncode == 1
    assert role.stderr.strip() == (
        'Error from server (Forbidden): roles.rbac.authorization.k8s.io "all-secrets" is forbidden:'
        f' user "carol" {groups} is attempting to grant RBAC permissions not currently held:\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["*"]}'
    )
    binding = carol.run(
        "create", "rolebinding", "carol-admin", "--clusterrole=admin", "--user=carol", check=False
    )
    assert binding.returncode == 1
    assert (
        'rolebindings.rbac.authorization.k8s.io "carol-admin" is forbidden: user "carol"'
        f" {groups} is attempting to grant RBAC permissions not currently held:"
    ) in binding.stderr
    assert admin.run("get", "role", "all-secrets", check=False).returncode == 1
    assert admin.run("get", "rolebinding", "carol-admin", check=False).returncode == 1


def test_aggregated_roles_follow_label_changes(
    admin: Kubectl, as_user: Callable[..., Kubectl]
) -> None:
    frank = as_user("frank")
    admin.run("create", "rolebinding", "frank-view", "--clusterrole=view", "--user=frank")
    until(frank, "get", "configmaps")
    assert frank.run("get", "secrets", check=False).returncode == 1
    admin.run("create", "clusterrole", "secrets-readers", "--verb=list", "--resource=secrets")
    label = "rbac.authorization.k8s.io/aggregate-to-view"
    admin.run("label", "clusterrole", "secrets-readers", f"{label}=true")
    until(frank, "get", "secrets")
    assert can_i(frank, "list", "secrets") == "yes"
    admin.run("label", "clusterrole", "secrets-readers", f"{label}-")
    until(frank, "get", "secrets", succeeds=False)
    assert can_i(frank, "list", "secrets") == "no"
    assert "secrets" not in admin.run("get", "clusterrole", "view", "-o", "json").stdout


def test_anonymous_reads_the_public_information_only(server: ServerProcess) -> None:
    trust = ssl.create_default_context(cafile=server.data_dir / "pki" / "ca.crt")
    with httpx.Client(base_url=server.url, verify=trust, timeout=10) as anonymous:
        for path in ("/version", "/healthz", "/livez", "/readyz"):
            assert anonymous.get(path).status_code == 200, path
        refused = anonymous.get("/api/v1/namespaces")
    assert refused.status_code == 403
    assert refused.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'namespaces is forbidden: User "system:anonymous" cannot list resource'
        ' "namespaces" in API group "" at the cluster scope',
        "reason": "Forbidden",
        "details": {"kind": "namespaces"},
        "code": 403,
    }


def test_a_service_account_token_authenticates_through_the_python_client(
    server: ServerProcess, admin: Kubectl, tmp_path: Path
) -> None:
    admin.run("create", "serviceaccount", "robot")
    token = admin.run("create", "token", "robot").stdout.strip()
    config = kubeconfig_with_token(server.kubeconfig, token, tmp_path / "robot.kubeconfig")
    robot = Kubectl(kubectl_binary(33), config, tmp_path / "cache", "default")
    with core_v1(config) as core:
        review = client.AuthenticationV1Api(core.api_client).create_self_subject_review(
            client.V1SelfSubjectReview()
        )
        assert review.status.user_info.username == "system:serviceaccount:default:robot"
        assert review.status.user_info.groups == [
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated",
        ]
        with pytest.raises(ApiException) as refused:
            core.list_namespaced_config_map("default")
        assert refused.value.status == 403
        assert json.loads(refused.value.body)["message"] == (
            'configmaps is forbidden: User "system:serviceaccount:default:robot" cannot list resource'
            ' "configmaps" in API group "" in the namespace "default"'
        )
        assert "configmaps" not in listed(robot)
        # a binding to the account, and one to every service account's group
        admin.run(
            "create",
            "rolebinding",
            "robot-view",
            "--clusterrole=view",
            "--serviceaccount=default:robot",
        )
        admin.run("create", "clusterrole", "ns-reader", "--verb=list", "--resource=namespaces")
        admin.run(
            "create",
            "clusterrolebinding",
            "accounts-read-namespaces",
            "--clusterrole=ns-reader",
            "--group=system:serviceaccounts",
        )
        until(robot, "get", "configmaps")
        until(robot, "get", "namespaces")
        assert core.list_namespaced_config_map("default").items is not None
        assert "default" in {item.metadata.name for item in core.list_namespace().items}
    rules = listed(robot)
    assert rules["configmaps"] == "[get list watch]"
    assert (
        "list" in rules["namespaces"].strip("[]").split()
    )  # the group's binding (and view's get, watch)
    assert "secrets" not in rules
    assert can_i(robot, "create", "configmaps") == "no"


def audit_events(server: ServerProcess) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in (server.data_dir.parent / "audit.log").read_text().splitlines()
    ]


def test_the_audit_log_has_one_line_per_stage_per_request_with_who_what_and_the_answer(
    server: ServerProcess,
) -> None:
    """Last in the module: the requests above are in the log (a Metadata policy for all but the health
    checks), each with its RequestReceived and ResponseComplete, once."""
    events = audit_events(server)
    stages: dict[str, list[str]] = {}
    for event in events:
        assert event["kind"] == "Event" and event["apiVersion"] == "audit.k8s.io/v1"
        stages.setdefault(event["auditID"], []).append(event["stage"])
    for audit_id, seen in stages.items():
        assert sorted(seen) == sorted(set(seen)), (audit_id, seen)
        assert "ResponseComplete" in seen or "Panic" in seen, (audit_id, seen)
    complete = [event for event in events if event["stage"] == "ResponseComplete"]

    def one(user: str, verb: str, resource: str, code: int, **more: Any) -> dict[str, Any]:
        found = [
            event
            for event in complete
            if event["user"]["username"] == user
            and event["verb"] == verb
            and event.get("objectRef", {}).get("resource", "") == resource
            and event["responseStatus"]["code"] == code
            and all(event.get(key) == value for key, value in more.items())
        ]
        assert found, (user, verb, resource, code)
        assert stages[found[0]["auditID"]].count("RequestReceived") == 1
        return found[0]

    refused = one("alice", "list", "configmaps", 403)
    assert refused["objectRef"] == {
        "resource": "configmaps",
        "namespace": "default",
        "apiVersion": "v1",
    }
    assert refused["user"]["groups"] == ["dev", "system:authenticated"]
    assert refused["responseStatus"]["reason"] == "Forbidden"
    assert refused["level"] == "Metadata"
    one("alice", "list", "configmaps", 200)
    impersonated = one(
        "dave",
        "get",
        "",
        200,
        impersonatedUser={"username": "erin", "groups": ["system:authenticated"]},
    )
    assert impersonated["requestURI"] == "/api"
    one("system:anonymous", "list", "namespaces", 403)
    one("system:serviceaccount:default:robot", "list", "configmaps", 200)
    created = one("system:admin", "create", "rolebindings", 201)
    assert created["objectRef"]["apiGroup"] == "rbac.authorization.k8s.io"
    escalation = one("carol", "create", "roles", 403)
    assert escalation["objectRef"]["name"] == "all-secrets"
