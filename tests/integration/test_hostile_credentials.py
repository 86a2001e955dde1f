"""The hostile-credentials corpus: one live server over TLS with RBAC gets every class of bad
credential and bad authentication header — client certificates from another CA, expired, not yet valid, for
servers only, self-signed; bearer tokens malformed, expired, wrongly signed, for another audience, unsigned,
huge; Impersonate-* headers without a user, with odd extra-key encodings, from users not allowed to; headers
past Go's 1 MiB — and for each asserts kube's answer class (401 Unauthorized, 403 Forbidden, 400 for
impersonation headers that make no request, 431 past the header bound), never a 5xx, within a time bound; at
the end the server is still ready.

Each case is data: (name, who sends it, its headers, the statuses that are right). The exact words are pinned
by the finer tests (tests/e2e/test_tls.py, test_tokens.py, test_security_acceptance.py); here the point is
that none of them, in one run against one process, hurts the server or lets anyone in."""

from __future__ import annotations

import base64
import contextlib
import datetime
import json
import socket
import ssl
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID

from tests import certs
from tests.serverproc import CA_FILE, ServerProcess, free_port
from tests.tokens import UNAUTHORIZED
from tests.userconfig import server_ca

pytestmark = pytest.mark.timeout(120)
ANSWER_WITHIN = 5.0  # seconds: every refusal takes milliseconds; room for a loaded CI machine
PATH = "/api/v1/namespaces/default/configmaps"


class Case(NamedTuple):
    name: str
    sender: str
    """"admin" (the written kubeconfig), "nobody" (no client certificate), "user" (a certificate
    without bindings) or the name of a bad certificate (CERTIFICATES)."""
    headers: dict[str, str | bytes]
    allowed: tuple[int, ...]


DAY = datetime.timedelta(days=1)
CERTIFICATES: dict[str, Callable[[certs.Pair], certs.Pair]] = {
    "another CA": lambda _: certs.client(certs.ca("intruder"), "mallory", ("system:masters",)),
    "self-signed": lambda _: certs.client(
        certs.ca("mallory"), "mallory", ("system:masters",), is_ca=True
    ),
    "expired": lambda ca: certs.client(
        ca, "old", not_before=certs.NOW - 30 * DAY, not_after=certs.NOW - DAY
    ),
    "not yet valid": lambda ca: certs.client(
        ca, "early", not_before=certs.NOW + DAY, not_after=certs.NOW + 30 * DAY
    ),
    "server usage only": lambda ca: certs.client(
        ca, "server", usage=ExtendedKeyUsageOID.SERVER_AUTH
    ),
}
IMPERSONATE_REFUSED = (403,)
NO_USER = (
    400,
)  # kube answers these from buildImpersonationRequests' error (a 500 there); 400 here

CORPUS = [
    *(Case(f"certificate: {name}", name, {}, (401,)) for name in CERTIFICATES),
    Case("bearer: scheme only", "nobody", {"Authorization": "Bearer"}, (401, 403)),
    Case("basic auth", "nobody", {"Authorization": "Basic Zm9vOmJhcg=="}, (401, 403)),
    Case("bearer: non-ASCII", "nobody", {"Authorization": "Bearer café".encode()}, (400, 401)),
    Case("bearer: 60 kB", "nobody", {"Authorization": "Bearer " + "x" * 60_000}, (401,)),
    Case("impersonate: as nobody", "nobody", {"Impersonate-User": "admin"}, IMPERSONATE_REFUSED),
    Case("impersonate: a user", "user", {"Impersonate-User": "system:admin"}, IMPERSONATE_REFUSED),
    Case(
        "impersonate: system:masters",
        "user",
        {"Impersonate-User": "eve", "Impersonate-Group": "system:masters"},
        IMPERSONATE_REFUSED,
    ),
    Case(
        "impersonate: a service account",
        "user",
        {"Impersonate-User": "system:serviceaccount:kube-system:default"},
        IMPERSONATE_REFUSED,
    ),
    Case("impersonate: a uid", "user", {"Impersonate-User": "a", "Impersonate-Uid": "1"}, (403,)),
    Case(
        "impersonate: an extra",
        "user",
        {"Impersonate-User": "a", "Impersonate-Extra-Scopes": "x"},
        IMPERSONATE_REFUSED,
    ),
    Case("impersonate: group without user", "admin", {"Impersonate-Group": "g"}, NO_USER),
    Case("impersonate: uid without user", "admin", {"Impersonate-Uid": "1"}, NO_USER),
    Case("impersonate: extra without user", "admin", {"Impersonate-Extra-A": "b"}, NO_USER),
    Case(
        "impersonate: empty user with a group",
        "admin",
        {"Impersonate-User": "", "Impersonate-Group": "g"},
        NO_USER,
    ),
    *(
        Case(
            f"impersonate: extra key {key!r}",
            "admin",
            {"Impersonate-User": "someone", f"Impersonate-Extra-{key}": "v"},
            (403,),  # the admin may; "someone" may not list configmaps
        )
        for key in ("%zz", "%", "a%2Fb", "%00", "-", "a%20b", "%E2%82")
    ),
    Case(
        "impersonate: half a service account",
        "admin",
        {"Impersonate-User": "system:serviceaccount:"},
        (403,),
    ),
    Case("impersonate: a 60 kB user", "admin", {"Impersonate-User": "u" * 60_000}, (403,)),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("credentials") / "data",
        free_port(),
        storage="memory",
    )
    process.data_dir.mkdir()
    process.start()
    yield process
    process.stop()


