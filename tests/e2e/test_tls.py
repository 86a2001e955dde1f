"""TLS by default and x509 client certificates through real servers and real clients:
kubectl 1.27 and 1.33 with the kubeconfig as written; a freshly signed user certificate (directly or through
an intermediate the client sends) authenticates as its CN in its O groups (`kubectl auth whoami`); a
certificate from another CA and an expired one get kube's 401 ("Unauthorized") and not a handshake failure,
and the server stays ready; restarts reuse the PKI; plain HTTP only on loopback; --tls-min-version,
--tls-cipher-suites, --tls-cert-file/--tls-private-key-file and --client-ca-file."""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from cryptography.x509.oid import ExtendedKeyUsageOID

from tests import certs
from tests.kubectl import Kubectl, certificate_user, kubectl_binary, whoami
from tests.serverproc import REPO, ServerProcess, free_port
from tests.userconfig import server_ca, user_kubeconfig

pytestmark = pytest.mark.timeout(120)


def serve(*flags: str) -> subprocess.CompletedProcess[str]:
    """`apiforge serve` expected to stop at once (a refusal)."""
    command = [sys.executable, "-m", "apiforge", "serve", *flags]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60)


def started(directory: Path, *flags: str, server_ca: Path | None = None) -> ServerProcess:
    """A server on memory storage with its data in ``directory``, started; the caller stops it."""
    server = ServerProcess(
        directory, free_port(), storage="memory", extra_args=flags, server_ca=server_ca
    )
    server.data_dir.mkdir()
    server.start()
    return server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = started(tmp_path_factory.mktemp("tls") / "data")
    yield process
    process.stop()


def kubectl(config: Path, tmp_path: Path, minor: int = 33) -> Kubectl:
    return Kubectl(kubectl_binary(minor), config, tmp_path / f"cache-{minor}")


@pytest.mark.parametrize("minor", [27, 33])
def test_kubectl_over_tls_with_the_kubeconfig_as_written(
    server: ServerProcess, tmp_path: Path, minor: int
) -> None:
    config = yaml.safe_load(server.kubeconfig.read_text())
    cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
    assert cluster["server"] == f"https://127.0.0.1:{server.port}"
    assert set(cluster) == {"server", "certificate-authority-data"}
    assert set(user) == {"client-certificate-data", "client-key-data"}
    admin = kubectl(server.kubeconfig, tmp_path, minor)
    assert "namespace/default" in admin.run("get", "namespaces", "-o", "name").stdout.split()
    admin.run("create", "configmap", f"over-tls-{minor}", "--from-literal=a=b", "-n", "default")


def test_the_admin_is_system_admin_in_system_masters(server: ServerProcess, tmp_path: Path) -> None:
    assert certificate_user(whoami(kubectl(server.kubeconfig, tmp_path))) == {
        "username": "system:admin",
        "groups": ["system:masters", "system:authenticated"],
    }


def test_a_freshly_signed_user_certificate_authenticates_as_its_user(
    server: ServerProcess, tmp_path: Path
) -> None:
    alice = certs.client(server_ca(server), "alice", ("dev", "qa"))
    config = user_kubeconfig(server, tmp_path / "alice.kubeconfig", alice)
    assert certificate_user(whoami(kubectl(config, tmp_path))) == {
        "username": "alice",
        "groups": ["dev", "qa", "system:authenticated"],
    }


def test_a_certificate_signed_by_an_intermediate_it_sends_along(
    server: ServerProcess, tmp_path: Path
) -> None:
    team = certs.ca("team-ca", server_ca(server))
    bob = certs.client(team, "bob", ("team",))
    config = user_kubeconfig(server, tmp_path / "bob.kubeconfig", bob, team)
    assert certificate_user(whoami(kubectl(config, tmp_path))) == {
        "username": "bob",
        "groups": ["team", "system:authenticated"],
    }


