"""Two apiforge servers in a chain (issue 12, item 2), as kube-aggregator fronts an extension API server: the
``front`` serves this repository's kinds and an APIService for tools.example.com/v1 whose Service (a
ClusterIP of 127.0.0.1) points at the ``back``, a server generated from another project (the Gadget kind),
started as kube's extension servers are (request-header CA: the front's front-proxy-ca; delegated
authentication and authorization to the front; a serving certificate for back.default.svc). kubectl
against the front lists, watches, applies, explains and deletes the back's kinds; the back sees the real user
(its audit log); stopping the back gives 503 for its group only and the front stays ready."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from generator.pipeline import GenerateConfig, generate
from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import ServerProcess, free_port

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning"),
]

GADGET = """\
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
          description: The colour of the gadget.
"""
APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"
GADGETS = "/apis/tools.example.com/v1/namespaces/default/gadgets"
SERVICES = "/api/v1/namespaces/default/services"


def wait_for(predicate: Callable[[], Any], timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = ServerProcess(tmp_path_factory.mktemp("front") / "data", free_port())
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def back(front: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    project = tmp_path_factory.mktemp("back-project")
    (project / "definitions" / "tools.example.com").mkdir(parents=True)
    (project / "definitions" / "tools.example.com" / "gadget.yaml").write_text(GADGET)
    generate(GenerateConfig(project / "definitions", project / "generated"))
    pki = front.data_dir / "pki"
    data = tmp_path_factory.mktemp("back") / "data"
    server = ServerProcess(
        data,
        free_port(),
        cwd=project,
        extra_args=(
            "--tls-san",
            "back.default.svc",
            "--requestheader-client-ca-file",
            str(pki / "front-proxy-ca.crt"),
            "--requestheader-allowed-names",
            "front-proxy-client",
            "--authentication-kubeconfig",
            str(front.kubeconfig),
            "--authorization-kubeconfig",
            str(front.kubeconfig),
            "--audit-log-path",
            str(data.parent / "audit.log"),
        ),
    )
    server.start()
    yield server
    server.stop()


def register(front: ServerProcess, name: str, port: int, cluster_ip: str = "127.0.0.1") -> None:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"clusterIP": cluster_ip, "ports": [{"port": port}]},
    }
    assert front.http("POST", SERVICES, json=service).status_code == 201


def api_service(group: str, service: dict[str, Any] | None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": f"v1.{group}"},
        "spec": {
            "group": group,
            "version": "v1",
            "service": service,
            "groupPriorityMinimum": 1000,
            "versionPriority": 15,
            **spec,
        },
    }


def available(front: ServerProcess, name: str) -> dict[str, Any] | None:
    answer = front.http("GET", f"{APISERVICES}/{name}")
    conditions = answer.json().get("status", {}).get("conditions", [])
    return next((c for c in conditions if c["type"] == "Available"), None)


@pytest.fixture(scope="module")
def chain(front: ServerProcess, back: ServerProcess) -> ServerProcess:
    """The front with the back registered and available."""
    register(front, "back", back.port)
    bundle = base64.b64encode((back.data_dir / "pki" / "ca.crt").read_bytes()).decode()
    registration = api_service(
        "tools.example.com",
        {"namespace": "default", "name": "back", "port": back.port},
        caBundle=bundle,
    )
    assert front.http("POST", APISERVICES, json=registration).status_code == 201
    condition = wait_for(
        lambda: (c := available(front, "v1.tools.example.com")) and c["status"] == "True" and c
    )
    assert condition and condition["reason"] == "Passed", available(front, "v1.tools.example.com")
    return front


@pytest.fixture(scope="module")
def kubectl(chain: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    return Kubectl(kubectl_binary(33), chain.kubeconfig, tmp_path_factory.mktemp("cache"))


def test_discovery_through_the_front_shows_both_servers_kinds(kubectl: Kubectl) -> None:
    rows = [line.split() for line in kubectl.run("api-resources").stdout.splitlines()]
    assert ["gadgets", "gd", "tools.example.com/v1", "true", "Gadget"] in rows
    assert any(row[0] == "crontabs" for row in rows)
    assert any(row[0] == "apiservices" for row in rows)
    legacy = kubectl.run("get", "--raw", "/apis").stdout
    assert "tools.example.com/v1" in legacy


def test_kubectl_applies_gets_watches_and_deletes_the_backs_kind(
    kubectl: Kubectl, back: ServerProcess, tmp_path: Path
) -> None:
    watch = kubectl.popen("get", "gadgets", "--namespace", "default", "--watch", "-o", "name")
    try:
        manifest = tmp_path / "gadget.yaml"
        manifest.write_text(
            "apiVersion: tools.example.com/v1\nkind: Gadget\nmetadata:\n  name: g1\n"
            "  namespace: default\nspec:\n  color: blue\n"
        )
        assert "created" in kubectl.run("apply", "-f", str(manifest)).stdout
        got = kubectl.run("get", "gd", "g1", "-n", "default", "-o", "jsonpath={.spec.color}")
        assert got.stdout == "blue"
        stored = back.http("GET", f"{GADGETS}/g1")  # the back holds it
        assert stored.status_code == 200 and stored.json()["spec"]["color"] == "blue"
        assert watch.stdout is not None
        assert watch.stdout.readline().strip() == "gadget.tools.example.com/g1"
    finally:
        watch.kill()
        watch.communicate()
    assert "deleted" in kubectl.run("delete", "-f", str(manifest)).stdout
    assert back.http("GET", f"{GADGETS}/g1").status_code == 404


def test_kubectl_explain_shows_the_backs_schema(kubectl: Kubectl) -> None:
    explained = kubectl.run("explain", "gadgets.spec.color").stdout
    assert "The colour of the gadget." in explained
    assert "KIND:       CronTab" in kubectl.run("explain", "crontabs").stdout


def test_the_back_sees_the_real_user(chain: ServerProcess, back: ServerProcess) -> None:
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "gadget-reader"},
        "rules": [
            {"apiGroups": ["tools.example.com"], "resources": ["gadgets"], "verbs": ["list"]}
        ],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "jane-gadget-reader"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "gadget-reader",
        },
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "jane"}],
    }
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    assert chain.http("POST", f"{rbac}/clusterroles", json=role).status_code == 201
    assert chain.http("POST", f"{rbac}/clusterrolebindings", json=binding).status_code == 201
    as_jane = {"Impersonate-User": "jane", "Impersonate-Group": "qa"}
    listed = wait_for(
        lambda: (a := chain.http("GET", GADGETS, headers=as_jane)).status_code == 200 and a
    )
    assert listed, chain.http("GET", GADGETS, headers=as_jane).text
    refused = chain.http("DELETE", f"{GADGETS}/none", headers=as_jane)
    assert refused.status_code == 403
    log = (back.data_dir.parent / "audit.log").read_text().splitlines()
    users = [
        event["user"]
        for event in map(json.loads, log)
        if event.get("verb") == "list" and event.get("objectRef", {}).get("resource") == "gadgets"
    ]
    assert {"username": "jane", "groups": ["qa", "system:authenticated"]} in users


def test_an_apiservice_pointing_nowhere_is_unavailable_and_503(chain: ServerProcess) -> None:
    missing = api_service("missing.example.com", {"namespace": "default", "name": "absent"})
    assert chain.http("POST", APISERVICES, json=missing).status_code == 201
    register(chain, "wrong-port", 1)
    wrong_port = api_service(
        "wrongport.example.com",
        {"namespace": "default", "name": "wrong-port", "port": 2},
        insecureSkipTLSVerify=True,
    )
    assert chain.http("POST", APISERVICES, json=wrong_port).status_code == 201
    for name, reason, message in (
        ("v1.missing.example.com", "ServiceNotFound", 'service/absent in "default" is not present'),
        (
            "v1.wrongport.example.com",
            "ServicePortError",
            'service/wrong-port in "default" is not listening on port 2',
        ),
    ):
        condition = wait_for(lambda n=name: (c := available(chain, n)) and c)
        assert condition["status"] == "False"
        assert (condition["reason"], condition["message"]) == (reason, message)
    answer = chain.http("GET", "/apis/missing.example.com/v1/things")
    assert (answer.status_code, answer.text) == (503, "service unavailable\n")


def serve_forever(respond: Callable[[Any], None]) -> int:
    """A TCP server on a free port that hands every connection to ``respond`` (in a daemon thread)."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def accept() -> None:
        while True:
            connection, _ = listener.accept()
            threading.Thread(target=respond, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return int(listener.getsockname()[1])


def test_a_backend_that_hangs_or_answers_garbage_is_unavailable(chain: ServerProcess) -> None:
    hanging = serve_forever(lambda connection: time.sleep(3600))
    garbage = serve_forever(lambda connection: connection.sendall(b"\x16\x03\x01garbage" * 10))
    for name, port in (("hangs", hanging), ("garbage", garbage)):
        register(chain, name, port)
        group = f"{name}.example.com"
        registration = api_service(
            group, {"namespace": "default", "name": name, "port": port}, insecureSkipTLSVerify=True
        )
        assert chain.http("POST", APISERVICES, json=registration).status_code == 201
    for name in ("hangs", "garbage"):
        condition = wait_for(lambda n=name: (c := available(chain, f"v1.{n}.example.com")) and c)
        assert condition["status"] == "False"
        assert condition["reason"] == "FailedDiscoveryCheck"
        assert condition["message"].startswith(
            "failing or missing response from https://127.0.0.1:"
        )
        started = time.monotonic()
        answer = chain.http("GET", f"/apis/{name}.example.com/v1/things", timeout=10)
        assert answer.status_code == 503 and time.monotonic() - started < 2
    assert chain.http("GET", "/readyz").status_code == 200
    assert chain.http("GET", "/apis").status_code == 200


def test_stopping_the_back_gives_503_for_its_group_only(
    chain: ServerProcess, back: ServerProcess, kubectl: Kubectl
) -> None:
    back.stop()
    answer = chain.http("GET", GADGETS)
    assert answer.status_code == 503
    assert chain.http("GET", "/readyz").status_code == 200
    assert (
        chain.http("GET", "/apis/stable.example.com/v1/namespaces/default/crontabs").status_code
        == 200
    )
    condition = wait_for(
        lambda: (c := available(chain, "v1.tools.example.com")) and c["status"] == "False" and c
    )
    assert condition and condition["reason"] == "FailedDiscoveryCheck"
    assert "No resources found" in kubectl.run("get", "crontabs", "-A").stderr
