"""The filter chain through a real server process and real clients: kubectl's `--as`, `--as-group`,
`--as-uid`, `auth whoami` and `auth can-i`; the audit log `--audit-log-path` writes; and the 429 past
`--max-mutating-requests-inflight`, which kubectl (client-go) and the `kubernetes` Python client (urllib3)
retry after its Retry-After."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from kubernetes import client

from tests.kubectl import Kubectl, certificate_user, kubectl_binary, whoami
from tests.pyclient import core_v1
from tests.serverproc import ServerProcess, free_port

pytestmark = [
    pytest.mark.timeout(120),
    # the kubernetes client's pooled sockets (see test_python_client.py)
    pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning"),
]
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
HOLDER = "slot-holder"
LIMITED = "limited"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    work = tmp_path_factory.mktemp("chain")
    process = ServerProcess(
        work / "data",
        free_port(),
        storage="memory",
        extra_args=(
            # the chain's mechanics with every user allowed (the impersonated users here hold no
            # bindings); what RBAC answers them is tested in test_kubectl_rbac and the security tests
            "--authorization-mode",
            "AlwaysAllow",
            "--audit-log-path",
            str(work / "audit.log"),
            "--max-mutating-requests-inflight",
            "1",
            # the two limits apart, refused at once (kube's WithMaxInFlightLimit); priority and fairness
            # queues instead, see test_priority_fairness.py
            "--enable-priority-and-fairness=false",
        ),
    )
    process.start()
    yield process
    process.stop()


def audit_events(server: ServerProcess) -> list[dict[str, Any]]:
    path = server.data_dir.parent / "audit.log"
    return [json.loads(line) for line in path.read_text().splitlines()]


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@pytest.fixture(scope="module", params=[30, 33], ids=lambda minor: f"kubectl-1.{minor}")
def kubectl(
    request: pytest.FixtureRequest, server: ServerProcess, tmp_path_factory: pytest.TempPathFactory
) -> Kubectl:
    # 1.30 posts the reviews as JSON, 1.33 as protobuf
    cache = tmp_path_factory.mktemp("kubectl-cache")
    return Kubectl(kubectl_binary(request.param), server.kubeconfig, cache, "default")


ADMIN = {"username": "system:admin", "groups": ["system:masters", "system:authenticated"]}


def test_whoami_is_the_admin_of_the_kubeconfigs_client_certificate(kubectl: Kubectl) -> None:
    assert certificate_user(whoami(kubectl)) == ADMIN


def test_whoami_as_another_user(kubectl: Kubectl) -> None:
    assert whoami(kubectl, "--as=jane", "--as-group=devs", "--as-group=ops") == {
        "username": "jane",
        "groups": ["devs", "ops", "system:authenticated"],
    }
    assert whoami(kubectl, "--as=jane", "--as-uid=42") == {
        "username": "jane",
        "uid": "42",
        "groups": ["system:authenticated"],
    }
    assert whoami(kubectl, "--as=system:serviceaccount:default:builder")["groups"] == [
        "system:serviceaccounts",
        "system:serviceaccounts:default",
        "system:authenticated",
    ]


def test_can_i_as_another_user(kubectl: Kubectl) -> None:
    assert kubectl.run("--as=jane", "auth", "can-i", "create", "configmaps").stdout.strip() == "yes"
    assert "*.*" in kubectl.run("--as=jane", "auth", "can-i", "--list").stdout
    assert kubectl.run("--as=jane", "get", "configmaps").returncode == 0


def test_groups_without_a_user_are_refused(server: ServerProcess) -> None:
    response = server.http("GET", CONFIGMAPS, headers={"Impersonate-Group": "devs"})
    assert response.status_code == 400
    assert response.json()["message"] == 'requested groups "devs" without impersonating a user'


def test_the_audit_log_records_who_acted_as_whom_and_no_credentials(
    server: ServerProcess, kubectl: Kubectl
) -> None:
    auditee = f"auditee-{kubectl.binary.name}"
    # a bearer token too: no authenticator knows it (the certificate authenticates), none may log it
    kubectl.run(f"--as={auditee}", "--token=audit-secret-token", "get", "configmaps")
    events = audit_events(server)
    [audit_id] = [
        event["auditID"]
        for event in events
        if event.get("impersonatedUser", {}).get("username") == auditee
        and event["verb"] == "list"
        and event["objectRef"]
        == {"resource": "configmaps", "namespace": "default", "apiVersion": "v1"}
    ]
    listed = [event for event in events if event["auditID"] == audit_id]
    # impersonation comes after audit in the chain: the request is received as its sender
    assert [(event["stage"], "impersonatedUser" in event) for event in listed] == [
        ("RequestReceived", False),
        ("ResponseComplete", True),
    ]
    complete = listed[-1]
    assert certificate_user(complete["user"]) == ADMIN
    assert complete["userAgent"].startswith("kubectl")
    assert complete["responseStatus"] == {"metadata": {}, "code": 200}
    assert complete["annotations"]["authorization.k8s.io/decision"] == "allow"
    assert "audit-secret-token" not in (server.data_dir.parent / "audit.log").read_text()


@contextmanager
def mutating_slot_held(server: ServerProcess) -> Iterator[Callable[[], None]]:
    """A create whose body is still on its way holds the one mutating slot; ``release`` sends the rest of
    the body, and the held create must then succeed. The admin (system:masters) is never limited, as in
    kube, so the holder, and the clients that must be refused, act as another user (``LIMITED``)."""
    body = json.dumps({"metadata": {"name": f"held-{time.monotonic_ns()}"}}).encode()
    head = (
        f"POST {CONFIGMAPS} HTTP/1.1\r\nhost: 127.0.0.1\r\nuser-agent: {HOLDER}\r\n"
        f"impersonate-user: {LIMITED}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode()
    started = len(audit_events(server))
    with server.connect(timeout=30) as connection:
        connection.sendall(head + body[:1])
        wait_for(
            lambda: any(event["userAgent"] == HOLDER for event in audit_events(server)[started:]),
            "the held create to be in flight",
        )
        released = threading.Event()

        def release() -> None:
            if not released.is_set():
                released.set()
                connection.sendall(body[1:])

        yield release
        release()
        assert connection.recv(64).startswith(b"HTTP/1.1 201 ")


def creates_answered(server: ServerProcess, agent: str, verb: str, since: int) -> list[int]:
    return [
        event["responseStatus"]["code"]
        for event in audit_events(server)[since:]
        if event["stage"] == "ResponseComplete"
        and event["verb"] == verb
        and event["userAgent"].startswith(agent)
    ]


def test_kubectl_retries_a_429_after_retry_after(server: ServerProcess, kubectl: Kubectl) -> None:
    name = f"retried-{kubectl.binary.name.replace('.', '-')}"
    since = len(audit_events(server))
    with mutating_slot_held(server) as release:
        creating = kubectl.popen(
            f"--as={LIMITED}", "create", "configmap", name, "--from-literal=a=b"
        )
        wait_for(lambda: 429 in creates_answered(server, "kubectl", "create", since), "a 429")
        release()
        stdout, stderr = creating.communicate(timeout=60)
    assert creating.returncode == 0, stderr
    assert stdout.strip() == f"configmap/{name} created"
    answers = creates_answered(server, "kubectl", "create", since)
    assert answers[0] == 429 and answers[-1] == 201 and set(answers) == {429, 201}


@pytest.fixture(scope="module")
def core(server: ServerProcess) -> Iterator[client.CoreV1Api]:
    with core_v1(server.kubeconfig) as api:
        yield api


def test_the_python_client_retries_a_429_after_retry_after(
    server: ServerProcess, core: client.CoreV1Api
) -> None:
    configmap = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-retried"), data={"a": "1"})
    core.create_namespaced_config_map("default", configmap)
    configmap.data = {"a": "2"}
    since = len(audit_events(server))
    replaced: list[Any] = []
    core.api_client.set_default_header("Impersonate-User", LIMITED)
    with mutating_slot_held(server) as release:
        replacing = threading.Thread(
            target=lambda: replaced.append(
                core.replace_namespaced_config_map("py-retried", "default", configmap)
            )
        )
        replacing.start()
        wait_for(lambda: 429 in creates_answered(server, "OpenAPI", "update", since), "a 429")
        release()
        replacing.join(timeout=60)
    del core.api_client.default_headers["Impersonate-User"]
    assert replaced[0].data == {"a": "2"}
    # the event of the answer the client read may be written just after the client read it
    wait_for(lambda: 200 in creates_answered(server, "OpenAPI", "update", since), "the 200")
    answers = creates_answered(server, "OpenAPI", "update", since)
    assert answers[0] == 429 and answers[-1] == 200 and set(answers) == {429, 200}


def test_the_python_client_impersonates(core: client.CoreV1Api) -> None:
    api = core.api_client
    api.set_default_header("Impersonate-User", "jane")
    api.set_default_header("Impersonate-Group", "devs")
    try:
        review = client.AuthenticationV1Api(api).create_self_subject_review(
            client.V1SelfSubjectReview()
        )
    finally:
        del api.default_headers["Impersonate-User"]
        del api.default_headers["Impersonate-Group"]
    assert review.status.user_info.username == "jane"
    assert review.status.user_info.groups == ["devs", "system:authenticated"]
