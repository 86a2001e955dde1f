"""A GET repeated on a kept-alive connection is answered again from the connection's kept answer
(apiserver/endpoints/replay.py) only while everything that decided it holds: through a real server over TLS
with --token-auth-file users and RBAC, every change that would change kube-apiserver's answer changes ours on
the very next request on the same connection (an update of the object, a removed RoleBinding, a deleted
service account behind a token, a CRD version no longer served), each repeat is counted and audited, and
pipelined, bodied, closing and HTTP/1.0 requests are answered as the full path answers them."""

from __future__ import annotations

import datetime
import re
import socket
import ssl
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import certs
from tests.serverproc import CA_FILE, ServerProcess, free_port
from tests.webhookserver import wait_for

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning"),
]

NAMESPACE = "replay"
CONFIGMAPS = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CAROL_TOKEN = "carol-7d1e0c2b-replay-token"
DAVE_TOKEN = "dave-41f9a6e3-replay-token"
CAROL = {"authorization": f"Bearer {CAROL_TOKEN}"}
DAVE = {"authorization": f"Bearer {DAVE_TOKEN}"}
SETTLE_SECONDS = 10.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    directory = tmp_path_factory.mktemp("replay")
    token_file = directory / "tokens.csv"
    token_file.write_text(f"{CAROL_TOKEN},carol,uid-carol\n{DAVE_TOKEN},dave,uid-dave\n")
    process = ServerProcess(
        directory / "data", free_port(), extra_args=("--token-auth-file", str(token_file))
    )
    process.start()
    with process.client() as admin:
        created = admin.post("/api/v1/namespaces", json={"metadata": {"name": NAMESPACE}})
        assert created.status_code == 201, created.text
        binding = _binding("carol-admin", "cluster-admin", {"kind": "User", "name": "carol"})
        assert admin.post(f"{RBAC}/clusterrolebindings", json=binding).status_code == 201
    yield process
    process.stop()


@pytest.fixture()
def admin(server: ServerProcess) -> Iterator[httpx.Client]:
    """The administrator (its client certificate: system:masters), on connections of its own."""
    with server.client() as client:
        yield client


def user_client(server: ServerProcess) -> httpx.Client:
    """One kept-alive connection presenting no client certificate (the requests carry a bearer token)."""
    tls = ssl.create_default_context(cafile=str(server.data_dir / CA_FILE))
    return httpx.Client(
        base_url=server.url, verify=tls, limits=httpx.Limits(max_connections=1), timeout=10
    )


def eventually(condition: Callable[[], bool]) -> bool:
    """The authorizer and the service-account token checks follow writes through watches."""
    wait_for(condition, SETTLE_SECONDS)
    return True


def _answer_after(
    client: httpx.Client,
    path: str,
    headers: dict[str, str],
    change: Callable[[], httpx.Response],
    status: int,
) -> httpx.Response:
    """``path`` answered 200 on ``client``'s one connection until its answer is kept for replay, then
    ``change`` (answered 200), then the answer once it is ``status``, as the full path answers after it."""
    assert eventually(lambda: client.get(path, headers=headers).status_code == 200)
    assert client.get(path, headers=headers).status_code == 200
    assert change().status_code == 200
    assert eventually(lambda: client.get(path, headers=headers).status_code == status)
    answer = client.get(path, headers=headers)
    assert answer.status_code == status
    return answer


def _binding(name: str, role: str, subject: dict[str, str]) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [subject],
    }


def _configmap(admin: httpx.Client, name: str, value: str) -> None:
    body = {"metadata": {"name": name}, "data": {"value": value}}
    created = admin.post(CONFIGMAPS, json=body)
    assert created.status_code == 201, created.text


def _request_total(admin: httpx.Client, verb: str, resource: str) -> float:
    pattern = re.compile(
        r"^apiserver_request_total\{([^}]*)\} (\S+)$",
        re.MULTILINE,
    )
    total = 0.0
    for labels, value in pattern.findall(admin.get("/metrics").text):
        if (
            'code="200"' in labels
            and f'verb="{verb}"' in labels
            and f'resource="{resource}"' in labels
            and 'scope="resource"' in labels
        ):
            total += float(value)
    return total