@pytest.mark.parametrize("case", ["another CA", "expired", "server usage only"])
def test_a_bad_certificate_is_kubes_401_not_a_handshake_failure(
    server: ServerProcess, tmp_path: Path, case: str
) -> None:
    ca = server_ca(server)
    bad = {
        "another CA": lambda: certs.client(certs.ca("stranger"), "mallory", ("system:masters",)),
        "expired": lambda: certs.client(
            ca, "late", not_before=certs.NOW - 9 * certs.DAY, not_after=certs.NOW - certs.DAY
        ),
        "server usage only": lambda: certs.client(
            ca, "server", usage=ExtendedKeyUsageOID.SERVER_AUTH
        ),
    }[case]()
    config = user_kubeconfig(server, tmp_path / "bad.kubeconfig", bad)
    # client-go's words for a 401 on discovery, and for a 401 of a request (its Status's reason)
    for minor in (27, 33):
        user = kubectl(config, tmp_path, minor)
        listed = user.run("get", "configmaps", "-n", "default", check=False)
        assert listed.returncode == 1
        assert (
            "error: You must be logged in to the server"
            " (the server has asked for the client to provide credentials)" in listed.stderr
        )
        raw = user.run("get", "--raw", "/api/v1/namespaces", check=False)
        assert raw.returncode == 1
        assert "error: You must be logged in to the server (Unauthorized)" in raw.stderr
    # the same through a Python client: kube's Status
    context = ssl.create_default_context(cafile=server.data_dir / "test-ca.pem")
    context.load_cert_chain(*bad.write(tmp_path, "bad"))
    with httpx.Client(base_url=server.url, verify=context) as client:
        response = client.get("/api/v1/namespaces")
    status = response.json()
    assert (response.status_code, status["kind"], status["status"], status["code"]) == (
        401,
        "Status",
        "Failure",
        401,
    )
    assert status["reason"] == status["message"] == "Unauthorized"
    assert server.http("GET", "/readyz").status_code == 200


def test_a_restart_reuses_the_pki_and_old_kubeconfigs_keep_working(tmp_path: Path) -> None:
    server = started(tmp_path / "data")
    try:
        before = (server.data_dir / "pki" / "ca.crt").read_bytes()
        kept = tmp_path / "kept.kubeconfig"
        kept.write_text(server.kubeconfig.read_text())
        server.stop()
        server.start()
        assert (server.data_dir / "pki" / "ca.crt").read_bytes() == before
        assert kubectl(kept, tmp_path).run("get", "namespaces").returncode == 0
    finally:
        server.stop()


def test_insecure_serving_is_plain_http_on_loopback_only(tmp_path: Path) -> None:
    refused = serve("--insecure-serving", "--bind-address=0.0.0.0", f"--data-dir={tmp_path}")
    assert refused.returncode == 2
    assert "--insecure-serving serves plain HTTP" in refused.stderr
    server = started(tmp_path / "data", "--insecure-serving")
    try:
        config = yaml.safe_load(server.kubeconfig.read_text())
        assert config["clusters"][0]["cluster"] == {"server": server.url}
        assert server.url.startswith("http://")
        assert config["users"][0]["user"] == {}
        assert not (server.data_dir / "pki").exists()
        # kube's insecure port: a request without credentials is system:unsecured, in system:masters
        info = whoami(kubectl(server.kubeconfig, tmp_path))
        assert (info["username"], info["groups"]) == (
            "system:unsecured",
            ["system:masters", "system:authenticated"],
        )
    finally:
        server.stop()


def handshake(server: ServerProcess, version: ssl.TLSVersion) -> str:
    """The cipher of a connection at exactly ``version``; raises ssl.SSLError when refused."""
    context = ssl.create_default_context(cafile=server.data_dir / "test-ca.pem")
    context.minimum_version = context.maximum_version = version
    with (
        socket.create_connection(("127.0.0.1", server.port), timeout=10) as plain,
        context.wrap_socket(plain, server_hostname="127.0.0.1") as tls,
    ):
        cipher: str = tls.cipher()[0]
        return cipher


def test_tls_12_is_served_by_default(server: ServerProcess) -> None:
    assert handshake(server, ssl.TLSVersion.TLSv1_2)
    assert handshake(server, ssl.TLSVersion.TLSv1_3)


