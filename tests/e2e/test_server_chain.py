"""Two apiforge servers in a chain, as kube-aggregator fronts an extension API server: the
``front`` serves this repository's kinds and an APIService for backend.example.com/v1 whose Service (a
ClusterIP of 127.0.0.1) points at the ``back``, a server generated from another project (the Sprocket kind),
started as kube's extension servers are (given only the front's kubeconfig for delegated authentication
and authorization, it reads whom to trust as a proxy from the front's extension-apiserver-authentication
ConfigMap: the front's front-proxy-ca; a serving certificate for back.default.svc). kubectl
against the front lists, watches, applies, explains and deletes the back's kinds; the back sees the real user
(its audit log); stopping the back gives 503 for its group only and the front stays ready.

The back alone, as an extension API server (k8s.io/apiserver's headerrequest authenticator and delegating
options): X-Remote-* headers are believed from the front's proxy certificate only, its unknown tokens are
reviewed by the front (TokenReview) and what its own RBAC has no opinion on is decided there
(SubjectAccessReview). The user's UID travels as X-Remote-Uid (kube 1.32+). The front lists a local
APIService for each group-version it serves, as kube's autoregister does. One module, so that both servers
start once."""

from __future__ import annotations

import base64
import json
import signal
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from generator.pipeline import GenerateConfig, generate
from tests import certs
from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import CA_FILE, ServerProcess, free_port

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning"),
]