def test_a_repeated_get_is_the_same_answer_with_a_new_audit_id_and_is_counted_each_time(
    server: ServerProcess, admin: httpx.Client
) -> None:
    _configmap(admin, "polled", "1")
    before = _request_total(admin, "GET", "configmaps")
    with user_client(server) as carol:
        answers = [carol.get(f"{CONFIGMAPS}/polled", headers=CAROL) for _ in range(6)]
    assert {answer.status_code for answer in answers} == {200}
    assert len({answer.content for answer in answers}) == 1
    assert answers[0].json()["data"] == {"value": "1"}
    assert len({answer.headers["audit-id"] for answer in answers}) == 6
    assert {answer.headers["content-type"] for answer in answers} == {"application/json"}
    assert all("date" in answer.headers for answer in answers)
    assert _request_total(admin, "GET", "configmaps") == before + 6


def test_every_update_is_seen_by_the_next_get_on_the_same_connection(
    server: ServerProcess, admin: httpx.Client
) -> None:
    """kube's GET is a consistent read: an acknowledged write is in every later answer, whoever asks."""
    _configmap(admin, "changing", "0")
    with user_client(server) as carol:
        for round_number in range(1, 15):
            assert carol.get(f"{CONFIGMAPS}/changing", headers=CAROL).status_code == 200
            assert carol.get(f"{CONFIGMAPS}/changing", headers=CAROL).status_code == 200
            body = {"metadata": {"name": "changing"}, "data": {"value": str(round_number)}}
            assert admin.put(f"{CONFIGMAPS}/changing", json=body).status_code == 200
            seen = carol.get(f"{CONFIGMAPS}/changing", headers=CAROL)
            assert seen.json()["data"] == {"value": str(round_number)}
            # the administrator's client certificate, on its own connection
            assert admin.get(f"{CONFIGMAPS}/changing").json()["data"] == seen.json()["data"]
        assert admin.delete(f"{CONFIGMAPS}/changing").status_code == 200
        gone = carol.get(f"{CONFIGMAPS}/changing", headers=CAROL)
        assert gone.status_code == 404
        assert gone.json()["reason"] == "NotFound"


def test_a_removed_rolebinding_refuses_the_next_get(
    server: ServerProcess, admin: httpx.Client
) -> None:
    _configmap(admin, "guarded", "1")
    binding = _binding("dave-view", "view", {"kind": "User", "name": "dave"})
    bindings = f"{RBAC}/namespaces/{NAMESPACE}/rolebindings"
    assert admin.post(bindings, json=binding).status_code == 201
    path = f"{CONFIGMAPS}/guarded"
    with user_client(server) as dave:
        refused = _answer_after(
            dave, path, DAVE, lambda: admin.delete(f"{bindings}/dave-view"), 403
        )
        assert refused.json()["message"] == (
            'configmaps "guarded" is forbidden: User "dave" cannot get resource "configmaps" in API'
            f' group "" in the namespace "{NAMESPACE}"'
        )


def _service_account_token(admin: httpx.Client, name: str) -> dict[str, str]:
    """A new service account allowed to view the namespace, and the header of a token it was issued."""
    accounts = f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts"
    assert admin.post(accounts, json={"metadata": {"name": name}}).status_code == 201
    subject = {"kind": "ServiceAccount", "name": name, "namespace": NAMESPACE}
    binding = _binding(f"{name}-view", "view", subject)
    assert (
        admin.post(f"{RBAC}/namespaces/{NAMESPACE}/rolebindings", json=binding).status_code == 201
    )
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest"}
    issued = admin.post(f"{accounts}/{name}/token", json=request)
    assert issued.status_code == 201, issued.text
    return {"authorization": f"Bearer {issued.json()['status']['token']}"}


def test_a_token_of_a_deleted_service_account_is_refused_on_the_next_get(
    server: ServerProcess, admin: httpx.Client
) -> None:
    """A service account's token is checked against the account on every request (kube's
    serviceaccount token authenticator), so it is never replayed on the strength of an earlier check."""
    accounts = f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts"
    token = _service_account_token(admin, "poller")
    _configmap(admin, "sa-polled", "1")
    path = f"{CONFIGMAPS}/sa-polled"
    with user_client(server) as poller:
        refused = _answer_after(
            poller, path, token, lambda: admin.delete(f"{accounts}/poller"), 401
        )
        assert refused.json()["reason"] == "Unauthorized"