def _context(
    server: ServerProcess, directory: Path, name: str, pair: certs.Pair | None
) -> ssl.SSLContext:
    """Trusts the server's CA; shows ``pair`` as its client certificate, if any."""
    context = ssl.create_default_context(cafile=server.data_dir / CA_FILE)
    if pair is not None:
        certificate, key = pair.write(directory, name.replace(" ", "-"))
        context.load_cert_chain(certificate, key)
    return context


@pytest.fixture(scope="module")
def clients(
    server: ServerProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, httpx.Client]]:
    directory = tmp_path_factory.mktemp("certificates")
    authority = server_ca(server)
    pairs: dict[str, certs.Pair | None] = {"nobody": None, "user": certs.client(authority, "user")}
    pairs |= {name: make(authority) for name, make in CERTIFICATES.items()}
    made = {
        name: httpx.Client(
            base_url=server.url,
            verify=_context(server, directory, name, pair),
            timeout=ANSWER_WITHIN * 4,
        )
        for name, pair in pairs.items()
    }
    made["admin"] = server.client(timeout=ANSWER_WITHIN * 4)
    yield made
    for client in made.values():
        client.close()


@pytest.mark.parametrize("case", CORPUS, ids=[case.name for case in CORPUS])
def test_every_bad_credential_gets_a_prompt_401_403_or_400(
    clients: dict[str, httpx.Client], case: Case
) -> None:
    started = time.monotonic()
    response = clients[case.sender].get(PATH, headers=case.headers)
    took = time.monotonic() - started
    assert response.status_code in case.allowed, (response.status_code, response.text[:300])
    assert took < ANSWER_WITHIN, f"{case.name} took {took:.1f} s"
    status = response.json()
    assert (status["kind"], status["code"]) == ("Status", response.status_code)
    if response.status_code == 401:
        assert status == UNAUTHORIZED


def _raw(server: ServerProcess, headers: bytes) -> bytes:
    """The first bytes of the answer to a GET with ``headers``, as the admin, in TLS."""
    with server.connect(timeout=ANSWER_WITHIN) as connection:
        # refused before everything was sent: its answer is waiting all the same
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, ssl.SSLError):
            connection.sendall(
                b"GET " + PATH.encode() + b" HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n"
            )
        return connection.recv(256)


MIB = 1 << 20


@pytest.mark.parametrize(
    "headers",
    [
        b"X-Padding: " + b"a" * (MIB + 8192) + b"\r\n",
        b"Authorization: Bearer " + b"a" * (MIB + 8192) + b"\r\n",
        b"Impersonate-User: " + b"u" * (MIB + 8192) + b"\r\n",
        b"".join(b"Impersonate-Group: g%d\r\n" % i for i in range(3000)),
        b"".join(b"X-H%d: %s\r\n" % (i, b"v" * 100) for i in range(11_000)),
    ],
    ids=["1 MiB header", "1 MiB token", "1 MiB impersonated user", "3000 groups", "11000 headers"],
)
def test_headers_past_the_bound_are_431(server: ServerProcess, headers: bytes) -> None:
    """Go's net/http past kube's MaxHeaderBytes (1 << 20): 431, the connection closed."""
    started = time.monotonic()
    answer = _raw(server, headers)
    assert answer.startswith(b"HTTP/1.0 431 Request Header Fields Too Large"), answer
    assert time.monotonic() - started < ANSWER_WITHIN


def test_a_header_under_the_bound_is_judged_on_its_credentials(server: ServerProcess) -> None:
    """Just under a MiB is within Go's bound: read, and then refused for what it says."""
    answer = _raw(server, b"Impersonate-User: " + b"u" * (MIB - 4096) + b"\r\n")
    assert answer.startswith(b"HTTP/1.1 403 "), answer[:100]


