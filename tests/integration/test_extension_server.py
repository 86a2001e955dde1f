"""apiforge as an extension API server (issue 12, item 3), two real server processes: a ``front`` (which
knows the users: a token file, RBAC) and a ``back`` started as kube-aggregator's backends are, trusting the
front's front-proxy CA for X-Remote-* headers (k8s.io/apiserver headerrequest) and delegating the tokens and
the decisions it cannot make to the front (TokenReview, SubjectAccessReview; kube's DelegatingAuthentication
and DelegatingAuthorization options)."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import certs
from tests.serverproc import CA_FILE, ServerProcess, free_port

pytestmark = pytest.mark.timeout(120)

CAROL_TOKEN = "carol-0b6f2c1d-token"
REVIEW = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
SELF_REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    directory = tmp_path_factory.mktemp("front")
    tokens = directory / "tokens.csv"
    tokens.write_text(f'{CAROL_TOKEN},carol,uid-carol,"qa,ops"\n')
    server = ServerProcess(
        directory / "data", free_port(), extra_args=("--token-auth-file", str(tokens))
    )
    server.start()
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "alice-view"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}],
    }
    assert (
        server.http(
            "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", json=binding
        ).status_code
        == 201
    )
    yield server
    server.stop()


@pytest.fixture(scope="module")
def back(front: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    pki = front.data_dir / "pki"
    server = ServerProcess(
        tmp_path_factory.mktemp("back") / "data",
        free_port(),
        extra_args=(
            "--requestheader-client-ca-file",
            str(pki / "front-proxy-ca.crt"),
            "--requestheader-allowed-names",
            "front-proxy-client",
            "--authentication-kubeconfig",
            str(front.kubeconfig),
            "--authorization-kubeconfig",
            str(front.kubeconfig),
        ),
    )
    server.start()
    yield server
    server.stop()


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
            ],
        )
    assert answer.status_code == 201, answer.text
    info = answer.json()["status"]["userInfo"]
    assert info["username"] == "jane"
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
    with as_proxy(back, front_proxy(front)) as client:
        allowed = client.get(CONFIGMAPS, headers={"X-Remote-User": "alice"})
        refused = client.get(CONFIGMAPS, headers={"X-Remote-User": "jane"})
        probe = client.get("/readyz", headers={"X-Remote-User": "jane"})
    assert allowed.status_code == 200, allowed.text
    assert refused.status_code == 403
    assert refused.json()["message"].startswith('configmaps is forbidden: User "jane" cannot list')
    assert probe.status_code == 200  # kube's always-allowed health paths


def test_a_kubeconfig_that_cannot_be_read_stops_the_server(tmp_path: Path) -> None:
    server = ServerProcess(
        tmp_path / "data",
        free_port(),
        extra_args=("--authorization-kubeconfig", str(tmp_path / "missing.kubeconfig")),
    )
    with pytest.raises(RuntimeError, match="--authorization-kubeconfig: invalid kubeconfig"):
        server.start()
