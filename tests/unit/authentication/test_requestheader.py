"""The request-header authenticator as kube's headerrequest and x509.NewDynamicCAVerifier
(requestheader_test.go's cases): the headers are the user only behind a client certificate of the
request-header CA whose CN is allowed; the first username header with a value wins, every group header's
values are groups, extra keys are lowercased and unescaped; the headers are removed once read."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from apiserver.authentication.authenticator import AuthenticationError
from apiserver.authentication.requestheader import RequestHeaderAuthenticator, RequestHeaderConfig
from apiserver.authentication.user import UserInfo
from tests import certs

PROXY_CA = certs.ca("front-proxy-ca")
PROXY = certs.client(PROXY_CA, "front-proxy-client")


def request(headers: list[tuple[str, str]], *chain: certs.Pair) -> dict[str, Any]:
    tls = {"client_cert_chain": [pair.pem for pair in chain]} if chain else {}
    return {
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers],
        "extensions": {"tls": tls},
    }


def authenticate(scope: dict[str, Any], **config: Any) -> UserInfo | None:
    authenticator = RequestHeaderAuthenticator(
        RequestHeaderConfig((PROXY_CA.certificate,), **config)
    )
    return asyncio.run(authenticator.authenticate(scope))


def test_user_groups_and_extra_from_the_headers_and_the_headers_are_removed() -> None:
    scope = request(
        [
            ("X-Remote-User", "jane"),
            ("X-Remote-Group", "devs"),
            ("X-Remote-Group", "qa"),
            ("X-Remote-Extra-Acme.com%2Fproject", "apollo"),
            ("X-Remote-Extra-Scopes", "a"),
            ("X-Remote-Extra-Scopes", "b"),
            ("Accept", "application/json"),
        ],
        PROXY,
    )
    assert authenticate(scope) == UserInfo(
        "jane",
        groups=("devs", "qa"),
        extra={"acme.com/project": ("apollo",), "scopes": ("a", "b")},
    )
    assert scope["headers"] == [(b"accept", b"application/json")]


def test_the_first_username_header_with_a_value_wins() -> None:
    scope = request([("X-Second", "bob"), ("X-First", "")], PROXY)
    user = authenticate(scope, username_headers=("X-First", "X-Second"))
    assert user is not None and user.name == "bob"


def test_without_a_certificate_the_headers_are_not_read() -> None:
    scope = request([("X-Remote-User", "jane")])
    assert authenticate(scope) is None
    assert scope["headers"] == [(b"x-remote-user", b"jane")]


def test_a_certificate_of_another_ca_fails() -> None:
    other = certs.client(certs.ca("users-ca"), "front-proxy-client")
    with pytest.raises(AuthenticationError, match="signed by unknown authority"):
        authenticate(request([("X-Remote-User", "jane")], other))


def test_a_cn_outside_the_allowed_names_fails_in_kubes_words() -> None:
    intruder = certs.client(PROXY_CA, "intruder")
    with pytest.raises(
        AuthenticationError, match="x509: subject with cn=intruder is not in the allowed list"
    ):
        authenticate(
            request([("X-Remote-User", "jane")], intruder), allowed_names=("front-proxy-client",)
        )


def test_no_username_header_leaves_the_request_to_the_others() -> None:
    assert authenticate(request([("X-Remote-Group", "devs")], PROXY)) is None


def test_the_uid_header_is_the_users_uid_and_is_removed() -> None:
    """kube 1.32's --requestheader-uid-headers (KEP-4193's UID through the front proxy)."""
    scope = request([("X-Remote-User", "jane"), ("X-Remote-Uid", "uid-jane")], PROXY)
    assert authenticate(scope) == UserInfo("jane", uid="uid-jane")
    assert scope["headers"] == []


def test_uid_headers_are_configurable_and_a_user_without_one_has_none() -> None:
    scope = request([("X-Remote-User", "jane"), ("X-Remote-Uid", "ignored")], PROXY)
    user = authenticate(scope, uid_headers=("X-Other-Uid",))
    assert user == UserInfo("jane")