def _gizmo_version(name: str, storage: bool) -> dict[str, Any]:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {"name": name, "served": True, "storage": storage, "schema": {"openAPIV3Schema": schema}}


GIZMO_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gizmos.replay.example.com"},
    "spec": {
        "group": "replay.example.com",
        "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
        "scope": "Namespaced",
        "versions": [_gizmo_version("v1", True), _gizmo_version("v2", False)],
    },
}


def test_a_crd_version_no_longer_served_is_not_found_on_the_next_get(
    server: ServerProcess, admin: httpx.Client
) -> None:
    assert admin.post(CRDS, json=GIZMO_CRD).status_code == 201
    gizmos = f"/apis/replay.example.com/v1/namespaces/{NAMESPACE}/gizmos"
    gizmo = {"apiVersion": "replay.example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}}
    assert eventually(lambda: admin.post(gizmos, json=gizmo).status_code == 201)
    with user_client(server) as carol:
        assert carol.get(f"{gizmos}/g", headers=CAROL).status_code == 200
        assert carol.get(f"{gizmos}/g", headers=CAROL).status_code == 200
        crd = admin.get(f"{CRDS}/gizmos.replay.example.com").json()
        crd["spec"]["versions"][0]["served"] = False
        changed = admin.put(f"{CRDS}/gizmos.replay.example.com", json=crd)
        assert changed.status_code == 200, changed.text
        assert eventually(lambda: carol.get(f"{gizmos}/g", headers=CAROL).status_code == 404)
        assert carol.get(f"{gizmos}/g".replace("/v1/", "/v2/"), headers=CAROL).status_code == 200


def test_a_different_accept_header_gets_its_own_answer(
    server: ServerProcess, admin: httpx.Client
) -> None:
    _configmap(admin, "viewed", "1")
    path = f"{CONFIGMAPS}/viewed"
    table = {**CAROL, "accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    with user_client(server) as carol:
        for _ in range(3):
            assert carol.get(path, headers=CAROL).json()["kind"] == "ConfigMap"
            assert carol.get(path, headers=table).json()["kind"] == "Table"


# -- the bytes on the wire ------------------------------------------------------------------------------


def _raw_connection(server: ServerProcess) -> ssl.SSLSocket:
    tls = ssl.create_default_context(cafile=str(server.data_dir / CA_FILE))
    connection = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    return tls.wrap_socket(connection, server_hostname="127.0.0.1")


def _get(path: str, *extra: str, version: str = "1.1") -> bytes:
    lines = [
        f"GET {path} HTTP/{version}",
        "host: 127.0.0.1",
        f"authorization: Bearer {CAROL_TOKEN}",
    ]
    return ("\r\n".join([*lines, *extra]) + "\r\n\r\n").encode()


def _responses(connection: ssl.SSLSocket, count: int) -> list[tuple[int, dict[str, str], bytes]]:
    """``count`` responses of known length read off ``connection``, in order."""
    buffer = b""
    answers: list[tuple[int, dict[str, str], bytes]] = []
    while len(answers) < count:
        head_end = buffer.find(b"\r\n\r\n")
        if head_end >= 0:
            head = buffer[:head_end].decode("latin-1").split("\r\n")
            headers = dict(line.lower().split(": ", 1) for line in head[1:])
            length = int(headers["content-length"])
            end = head_end + 4 + length
            if len(buffer) >= end:
                answers.append((int(head[0].split()[1]), headers, buffer[head_end + 4 : end]))
                buffer = buffer[end:]
                continue
        chunk = connection.recv(65536)
        assert chunk, f"the server closed the connection after {len(answers)} answers"
        buffer += chunk
    return answers


def test_pipelined_gets_are_answered_in_order(server: ServerProcess, admin: httpx.Client) -> None:
    _configmap(admin, "first", "1")
    _configmap(admin, "second", "2")
    first, second = _get(f"{CONFIGMAPS}/first"), _get(f"{CONFIGMAPS}/second")
    with _raw_connection(server) as connection:
        connection.sendall(first + second)  # primes both
        assert [a[0] for a in _responses(connection, 2)] == [200, 200]
        connection.sendall(first + second + first + _get(f"{CONFIGMAPS}/absent") + second)
        answers = _responses(connection, 5)
    values = [a[2] and (b'"value":"1"' in a[2], b'"value":"2"' in a[2]) for a in answers]
    assert [a[0] for a in answers] == [200, 200, 200, 404, 200]
    assert values[0] == (True, False) and values[1] == (False, True) and values[2] == (True, False)
    assert values[4] == (False, True)
    assert len({a[1]["audit-id"] for a in answers}) == 5


@pytest.mark.parametrize(
    "extra",
    [
        ("content-length: 5",),
        ("transfer-encoding: chunked",),
    ],
    ids=["content-length", "chunked"],
)
def test_a_get_with_a_body_is_answered_and_the_connection_goes_on(
    server: ServerProcess, admin: httpx.Client, extra: tuple[str, ...]
) -> None:
    name = f"bodied-{extra[0].split(':')[0]}"
    _configmap(admin, name, "1")
    plain = _get(f"{CONFIGMAPS}/{name}")
    body = b"hello" if "content-length" in extra[0] else b"5\r\nhello\r\n0\r\n\r\n"
    with _raw_connection(server) as connection:
        for _ in range(2):
            connection.sendall(plain + _get(f"{CONFIGMAPS}/{name}", *extra) + body + plain)
            answers = _responses(connection, 3)
            assert [a[0] for a in answers] == [200, 200, 200]
            assert len({a[2] for a in answers}) == 1


def test_a_closing_or_http_1_0_get_is_answered_once_and_the_connection_closed(
    server: ServerProcess, admin: httpx.Client
) -> None:
    _configmap(admin, "closing", "1")
    path = f"{CONFIGMAPS}/closing"
    for request in (_get(path, "connection: close"), _get(path, version="1.0")):
        for _ in range(2):
            with _raw_connection(server) as connection:
                connection.sendall(_get(path) + _get(path) + request)
                answers = _responses(connection, 3)
                assert [a[0] for a in answers] == [200, 200, 200]
                assert _closed(connection)


def _closed(connection: ssl.SSLSocket) -> bool:
    """Whether the server closed the connection after its last answer."""
    try:
        return connection.recv(1) == b""
    except (ssl.SSLEOFError, ConnectionResetError):
        return True


def test_a_client_audit_id_is_echoed_on_every_repeat(
    server: ServerProcess, admin: httpx.Client
) -> None:
    """kube's WithAuditInit echoes the client's own Audit-ID."""
    _configmap(admin, "traced", "1")
    with user_client(server) as carol:
        for audit_id in ("trace-1", "trace-1", "trace-2", "trace-2"):
            headers = {**CAROL, "audit-id": audit_id}
            assert (
                carol.get(f"{CONFIGMAPS}/traced", headers=headers).headers["audit-id"] == audit_id
            )


def test_an_audit_log_records_every_repeat(tmp_path: Path) -> None:
    """With an audit policy that records GETs, each repeat is its own audit event, under the Audit-Id its
    response carries."""
    log = tmp_path / "audit.log"
    token_file = tmp_path / "tokens.csv"
    token_file.write_text(f"{CAROL_TOKEN},carol,uid-carol,system:masters\n")
    process = ServerProcess(
        tmp_path / "data",
        free_port(),
        storage="memory",
        extra_args=("--audit-log-path", str(log), "--token-auth-file", str(token_file)),
    )
    process.start()
    try:
        with process.client() as admin:
            namespace = {"metadata": {"name": NAMESPACE}}
            assert admin.post("/api/v1/namespaces", json=namespace).status_code == 201
            _configmap(admin, "audited", "1")
        with user_client(process) as carol:
            answers = [carol.get(f"{CONFIGMAPS}/audited", headers=CAROL) for _ in range(4)]
    finally:
        process.stop()
    assert {answer.status_code for answer in answers} == {200}
    ids = {answer.headers["audit-id"] for answer in answers}
    assert len(ids) == 4
    logged = log.read_text()
    for audit_id in ids:
        assert logged.count(f'"auditID":"{audit_id}"') >= 1


# -- the connection around a replay ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def short_idle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server that closes a kept-alive connection after one idle second; its administrator's client
    certificate vouches for replays as a token does."""
    process = ServerProcess(
        tmp_path_factory.mktemp("short-idle"),
        free_port(),
        storage="memory",
        extra_args=("--idle-timeout", "1"),
    )
    process.start()
    with process.client() as admin:
        created = admin.post("/api/v1/namespaces", json={"metadata": {"name": NAMESPACE}})
        assert created.status_code == 201, created.text
    yield process
    process.stop()


def _admin_get(path: str, *extra: str) -> bytes:
    return ("\r\n".join([f"GET {path} HTTP/1.1", "host: 127.0.0.1", *extra]) + "\r\n\r\n").encode()


def test_a_watch_pipelined_after_a_replay_is_not_cut_at_the_idle_timeout(
    short_idle: ServerProcess,
) -> None:
    """Go's IdleTimeout closes a connection that waits for its next request, never one serving a watch;
    a replay answered in the middle of a read leaves the connection busy with the request after it."""
    with short_idle.client() as admin:
        _configmap(admin, "beside-a-watch", "1")
        polled = _get_raw_path("beside-a-watch")
        watch = _admin_get(f"{CONFIGMAPS}?watch=true&fieldSelector=metadata.name%3Dbeside-a-watch")
        with short_idle.connect(timeout=30) as connection:
            for _ in range(2):  # seen, then kept
                connection.sendall(polled)
                assert _responses(connection, 1)[0][0] == 200
            connection.sendall(polled + watch)  # the repeat, and a watch in the same read
            assert _responses(connection, 1)[0][0] == 200
            received = b""
            while b'"ADDED"' not in received:
                chunk = connection.recv(65536)
                assert chunk, "the watch was closed before its first event"
                received += chunk
            # more than the idle timeout passes (the idle sweep runs every quarter second)
            assert _still_open_after(connection, seconds=3.0)
            body = {"metadata": {"name": "beside-a-watch"}, "data": {"value": "2"}}
            assert admin.put(f"{CONFIGMAPS}/beside-a-watch", json=body).status_code == 200
            while b'"MODIFIED"' not in received:
                chunk = connection.recv(65536)
                assert chunk, "the watch was closed at the idle timeout"
                received += chunk


def _get_raw_path(name: str) -> bytes:
    return _admin_get(f"{CONFIGMAPS}/{name}")


def _still_open_after(connection: socket.socket, seconds: float) -> bool:
    """Whether ``connection`` stays open and silent for ``seconds`` (nothing is due on it meanwhile)."""
    connection.settimeout(seconds)
    try:
        received = connection.recv(65536)
    except TimeoutError:
        return True
    except (ssl.SSLEOFError, ConnectionResetError):
        return False
    finally:
        connection.settimeout(30)
    assert not received, f"nothing was due on the connection: {received!r}"
    return False


PADDING = 1_000_000
"""A header value just under Go's MaxHeaderBytes (a mebibyte): served, as kube serves it."""


def _resident_bytes(server: ServerProcess) -> int:
    assert server.process is not None
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    return int(re.search(r"^VmRSS:\s+(\d+) kB$", status, re.MULTILINE)[1]) * 1024  # type: ignore[index]


def test_idle_connections_that_sent_huge_headers_hold_no_memory_for_them(
    server: ServerProcess,
) -> None:
    """Go keeps nothing of an answered request on an idle connection; the requests a connection
    remembers for replay must not let clients pin their megabyte header blocks on idle connections."""
    connections, requests_each = 16, 4
    pinned = connections * requests_each * PADDING
    with server.client() as admin:
        _configmap(admin, "padded", "1")
    open_connections = [server.connect(timeout=30) for _ in range(connections)]
    try:
        before = _resident_bytes(server)
        for connection in open_connections:
            for index in range(requests_each):  # four distinct requests: each one remembered
                pad = f"x-pad: {str(index) * PADDING}"
                connection.sendall(_admin_get(f"{CONFIGMAPS}/padded", pad))
                assert _responses(connection, 1)[0][0] == 200
            # a small request last: what uvicorn holds of the connection's latest request is that one
            connection.sendall(_admin_get(f"{CONFIGMAPS}/padded"))
            assert _responses(connection, 1)[0][0] == 200
        grown = _resident_bytes(server) - before
    finally:
        for connection in open_connections:
            connection.close()
    assert grown < pinned / 2, f"{grown / 2**20:.0f} MiB held for {pinned / 2**20:.0f} MiB sent"


def test_a_proxy_certificate_without_user_headers_does_not_vouch_for_a_service_account_token(
    tmp_path: Path,
) -> None:
    """A client certificate the request-header authenticator trusts, with no X-Remote-User, authenticates
    nobody (kube's requestheader authenticator returns no user), so the bearer token after it decides, and a
    service account's token is checked on every request: deleting the account refuses the next GET."""
    front_proxy_ca = certs.ca("front-proxy-ca")
    ca_file, _ = front_proxy_ca.write(tmp_path, "front-proxy-ca")
    proxy = certs.client(front_proxy_ca, "front-proxy-client").write(tmp_path, "proxy")
    process = ServerProcess(
        tmp_path / "data",
        free_port(),
        storage="memory",
        extra_args=(
            "--requestheader-client-ca-file",
            str(ca_file),
            "--requestheader-username-headers",
            "X-Remote-User",
        ),
    )
    process.start()
    try:
        with process.client() as admin:
            assert admin.post("/api/v1/namespaces", json={"metadata": {"name": NAMESPACE}})
            token = _service_account_token(admin, "proxied")
            _configmap(admin, "proxied", "1")
            path = f"{CONFIGMAPS}/proxied"
            tls = ssl.create_default_context(cafile=str(process.data_dir / CA_FILE))
            tls.load_cert_chain(*proxy)
            with httpx.Client(base_url=process.url, verify=tls, timeout=10) as poller:
                assert eventually(lambda: poller.get(path, headers=token).status_code == 200)
                assert poller.get(path, headers=token).status_code == 200
                accounts = f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts"
                assert admin.delete(f"{accounts}/proxied").status_code == 200
                assert eventually(lambda: poller.get(path, headers=token).status_code == 401)
                assert poller.get(path, headers=token).json()["reason"] == "Unauthorized"
    finally:
        process.stop()


CERTIFICATE_DELAY = 6.0
"""Seconds until a client certificate becomes valid: ample for the two requests before it does."""


def test_a_client_certificate_that_becomes_valid_takes_over_from_the_token_beside_it(
    server: ServerProcess, tmp_path: Path
) -> None:
    """kube verifies a client certificate on every request (k8s.io/apiserver pkg/authentication/request/
    x509/x509.go, at the request's time) before any token: one not valid yet fails, and the bearer token
    beside it decides (carol, allowed), until the certificate's notBefore passes and it decides (alice, who
    may do nothing). A failure of an earlier authenticator can end with time: it vouches for nothing."""
    pki = server.data_dir / "pki"
    cluster_ca = certs.load(pki / "ca.crt", pki / "ca.key")
    with server.client() as admin:
        _configmap(admin, "certified", "1")
    soon = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=CERTIFICATE_DELAY)
    alice = certs.client(cluster_ca, "alice", not_before=soon).write(tmp_path, "alice")
    tls = ssl.create_default_context(cafile=str(server.data_dir / CA_FILE))
    tls.load_cert_chain(*alice)
    path = f"{CONFIGMAPS}/certified"
    with httpx.Client(base_url=server.url, verify=tls, timeout=10) as both:
        assert both.get(path, headers=CAROL).status_code == 200
        assert both.get(path, headers=CAROL).status_code in (200, 403)  # the clock may have passed
        wait_for(lambda: both.get(path, headers=CAROL).status_code == 403, CERTIFICATE_DELAY * 3)
        forbidden = both.get(path, headers=CAROL).json()
    assert forbidden["message"].startswith('configmaps "certified" is forbidden: User "alice"')