def raw_exchange(server: ServerProcess, *pieces: bytes) -> bytes:
    """Sends ``pieces`` over plain TCP to the TLS port, a moment apart, and reads until the server closes."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as plain:
        for piece in pieces:
            plain.sendall(piece)
        received = b""
        while chunk := plain.recv(4096):
            received += chunk
    return received


# Go's net/http answers a TLS listener's plain HTTP request so (server.go, tlsRecordHeaderLooksLikeHTTP): the
# five-byte record header decides, whatever the method's path or headers
GO_HTTP_ON_TLS = (
    b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
)


@pytest.mark.parametrize(
    "pieces",
    [
        [b"GET /api HTTP/1.1\r\nHost: x\r\n\r\n"],
        [b"HEAD / HTTP/1.1\r\n\r\n"],
        [b"POST /api/v1/namespaces HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"],
        [b"PUT /x HTTP/1.0\r\n\r\n"],
        [b"OPTIONS * HTTP/1.1\r\n\r\n"],
        [b"GE", b"T /livez HTTP/1.1\r\n\r\n"],  # the header split across reads
    ],
    ids=["get", "head", "post", "put", "options", "split"],
)
def test_plain_http_on_the_tls_port_gets_gos_400(
    server: ServerProcess, pieces: list[bytes]
) -> None:
    assert raw_exchange(server, *pieces) == GO_HTTP_ON_TLS


def test_bytes_neither_tls_nor_http_are_closed_and_tls_still_serves(server: ServerProcess) -> None:
    assert raw_exchange(server, b"DELETE / HTTP/1.1\r\n\r\n") == b""  # Go: not "HTTP-looking"
    assert raw_exchange(server, b"\x00\x01\x02\x03\x04\x05") == b""
    assert handshake(server, ssl.TLSVersion.TLSv1_3)
    assert server.http("GET", "/livez").status_code == 200


def test_a_connection_that_sends_nothing_is_closed_after_the_header_timeout(tmp_path: Path) -> None:
    server = started(tmp_path / "data", "--read-header-timeout=1")
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=20) as idle:
            assert idle.recv(1) == b""  # closed by the server, not by our timeout
    finally:
        server.stop()


def test_own_serving_certificate_client_ca_min_version_and_cipher_suites(tmp_path: Path) -> None:
    """--tls-cert-file/--tls-private-key-file: served as given, none generated, the kubeconfig names no
    CA; --client-ca-file: its CA's users authenticate too; --tls-min-version=VersionTLS13 refuses TLS
    1.2; and without it, --tls-cipher-suites is what TLS 1.2 negotiates."""
    own = certs.ca("own-ca")
    serving = certs.serving(own, "127.0.0.1")
    certificate, key = serving.write(tmp_path, "serving")
    partners = certs.ca("partners")
    (tmp_path / "partners.crt").write_text(partners.pem)
    (tmp_path / "own-ca.crt").write_text(own.pem)
    common = ("--tls-cert-file", str(certificate), "--tls-private-key-file", str(key))
    common += ("--client-ca-file", str(tmp_path / "partners.crt"))
    own_ca = tmp_path / "own-ca.crt"
    modern = started(
        tmp_path / "modern", *common, "--tls-min-version=VersionTLS13", server_ca=own_ca
    )
    try:
        assert "certificate-authority-data" not in modern.kubeconfig.read_text()
        assert not (modern.data_dir / "pki" / "apiserver.crt").exists()
        with pytest.raises(ssl.SSLError):
            handshake(modern, ssl.TLSVersion.TLSv1_2)
        assert handshake(modern, ssl.TLSVersion.TLSv1_3)
        carol = certs.client(partners, "carol", ("partners",))
        config = user_kubeconfig(modern, tmp_path / "carol.kubeconfig", carol)
        with_ca = yaml.safe_load(config.read_text())
        with_ca["clusters"][0]["cluster"]["certificate-authority"] = str(tmp_path / "own-ca.crt")
        config.write_text(yaml.safe_dump(with_ca))
        assert whoami(kubectl(config, tmp_path))["username"] == "carol"
    finally:
        modern.stop()
    suite = "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
    chosen = started(tmp_path / "chosen", *common, f"--tls-cipher-suites={suite}", server_ca=own_ca)
    try:
        assert handshake(chosen, ssl.TLSVersion.TLSv1_2) == "ECDHE-ECDSA-AES256-GCM-SHA384"
    finally:
        chosen.stop()


@pytest.mark.parametrize(
    "flags",
    [
        ("--client-ca-file=/nonexistent/ca.crt",),
        ("--tls-cert-file=/nonexistent/s.crt", "--tls-private-key-file=/nonexistent/s.key"),
    ],
    ids=["client CA", "serving certificate"],
)
def test_tls_files_that_cannot_be_read_stop_the_server_at_once(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    started = serve(f"--data-dir={tmp_path}", f"--port={free_port()}", *flags)
    assert started.returncode == 1
    assert "cannot serve TLS: [Errno 2] No such file or directory" in started.stderr
    assert not (tmp_path / "admin.kubeconfig").exists()
