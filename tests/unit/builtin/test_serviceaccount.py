"""ServiceAccounts and their tokens through the real app in process (kube's serviceaccounts controller,
TokenREST and the service-account JWT authenticator): a default account per namespace; TokenRequest's
defaults, checks and claims as kube issues them; every kind of bad token refused with 401; TokenReview
answering through the same authenticators; the issuer's discovery documents."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import orjson
import pytest

from apiserver.authentication.jwtkeys import DEFAULT_ISSUER, ensure_signing_key, load_jwt_keys
from apiserver.authentication.token import TokenAuthentication
from apiserver.server.token_options import TokenOptions, token_authentication
from tests.inprocess import BASE_URL, InProcessServer, build_app
from tests.tokens import UNAUTHORIZED

SA_PATH = "/api/v1/namespaces/{ns}/serviceaccounts"
TOKEN_PATH = "/api/v1/namespaces/{ns}/serviceaccounts/{name}/token"
WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> TokenAuthentication:
    directory = tmp_path_factory.mktemp("tokens")
    token_file = directory / "tokens.csv"
    token_file.write_text('static-token,alice,uid-alice,"devs,ops"\n')
    return token_authentication(TokenOptions(token_auth_file=str(token_file)), directory, BASE_URL)


@pytest.fixture(scope="module")
def client(tokens: TokenAuthentication) -> Iterator[httpx.Client]:
    with InProcessServer(build_app(tokens=tokens)) as server, server.client() as http:
        yield http


def wait_for(condition: Any, what: str) -> Any:
    for _ in range(200):
        found = condition()
        if found:
            return found
        time.sleep(0.02)
    pytest.fail(f"never: {what}")


def create_namespace(client: httpx.Client, name: str) -> None:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    assert client.post("/api/v1/namespaces", json=body).status_code == 201
    wait_for(
        lambda: client.get(f"{SA_PATH.format(ns=name)}/default").status_code == 200,
        f"the default service account in {name}",
    )


def create_account(client: httpx.Client, ns: str, name: str) -> dict[str, Any]:
    body = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}
    response = client.post(SA_PATH.format(ns=ns), json=body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def create_secret(client: httpx.Client, ns: str, name: str) -> dict[str, Any]:
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}}
    response = client.post(f"/api/v1/namespaces/{ns}/secrets", json=body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def request_token(
    client: httpx.Client, ns: str, name: str, spec: dict[str, Any] | None = None
) -> httpx.Response:
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec or {}}
    return client.post(TOKEN_PATH.format(ns=ns, name=name), json=body)


def token_for(client: httpx.Client, ns: str, name: str, **spec: Any) -> str:
    response = request_token(client, ns, name, spec)
    assert response.status_code == 201, response.text
    token: str = response.json()["status"]["token"]
    return token


def whoami(client: httpx.Client, token: str) -> httpx.Response:
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    return client.post(WHOAMI, json=body, headers={"Authorization": f"Bearer {token}".encode()})


def claims_of(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    decoded: dict[str, Any] = orjson.loads(
        base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    )
    return decoded


def assert_refused(client: httpx.Client, token: str) -> None:
    response = whoami(client, token)
    assert (response.status_code, response.json()) == (401, UNAUTHORIZED)


# -- the serviceaccounts controller -----------------------------------------------------------------


def test_every_namespace_has_a_default_service_account(client: httpx.Client) -> None:
    def listed() -> set[str]:
        items = client.get("/api/v1/serviceaccounts").json()["items"]
        return {f"{sa['metadata']['namespace']}/{sa['metadata']['name']}" for sa in items}

    defaults = {
        f"{ns}/default" for ns in ("default", "kube-system", "kube-public", "kube-node-lease")
    }
    wait_for(lambda: defaults <= listed(), "the default namespaces' accounts")
    create_namespace(client, "team-a")


def test_a_deleted_default_service_account_comes_back_with_a_new_uid(client: httpx.Client) -> None:
    create_namespace(client, "team-b")
    path = f"{SA_PATH.format(ns='team-b')}/default"
    uid = client.get(path).json()["metadata"]["uid"]
    assert client.delete(path).status_code == 200
    wait_for(
        lambda: (
            client.get(path).status_code == 200
            and client.get(path).json()["metadata"]["uid"] != uid
        ),
        "the default account recreated",
    )


def test_discovery_lists_the_token_subresource_as_kube_does(client: httpx.Client) -> None:
    resources = {r["name"]: r for r in client.get("/api/v1").json()["resources"]}
    assert resources["serviceaccounts"]["shortNames"] == ["sa"]
    assert resources["serviceaccounts/token"] == {
        "name": "serviceaccounts/token",
        "singularName": "",
        "namespaced": True,
        "group": "authentication.k8s.io",
        "version": "v1",
        "kind": "TokenRequest",
        "verbs": ["create"],
    }
    group = client.get("/apis/authentication.k8s.io/v1").json()["resources"]
    assert "tokenrequests" not in {r["name"] for r in group}  # a body, not a resource
    assert (
        client.get("/apis/authentication.k8s.io/v1/namespaces/default/tokenrequests").status_code
        == 404
    )


# -- TokenRequest ------------------------------------------------------------------------------------


def test_a_token_request_is_answered_with_kubes_claims(client: httpx.Client) -> None:
    account = client.get(f"{SA_PATH.format(ns='default')}/default").json()
    before = int(time.time())
    response = request_token(client, "default", "default")
    assert response.status_code == 201
    answer = response.json()
    assert answer["apiVersion"] == "authentication.k8s.io/v1" and answer["kind"] == "TokenRequest"
    assert answer["spec"]["expirationSeconds"] == 3600  # kube's default
    assert answer["spec"]["audiences"] == [DEFAULT_ISSUER]  # the API audiences by default
    claims = claims_of(answer["status"]["token"])
    assert claims["iss"] == DEFAULT_ISSUER
    assert claims["sub"] == "system:serviceaccount:default:default"
    assert claims["aud"] == [DEFAULT_ISSUER]
    assert claims["iat"] == claims["nbf"] and before <= claims["iat"] <= int(time.time())
    assert claims["exp"] - claims["iat"] == 3600
    assert len(claims["jti"]) == 36
    assert claims["kubernetes.io"] == {
        "namespace": "default",
        "serviceaccount": {"name": "default", "uid": account["metadata"]["uid"]},
    }
    expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(claims["exp"]))
    assert answer["status"]["expirationTimestamp"] == expires


def test_a_token_bound_to_a_secret_names_it(client: httpx.Client) -> None:
    secret = create_secret(client, "default", "bound-claims")
    ref = {"kind": "Secret", "apiVersion": "v1", "name": "bound-claims"}
    token = token_for(
        client,
        "default",
        "default",
        boundObjectRef=ref,
        audiences=["x", "y"],
        expirationSeconds=900,
    )
    claims = claims_of(token)
    assert claims["kubernetes.io"]["secret"] == {
        "name": "bound-claims",
        "uid": secret["metadata"]["uid"],
    }
    assert claims["aud"] == ["x", "y"] and claims["exp"] - claims["iat"] == 900


@pytest.mark.parametrize(
    ("spec", "code", "message"),
    [
        (
            {"expirationSeconds": 599},
            422,
            'TokenRequest.authentication.k8s.io "default" is invalid: spec.expirationSeconds: Invalid'
            " value: 599: may not specify a duration less than 10 minutes",
        ),
        (
            {"expirationSeconds": 2**32 + 1},
            422,
            'TokenRequest.authentication.k8s.io "default" is invalid: spec.expirationSeconds: Invalid'
            " value: 4294967297: may not specify a duration larger than 2^32 seconds",
        ),
        (
            {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}},
            400,
            'cannot bind token for serviceaccount "default" to object of type /v1, Kind=Pod',
        ),
        (
            {"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "missing"}},
            404,
            'secrets "missing" not found',
        ),
        ({"expirationSeconds": "soon"}, 400, None),
    ],
    ids=["too-short", "too-long", "pod", "missing-secret", "wrong-type"],
)
def test_a_bad_token_request_is_refused_in_kubes_words(
    client: httpx.Client, spec: dict[str, Any], code: int, message: str | None
) -> None:
    response = request_token(client, "default", "default", spec)
    assert response.status_code == code, response.text
    assert response.json()["kind"] == "Status"
    if message is not None:
        assert response.json()["message"] == message


def test_a_token_for_a_missing_account_or_with_a_stale_uid_is_refused(client: httpx.Client) -> None:
    missing = request_token(client, "default", "nobody")
    assert (missing.status_code, missing.json()["message"]) == (
        404,
        'serviceaccounts "nobody" not found',
    )
    secret = create_secret(client, "default", "stale-uid")
    ref = {"kind": "Secret", "apiVersion": "v1", "name": "stale-uid", "uid": "not-its-uid"}
    conflict = request_token(client, "default", "default", {"boundObjectRef": ref})
    assert conflict.status_code == 409
    assert conflict.json()["message"] == (
        'Operation cannot be fulfilled on Secret "stale-uid": the UID in the bound object reference'
        " (not-its-uid) does not match the UID in record. The object might have been deleted and then"
        " recreated"
    )
    ref["uid"] = secret["metadata"]["uid"]
    assert request_token(client, "default", "default", {"boundObjectRef": ref}).status_code == 201


def test_the_body_must_name_the_url_s_account_if_it_names_one(client: httpx.Client) -> None:
    body = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "metadata": {"name": "other"},
    }
    response = client.post(TOKEN_PATH.format(ns="default", name="default"), json=body)
    assert response.status_code == 422
    assert response.json()["message"].endswith(
        'metadata.name: Invalid value: "other": must match the service account name if specified'
    )
    wrong_kind = {**body, "kind": "TokenReview", "metadata": {}}
    assert (
        client.post(TOKEN_PATH.format(ns="default", name="default"), json=wrong_kind).status_code
        == 400
    )
    assert client.get(TOKEN_PATH.format(ns="default", name="default")).status_code == 405


# -- the authenticator --------------------------------------------------------------------------------


def test_a_service_account_token_authenticates_as_the_account(client: httpx.Client) -> None:
    create_namespace(client, "team-c")
    account = create_account(client, "team-c", "builder")
    token = token_for(client, "team-c", "builder")
    response = whoami(client, token)
    assert response.status_code == 201
    assert response.json()["status"]["userInfo"] == {
        "username": "system:serviceaccount:team-c:builder",
        "uid": account["metadata"]["uid"],
        "groups": [
            "system:serviceaccounts",
            "system:serviceaccounts:team-c",
            "system:authenticated",
        ],
        "extra": {"authentication.kubernetes.io/credential-id": [f"JTI={claims_of(token)['jti']}"]},
    }


def test_a_static_file_token_authenticates_as_its_user(client: httpx.Client) -> None:
    response = whoami(client, "static-token")
    assert response.json()["status"]["userInfo"] == {
        "username": "alice",
        "uid": "uid-alice",
        "groups": ["devs", "ops", "system:authenticated"],
    }


@pytest.mark.parametrize(
    "token",
    [
        "unknown-token",
        "a.b.c",
        "eyJhbGciOiJub25lIn0.eyJpc3MiOiJodHRwczovL2t1YmVybmV0ZXMuZGVmYXVsdC5zdmMuY2x1c3Rlci5sb2NhbCJ9.",
        "\u00e9t\u00e9",
    ],
    ids=["unknown", "three-parts", "alg-none", "latin-1"],
)
def test_malformed_tokens_are_refused(client: httpx.Client, token: str) -> None:
    assert_refused(client, token)


def sign(tokens: TokenAuthentication, claims: dict[str, Any]) -> str:
    assert tokens.keys is not None
    return tokens.keys.sign(claims)


def valid_claims(client: httpx.Client, ns: str, name: str) -> dict[str, Any]:
    return claims_of(token_for(client, ns, name))


def test_an_expired_token_is_refused(client: httpx.Client, tokens: TokenAuthentication) -> None:
    claims = valid_claims(client, "default", "default")
    claims["exp"] = int(time.time()) - 120
    assert_refused(client, sign(tokens, claims))
    claims["exp"] = int(time.time()) + 120
    assert whoami(client, sign(tokens, claims)).status_code == 201  # the same claims, in date


def test_a_token_of_another_key_or_issuer_is_refused(client: httpx.Client, tmp_path: Path) -> None:
    claims = valid_claims(client, "default", "default")
    ensure_signing_key(tmp_path / "other.key")
    other_key = load_jwt_keys(tmp_path / "other.key", [], (DEFAULT_ISSUER,), "")
    assert_refused(client, other_key.sign(claims))
    other_issuer = load_jwt_keys(tmp_path / "other.key", [], ("https://elsewhere",), "")
    assert_refused(client, other_issuer.sign({**claims, "iss": "https://elsewhere"}))


def test_a_token_for_another_audience_is_refused(client: httpx.Client) -> None:
    assert_refused(client, token_for(client, "default", "default", audiences=["vault"]))


def test_a_token_of_a_deleted_or_recreated_account_is_refused(client: httpx.Client) -> None:
    create_account(client, "default", "short-lived")
    token = token_for(client, "default", "short-lived")
    assert whoami(client, token).status_code == 201
    assert client.delete(f"{SA_PATH.format(ns='default')}/short-lived").status_code == 200
    assert_refused(client, token)
    create_account(client, "default", "short-lived")  # the same name, another uid
    assert_refused(client, token)


def test_a_token_whose_bound_secret_is_deleted_is_refused(client: httpx.Client) -> None:
    create_secret(client, "default", "binding")
    ref = {"kind": "Secret", "apiVersion": "v1", "name": "binding"}
    token = token_for(client, "default", "default", boundObjectRef=ref)
    assert whoami(client, token).status_code == 201
    assert client.delete("/api/v1/namespaces/default/secrets/binding").status_code == 200
    assert_refused(client, token)
    create_secret(client, "default", "binding")  # recreated: another uid
    assert_refused(client, token)


def test_the_server_answers_after_the_bad_tokens(client: httpx.Client) -> None:
    assert client.get("/readyz").status_code == 200
    assert client.get("/api/v1/namespaces/default").status_code == 200  # anonymous still works


# -- TokenReview -------------------------------------------------------------------------------------


def review(client: httpx.Client, spec: dict[str, Any]) -> httpx.Response:
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}
    return client.post(REVIEWS, json=body)


def test_token_review_answers_for_the_audiences_it_names(client: httpx.Client) -> None:
    token = token_for(client, "default", "default", audiences=["vault", "api"])
    status = review(client, {"token": token, "audiences": ["vault"]}).json()["status"]
    assert status["authenticated"] is True and status["audiences"] == ["vault"]
    assert status["user"]["username"] == "system:serviceaccount:default:default"
    refused = review(client, {"token": token, "audiences": ["other"]}).json()["status"]
    # kube's TokenReviewStatus: authenticated is omitempty, user an empty struct
    assert refused == {
        "user": {},
        "error": 'token audiences ["vault" "api"] is invalid for the target audiences ["other"]',
    }
    # without audiences in the review, the API server's own: this token is not for it
    assert "authenticated" not in review(client, {"token": token}).json()["status"]


def test_token_review_of_static_and_unknown_tokens(client: httpx.Client) -> None:
    status = review(client, {"token": "static-token"}).json()["status"]
    assert status == {
        "authenticated": True,
        "user": {
            "username": "alice",
            "uid": "uid-alice",
            "groups": ["devs", "ops", "system:authenticated"],
        },
        "audiences": [DEFAULT_ISSUER],
    }
    # a static token is for the API server only (kube's WrapAudienceAgnosticToken)
    assert review(client, {"token": "static-token", "audiences": ["vault"]}).json()["status"] == {
        "user": {},
        "error": "invalid bearer token",
    }
    assert review(client, {"token": "nope"}).json()["status"] == {
        "user": {},
        "error": "invalid bearer token",
    }
    empty = review(client, {"token": ""})
    assert (empty.status_code, empty.json()["message"]) == (
        400,
        "token is required for TokenReview in authentication",
    )


# -- issuer discovery -----------------------------------------------------------------------------------


def test_the_issuer_discovery_documents_verify_issued_tokens(client: httpx.Client) -> None:
    config = client.get("/.well-known/openid-configuration")
    assert config.headers["content-type"] == "application/json"
    assert config.headers["cache-control"] == "public, max-age=3600"
    assert config.json()["issuer"] == DEFAULT_ISSUER
    assert config.json()["jwks_uri"] == f"{BASE_URL}/openid/v1/jwks"
    jwks = client.get("/openid/v1/jwks")
    assert jwks.headers["content-type"] == "application/jwk-set+json"
    [key] = jwks.json()["keys"]
    token = token_for(client, "default", "default", audiences=["relying-party"])
    verified = jwt.decode(token, jwt.PyJWK(key).key, algorithms=["RS256"], audience="relying-party")
    assert verified["sub"] == "system:serviceaccount:default:default"
    assert client.post("/openid/v1/jwks").status_code == 405


def test_without_keys_no_token_is_issued() -> None:
    with InProcessServer(build_app()) as server, server.client() as http:
        assert request_token(http, "default", "default").status_code == 404
        assert http.get("/openid/v1/jwks").status_code == 404
