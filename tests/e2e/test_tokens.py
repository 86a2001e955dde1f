"""Bearer tokens through a real server process and real clients: `kubectl create token` (1.27 and 1.33, the
latter posting protobuf) issues a service-account token with which the `kubernetes` Python client can
authenticate as ``system:serviceaccount:NS:NAME`` (kr8s: test_kr8s.py); a --token-auth-file user likewise; every bad token is a
401 with kube's Status and the server stays ready; a malformed token or key file stops the server at start
with kube's words."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.kubectl import Kubectl, kubectl_binary
from tests.pyclient import core_v1
from tests.serverproc import ServerProcess, free_port
from tests.tokens import UNAUTHORIZED, kubeconfig_with_token, without_credentials

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning"),
]

NAMESPACE = "tokens-e2e"
STATIC_TOKEN = "static-3f9c1a7e-token"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    directory = tmp_path_factory.mktemp("tokens")
    token_file = directory / "tokens.csv"
    token_file.write_text(f'{STATIC_TOKEN},carol,uid-carol,"qa,ops"\n')
    process = ServerProcess(
        directory / "data", free_port(), extra_args=("--token-auth-file", str(token_file))
    )
    process.start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def admin(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    kubectl = Kubectl(kubectl_binary(33), server.kubeconfig, tmp_path_factory.mktemp("cache"))
    kubectl.run("create", "namespace", NAMESPACE)
    for _ in range(200):  # the serviceaccounts controller creates the default account
        if (
            kubectl.run("get", "serviceaccount", "default", "-n", NAMESPACE, check=False).returncode
            == 0
        ):
            break
        time.sleep(0.05)
    return kubectl


def whoami(kubeconfig: Path) -> client.V1UserInfo:
    with core_v1(kubeconfig) as core:
        review = client.AuthenticationV1Api(core.api_client).create_self_subject_review(
            client.V1SelfSubjectReview()
        )
    info: client.V1UserInfo = review.status.user_info
    return info


@pytest.mark.parametrize("minor", [27, 33], ids=lambda minor: f"kubectl-1.{minor}")
def test_kubectl_create_token_authenticates_the_python_client_as_the_account(
    server: ServerProcess, admin: Kubectl, tmp_path: Path, minor: int
) -> None:
    kubectl = Kubectl(kubectl_binary(minor), server.kubeconfig, tmp_path / "cache")
    token = kubectl.run("create", "token", "default", "-n", NAMESPACE).stdout.strip()
    assert token.count(".") == 2
    info = whoami(kubeconfig_with_token(server.kubeconfig, token, tmp_path / "sa.kubeconfig"))
    assert info.username == f"system:serviceaccount:{NAMESPACE}:default"
    assert info.groups == [
        "system:serviceaccounts",
        f"system:serviceaccounts:{NAMESPACE}",
        "system:authenticated",
    ]
    uid = admin.run(
        "get", "sa", "default", "-n", NAMESPACE, "-o", "jsonpath={.metadata.uid}"
    ).stdout
    assert info.uid == uid
    [credential] = info.extra["authentication.kubernetes.io/credential-id"]
    assert credential.startswith("JTI=")


def test_kubectl_auth_whoami_with_the_token(
    server: ServerProcess, admin: Kubectl, tmp_path: Path
) -> None:
    """kubectl sends a bearer token over HTTPS only; `auth whoami` (SelfSubjectReview v1: kubectl 1.28+)."""
    token = admin.run("create", "token", "default", "-n", NAMESPACE).stdout.strip()
    config = kubeconfig_with_token(server.kubeconfig, token, tmp_path / "whoami.kubeconfig")
    kubectl = Kubectl(kubectl_binary(33), config, tmp_path / "cache")
    whoami = kubectl.run("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").stdout
    assert whoami == f"system:serviceaccount:{NAMESPACE}:default"
    # --token on the command line, with the admin's kubeconfig stripped of its certificate
    bare = kubeconfig_with_token(server.kubeconfig, "", tmp_path / "bare.kubeconfig")
    kubectl = Kubectl(kubectl_binary(33), bare, tmp_path / "cache")
    static = kubectl.run(
        "auth", "whoami", "--token", STATIC_TOKEN, "-o", "jsonpath={.status.userInfo.username}"
    )
    assert static.stdout == "carol"
    refused = kubectl.run("auth", "whoami", "--token", "not-a-token", check=False)
    assert refused.returncode != 0 and "Unauthorized" in refused.stderr


def test_kubectl_create_token_with_audience_duration_and_bound_secret(
    server: ServerProcess, admin: Kubectl, tmp_path: Path
) -> None:
    admin.run("create", "secret", "generic", "bound", "-n", NAMESPACE, "--from-literal=a=b")
    token = admin.run(
        "create", "token", "default", "-n", NAMESPACE, "--audience", "vault",
        "--audience", "https://kubernetes.default.svc.cluster.local",
        "--duration", "20m", "--bound-object-kind", "Secret", "--bound-object-name", "bound",
    ).stdout.strip()  # fmt: skip
    config = kubeconfig_with_token(server.kubeconfig, token, tmp_path / "bound.kubeconfig")
    assert whoami(config).username == f"system:serviceaccount:{NAMESPACE}:default"
    admin.run("delete", "secret", "bound", "-n", NAMESPACE)
    with pytest.raises(ApiException) as refused:
        whoami(config)
    assert refused.value.status == 401
    too_short = admin.run(
        "create", "token", "default", "-n", NAMESPACE, "--duration", "5m", check=False
    )
    assert too_short.returncode != 0
    assert "may not specify a duration less than 10 minutes" in too_short.stderr


def test_a_static_file_token_authenticates_as_its_user(
    server: ServerProcess, tmp_path: Path
) -> None:
    info = whoami(
        kubeconfig_with_token(server.kubeconfig, STATIC_TOKEN, tmp_path / "static.kubeconfig")
    )
    assert (info.username, info.uid, info.groups) == (
        "carol",
        "uid-carol",
        ["qa", "ops", "system:authenticated"],
    )


def bad_tokens(admin: Kubectl) -> dict[str, str]:
    """One token of each way to be wrong."""
    other = admin.run("create", "token", "default", "-n", NAMESPACE, "--audience", "vault").stdout
    admin.run("create", "serviceaccount", "doomed", "-n", NAMESPACE)
    doomed = admin.run("create", "token", "doomed", "-n", NAMESPACE).stdout.strip()
    admin.run("delete", "serviceaccount", "doomed", "-n", NAMESPACE)
    good = admin.run("create", "token", "default", "-n", NAMESPACE).stdout.strip()
    header, payload, signature = good.split(".")
    return {
        "unknown": "not-a-known-token",
        "static-near-miss": STATIC_TOKEN[:-1],
        "malformed-jwt": "a.b.c",
        "wrong-signature": f"{header}.{payload}.{signature[::-1]}",
        "truncated": good[:-10],
        "wrong-audience": other.strip(),
        "deleted-account": doomed,
        "huge": "x" * 60_000,
    }


def test_every_bad_token_is_a_401_status_and_the_server_stays_ready(
    server: ServerProcess, admin: Kubectl
) -> None:
    with without_credentials(server, timeout=10) as http:
        for name, token in bad_tokens(admin).items():
            response = http.get(
                f"/api/v1/namespaces/{NAMESPACE}", headers={"Authorization": f"Bearer {token}"}
            )
            assert (name, response.status_code, response.json()) == (name, 401, UNAUTHORIZED)
        assert http.get("/readyz").status_code == 200
        # a request without a token is still anonymous, not refused 401 (RBAC then forbids it)
        anonymous = http.get(f"/api/v1/namespaces/{NAMESPACE}")
        assert anonymous.status_code == 403
        assert 'User "system:anonymous" cannot get resource' in anonymous.json()["message"]


def test_the_issuer_discovery_documents(server: ServerProcess) -> None:
    with server.client(timeout=10) as http:
        configuration = http.get("/.well-known/openid-configuration").json()
        assert configuration["issuer"] == "https://kubernetes.default.svc.cluster.local"
        assert configuration["jwks_uri"] == f"{server.url}/openid/v1/jwks"
        [key] = http.get(configuration["jwks_uri"].removeprefix(server.url)).json()["keys"]
        assert (key["kty"], key["alg"], key["use"]) == ("RSA", "RS256", "sig")


def test_the_signing_key_is_kept_across_restarts(tmp_path: Path) -> None:
    """A token issued before a restart still authenticates after it: the bootstrap key is reused."""
    process = ServerProcess(tmp_path / "data", free_port())
    process.start()
    try:
        with process.client(timeout=10) as http:
            body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest"}
            answer = http.post(
                "/api/v1/namespaces/default/serviceaccounts/default/token", json=body
            )
            token = answer.json()["status"]["token"]
        key = (tmp_path / "data" / "service-account.key").stat()
        assert key.st_mode & 0o777 == 0o600
        process.stop()
        process.start()
        with without_credentials(process, timeout=10) as http:
            review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
            whoami = http.post(
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                json=review,
                headers={"Authorization": f"Bearer {token}"},
            )
            assert whoami.json()["status"]["userInfo"]["username"] == (
                "system:serviceaccount:default:default"
            )
    finally:
        process.stop()


@pytest.mark.parametrize(
    ("contents", "flag", "message"),
    [
        (
            "only,two\n",
            "--token-auth-file",
            "invalid authentication config: token file '{path}' must have at least 3 columns"
            " (token, user name, user uid), found 2",
        ),
        (
            "not a key\n",
            "--service-account-signing-key-file",
            "invalid authentication config: failed to parse service-account-issuer-key-file: {path}:"
            " data does not contain a valid RSA or ECDSA private key",
        ),
        (
            "not a key\n",
            "--service-account-key-file",
            'invalid authentication config: failed to parse key file "{path}": data does not contain'
            " any valid RSA or ECDSA public keys",
        ),
    ],
    ids=["token-file", "signing-key", "key-file"],
)
def test_an_unusable_file_stops_the_server_at_start(
    tmp_path: Path, contents: str, flag: str, message: str
) -> None:
    path = tmp_path / "file"
    path.write_text(contents)
    process = ServerProcess(tmp_path / "data", free_port(), extra_args=(flag, str(path)))
    with pytest.raises(RuntimeError) as failed:
        process.start()
    process.stop()  # closes the exited process's output pipe
    assert "server exited with 1" in str(failed.value)
    assert message.format(path=path) in str(failed.value)