SPROCKET = """\
group: backend.example.com
kind: Sprocket
shortNames: [spr]
versions:
  v1:
    storage: true
    schema:
      spec:
        color:
          type: string
          enum: [red, blue]
          default: red
          description: The colour of the sprocket.
"""
APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"
SPROCKETS = "/apis/backend.example.com/v1/namespaces/default/sprockets"
SERVICES = "/api/v1/namespaces/default/services"
CAROL_TOKEN = "carol-0b6f2c1d-token"
BACK_IP = "127.0.0.2"
"""The back's address and its Service's cluster IP (the front's range is 127.0.0.0/24; the `kubernetes`
Service has 127.0.0.1)."""
REVIEW = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
SELF_REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def wait_for(predicate: Callable[[], Any], timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    directory = tmp_path_factory.mktemp("front")
    tokens = directory / "tokens.csv"
    tokens.write_text(f'{CAROL_TOKEN},carol,uid-carol,"qa,ops"\n')
    server = ServerProcess(
        directory / "data",
        free_port(),
        # Services given loopback cluster IPs, so that a Service can point at a server on this machine
        extra_args=("--token-auth-file", str(tokens), "--service-cluster-ip-range", "127.0.0.0/24"),
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def back(front: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    project = tmp_path_factory.mktemp("back-project")
    (project / "definitions" / "backend.example.com").mkdir(parents=True)
    (project / "definitions" / "backend.example.com" / "sprocket.yaml").write_text(SPROCKET)
    generate(GenerateConfig(project / "definitions", project / "generated"))
    data = tmp_path_factory.mktemp("back") / "data"
    server = ServerProcess(
        data,
        free_port(),
        cwd=project,
        bind_address=BACK_IP,
        extra_args=(
            "--tls-san",
            "back.default.svc",
            # no --requestheader-*: read from the front's extension-apiserver-authentication ConfigMap
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


def register(front: ServerProcess, name: str, port: int, cluster_ip: str) -> None:
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
    register(front, "back", back.port, BACK_IP)
    bundle = base64.b64encode((back.data_dir / "pki" / "ca.crt").read_bytes()).decode()
    registration = api_service(
        "backend.example.com",
        {"namespace": "default", "name": "back", "port": back.port},
        caBundle=bundle,
    )
    assert front.http("POST", APISERVICES, json=registration).status_code == 201
    condition = wait_for(
        lambda: (c := available(front, "v1.backend.example.com")) and c["status"] == "True" and c
    )
    assert condition and condition["reason"] == "Passed", available(front, "v1.backend.example.com")
    return front


@pytest.fixture(scope="module")
def kubectl(chain: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    return Kubectl(kubectl_binary(33), chain.kubeconfig, tmp_path_factory.mktemp("cache"))


def as_proxy(
    back: ServerProcess, certificate: tuple[Path, Path] | None, **options: Any
) -> httpx.Client:
    """A client of ``back`` presenting ``certificate`` (None: none)."""
    context = ssl.create_default_context(cafile=str(back.data_dir / CA_FILE))
    if certificate is not None:
        context.load_cert_chain(*map(str, certificate))
    return httpx.Client(base_url=back.url, verify=context, timeout=10, **options)


def front_proxy(front: ServerProcess) -> tuple[Path, Path]:
    pki = front.data_dir / "pki"
    return pki / "front-proxy-client.crt", pki / "front-proxy-client.key"


def who(client: httpx.Client, headers: dict[str, str] | None = None) -> dict[str, Any]:
    answer = client.post(REVIEW, json=SELF_REVIEW, headers=headers or {})
    assert answer.status_code == 201, answer.text
    info: dict[str, Any] = answer.json()["status"]["userInfo"]
    return info


JANE = {
    "X-Remote-User": "jane",
    "X-Remote-Group": "devs",
    "X-Remote-Extra-Example.org%2fscope": "read",
}


def test_the_front_proxy_certificate_makes_the_x_remote_headers_the_user(
    front: ServerProcess, back: ServerProcess
) -> None:
    with as_proxy(back, front_proxy(front)) as client:
        answer = client.post(
            REVIEW,
            json=SELF_REVIEW,
            headers=[  # type: ignore[arg-type]
                *JANE.items(),
                ("X-Remote-Group", "qa"),
                ("X-Remote-Uid", "uid-jane"),
            ],
        )
    assert answer.status_code == 201, answer.text
    info = answer.json()["status"]["userInfo"]
    assert (info["username"], info["uid"]) == ("jane", "uid-jane")
    assert info["groups"] == ["devs", "qa", "system:authenticated"]
    # kube's unescapeExtraKey: the key was percent-encoded, and header names are case-insensitive
    assert info["extra"] == {"example.org/scope": ["read"]}


def test_without_the_proxy_certificate_the_headers_are_ignored(
    front: ServerProcess, back: ServerProcess
) -> None:
    with as_proxy(back, None) as client:
        answer = client.post(REVIEW, json=SELF_REVIEW, headers=JANE)
    assert answer.status_code == 403  # the anonymous user's, as the 403 says
    assert 'User "system:anonymous" cannot create' in answer.json()["message"]
    with back.client(timeout=10) as admin:  # the back's own admin, whose CA is not the proxies'
        assert who(admin, JANE)["username"] == "system:admin"


def test_a_proxy_certificate_with_a_cn_not_allowed_is_refused(
    front: ServerProcess, back: ServerProcess, tmp_path: Path
) -> None:
    pki = front.data_dir / "pki"
    proxy_ca = certs.load(pki / "front-proxy-ca.crt", pki / "front-proxy-ca.key")
    intruder = certs.client(proxy_ca, "intruder").write(tmp_path, "intruder")
    with as_proxy(back, intruder) as client:
        answer = client.post(REVIEW, json=SELF_REVIEW, headers=JANE)
    assert answer.status_code == 401
    assert answer.json()["reason"] == "Unauthorized"


def test_a_token_of_the_front_is_reviewed_by_the_front(
    front: ServerProcess, back: ServerProcess
) -> None:
    with as_proxy(back, None, headers={"Authorization": f"Bearer {CAROL_TOKEN}"}) as client:
        info = who(client)
    assert info["username"] == "carol"
    assert info["uid"] == "uid-carol"
    assert info["groups"] == ["qa", "ops", "system:authenticated"]
    with as_proxy(back, None, headers={"Authorization": "Bearer nobody-knows-me"}) as client:
        answer = client.get(CONFIGMAPS)
    assert answer.status_code == 401


def test_what_the_back_has_no_rule_for_the_front_decides(
    front: ServerProcess, back: ServerProcess
) -> None:
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "alice-view"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}],
    }
    bindings = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
    assert front.http("POST", bindings, json=binding).status_code == 201
    with as_proxy(back, front_proxy(front)) as client:
        allowed = client.get(CONFIGMAPS, headers={"X-Remote-User": "alice"})
        refused = client.get(CONFIGMAPS, headers={"X-Remote-User": "jane"})
        probe = client.get("/readyz", headers={"X-Remote-User": "jane"})
    assert allowed.status_code == 200, allowed.text
    assert refused.status_code == 403
    assert refused.json()["message"].startswith('configmaps is forbidden: User "jane" cannot list')
    assert probe.status_code == 200  # kube's always-allowed health paths


def test_discovery_through_the_front_shows_both_servers_kinds(kubectl: Kubectl) -> None:
    rows = [line.split() for line in kubectl.run("api-resources").stdout.splitlines()]
    assert ["sprockets", "spr", "backend.example.com/v1", "true", "Sprocket"] in rows
    assert any(row[0] == "crontabs" for row in rows)
    assert any(row[0] == "apiservices" for row in rows)
    legacy = kubectl.run("get", "--raw", "/apis").stdout
    assert "backend.example.com/v1" in legacy


def test_kubectl_applies_gets_watches_and_deletes_the_backs_kind(
    kubectl: Kubectl, back: ServerProcess, tmp_path: Path
) -> None:
    watch = kubectl.popen("get", "sprockets", "--namespace", "default", "--watch", "-o", "name")
    try:
        manifest = tmp_path / "sprocket.yaml"
        manifest.write_text(
            "apiVersion: backend.example.com/v1\nkind: Sprocket\nmetadata:\n  name: g1\n"
            "  namespace: default\nspec:\n  color: blue\n"
        )
        applied = kubectl.run("apply", "-f", str(manifest)).stdout
        assert applied == "sprocket.backend.example.com/g1 created\n"
        got = kubectl.run("get", "spr", "g1", "-n", "default", "-o", "jsonpath={.spec.color}")
        assert got.stdout == "blue"
        stored = back.http("GET", f"{SPROCKETS}/g1")  # the back holds it
        assert stored.status_code == 200 and stored.json()["spec"]["color"] == "blue"
        assert watch.stdout is not None
        assert watch.stdout.readline().strip() == "sprocket.backend.example.com/g1"
    finally:
        watch.kill()
        watch.communicate()
    deleted = kubectl.run("delete", "-f", str(manifest)).stdout
    assert deleted == 'sprocket.backend.example.com "g1" deleted\n'
    assert back.http("GET", f"{SPROCKETS}/g1").status_code == 404


def test_kubectl_explain_shows_the_backs_schema(kubectl: Kubectl) -> None:
    explained = kubectl.run("explain", "sprockets.spec.color").stdout
    assert "The colour of the sprocket." in explained
    assert "KIND:       CronTab" in kubectl.run("explain", "crontabs").stdout


def let_list_sprockets(front: ServerProcess, user: str) -> None:
    """A ClusterRole to list sprockets, bound to ``user`` on the front (the back asks the front)."""
    name = f"{user}-sprocket-lister"
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": [
            {"apiGroups": ["backend.example.com"], "resources": ["sprockets"], "verbs": ["list"]}
        ],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    assert front.http("POST", f"{rbac}/clusterroles", json=role).status_code == 201
    assert front.http("POST", f"{rbac}/clusterrolebindings", json=binding).status_code == 201


def test_the_back_sees_the_real_user(chain: ServerProcess, back: ServerProcess) -> None:
    let_list_sprockets(chain, "jane")
    as_jane = {"Impersonate-User": "jane", "Impersonate-Group": "qa"}
    listed = wait_for(
        lambda: (a := chain.http("GET", SPROCKETS, headers=as_jane)).status_code == 200 and a
    )
    assert listed, chain.http("GET", SPROCKETS, headers=as_jane).text
    refused = chain.http("DELETE", f"{SPROCKETS}/none", headers=as_jane)
    assert refused.status_code == 403
    log = (back.data_dir.parent / "audit.log").read_text().splitlines()
    users = [
        event["user"]
        for event in map(json.loads, log)
        if event.get("verb") == "list" and event.get("objectRef", {}).get("resource") == "sprockets"
    ]
    assert {"username": "jane", "groups": ["qa", "system:authenticated"]} in users


def test_the_back_sees_the_users_uid_as_x_remote_uid(
    chain: ServerProcess, back: ServerProcess
) -> None:
    """kube 1.32's --requestheader-uid-headers: the front sends the UID its token file gives carol."""
    let_list_sprockets(chain, "carol")
    as_carol = {"Authorization": f"Bearer {CAROL_TOKEN}"}
    with chain.anonymous_client(headers=as_carol, timeout=10) as client:
        listed = wait_for(
            lambda: (a := client.get(f"{SPROCKETS}?limit=7")).status_code == 200 and a
        )
    assert listed, "carol could not list sprockets through the front"
    events = map(json.loads, (back.data_dir.parent / "audit.log").read_text().splitlines())
    users = [e["user"] for e in events if e.get("requestURI", "").endswith("sprockets?limit=7")]
    assert users and users[-1]["username"] == "carol" and users[-1]["uid"] == "uid-carol", users


def test_the_front_publishes_whom_extension_servers_trust(chain: ServerProcess) -> None:
    """kube-apiserver's extension-apiserver-authentication ConfigMap, kube's keys, kubeadm's values."""
    answer = chain.http(
        "GET", "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
    )
    assert answer.status_code == 200, answer.text
    data = answer.json()["data"]
    pki = chain.data_dir / "pki"
    assert data["requestheader-client-ca-file"] == (pki / "front-proxy-ca.crt").read_text()
    assert data["client-ca-file"] == (pki / "ca.crt").read_text()
    assert json.loads(data["requestheader-allowed-names"]) == ["front-proxy-client"]
    assert json.loads(data["requestheader-username-headers"]) == ["X-Remote-User"]
    assert json.loads(data["requestheader-uid-headers"]) == ["X-Remote-Uid"]
    assert json.loads(data["requestheader-group-headers"]) == ["X-Remote-Group"]
    assert json.loads(data["requestheader-extra-headers-prefix"]) == ["X-Remote-Extra-"]


def test_kubectl_get_apiservices_lists_the_local_ones_and_the_back(kubectl: Kubectl) -> None:
    rows = {
        line.split()[0]: line.split()[1:3]
        for line in kubectl.run("get", "apiservices").stdout.splitlines()[1:]
    }
    assert rows["v1."] == ["Local", "True"]
    assert rows["v1.rbac.authorization.k8s.io"] == ["Local", "True"]
    assert rows["v1.stable.example.com"] == ["Local", "True"]  # a generated kind's group
    assert rows["v1.backend.example.com"] == ["default/back", "True"]


def test_an_apiservice_pointing_nowhere_is_unavailable_and_503(chain: ServerProcess) -> None:
    missing = api_service("missing.example.com", {"namespace": "default", "name": "absent"})
    assert chain.http("POST", APISERVICES, json=missing).status_code == 201
    register(chain, "wrong-port", 1, "127.0.0.3")
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
    for name in ("hangs", "garbage"):
        external = {  # resolved as kube-aggregator resolves an ExternalName: its name, the APIService's port
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name},
            "spec": {"type": "ExternalName", "externalName": "127.0.0.1"},
        }
        assert chain.http("POST", SERVICES, json=external).status_code == 201
    for name, port in (("hangs", hanging), ("garbage", garbage)):
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
    back.stop(signal.SIGKILL)
    answer = chain.http("GET", SPROCKETS)
    assert answer.status_code == 503
    assert chain.http("GET", "/readyz").status_code == 200
    assert (
        chain.http("GET", "/apis/stable.example.com/v1/namespaces/default/crontabs").status_code
        == 200
    )
    condition = wait_for(
        lambda: (c := available(chain, "v1.backend.example.com")) and c["status"] == "False" and c
    )
    assert condition and condition["reason"] == "FailedDiscoveryCheck"
    assert "No resources found" in kubectl.run("get", "crontabs", "-A").stderr