def test_after_the_corpus_the_server_is_ready_and_admits_no_one_it_should_not(
    server: ServerProcess, clients: dict[str, httpx.Client]
) -> None:
    for name in ("nobody", "admin"):
        assert clients[name].get("/readyz").status_code == 200
    assert clients["admin"].get(PATH).status_code == 200
    assert clients["user"].get(PATH).status_code == 403
    with socket.create_connection(("127.0.0.1", server.port), timeout=ANSWER_WITHIN):
        pass  # still accepting connections


TOKENS = (
    "expired",
    "not yet valid",
    "another issuer",
    "another audience",
    "wrong signature",
    "signed by another key",
    "alg none",
    "alg HS256",
    "truncated",
    "deleted account",
    "three dots",
    "not a JWT",
)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> Any:
    return json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


def _signed(header: dict[str, Any], claims: dict[str, Any], key: rsa.RSAPrivateKey) -> str:
    signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{_b64(signature)}"


@pytest.fixture(scope="module")
def bad_tokens(server: ServerProcess, clients: dict[str, httpx.Client]) -> dict[str, str]:
    """One token of each way to be wrong: minted by the server (TokenRequest) and then altered, re-signed
    with the server's own signing key where the point is a claim and not the signature."""
    admin = clients["admin"]

    def mint(account: str, spec: dict[str, Any] | None = None) -> str:
        path = f"/api/v1/namespaces/default/serviceaccounts/{account}/token"
        response = admin.post(path, json={"spec": spec or {}})
        assert response.status_code == 201, response.text
        token: str = response.json()["status"]["token"]
        return token

    until = time.monotonic() + 10  # the serviceaccounts controller makes "default"
    while admin.get("/api/v1/namespaces/default/serviceaccounts/default").status_code != 200:
        assert time.monotonic() < until
        time.sleep(0.05)
    good = mint("default")
    header_text, payload_text, signature = good.split(".")
    header, claims = _unb64(header_text), _unb64(payload_text)
    private = serialization.load_pem_private_key(
        (server.data_dir / "service-account.key").read_bytes(), password=None
    )
    assert isinstance(private, rsa.RSAPrivateKey)
    now = int(time.time())
    admin.post("/api/v1/namespaces/default/serviceaccounts", json={"metadata": {"name": "doomed"}})
    doomed = mint("doomed")
    admin.delete("/api/v1/namespaces/default/serviceaccounts/doomed")
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return {
        "expired": _signed(
            header, {**claims, "exp": now - 3600, "iat": now - 7200, "nbf": now - 7200}, private
        ),
        "not yet valid": _signed(header, {**claims, "nbf": now + 3600, "iat": now + 3600}, private),
        "another issuer": _signed(header, {**claims, "iss": "https://evil.example.com"}, private),
        "another audience": mint("default", {"audiences": ["vault"]}),
        "wrong signature": f"{header_text}.{payload_text}.{signature[::-1]}",
        # the server's kid on another key's signature (an unknown kid falls back to every key, as kube's
        # staticPublicKeysGetter does, so the kid alone decides nothing)
        "signed by another key": _signed(header, claims, other_key),
        "alg none": f"{_b64(json.dumps({**header, 'alg': 'none'}).encode())}.{payload_text}.",
        "alg HS256": f"{_b64(json.dumps({**header, 'alg': 'HS256'}).encode())}.{payload_text}.{signature}",
        "truncated": good[:-10],
        "deleted account": doomed,
        "three dots": "a.b.c",
        "not a JWT": "not-a-token",
    }


@pytest.mark.parametrize("name", TOKENS)
def test_every_bad_token_is_a_prompt_401(
    clients: dict[str, httpx.Client], bad_tokens: dict[str, str], name: str
) -> None:
    started = time.monotonic()
    response = clients["nobody"].get(PATH, headers={"Authorization": f"Bearer {bad_tokens[name]}"})
    assert time.monotonic() - started < ANSWER_WITHIN
    assert (response.status_code, response.json()) == (401, UNAUTHORIZED)


def test_a_good_token_authenticates(
    clients: dict[str, httpx.Client], bad_tokens: dict[str, str]
) -> None:
    """The corpus is not refused for being tokens: the one they were made from authenticates (a 403: the
    default account may not list configmaps)."""
    response = clients["admin"].post(
        "/api/v1/namespaces/default/serviceaccounts/default/token", json={"spec": {}}
    )
    token = response.json()["status"]["token"]
    refused = clients["nobody"].get(PATH, headers={"Authorization": f"Bearer {token}"})
    assert refused.status_code == 403
    assert 'User "system:serviceaccount:default:default"' in refused.json()["message"]
