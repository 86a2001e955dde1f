"""Impersonation as kube's WithImpersonation does it (k8s.io/apiserver pkg/endpoints/filters/impersonation.go
and its impersonation_test.go): each header allowed by the authorizer (verb impersonate), the new user's
groups, the headers removed, and kube's 403 for a refusal."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.authentication.authenticator import request_authenticator
from apiserver.authorization.authorizer import AlwaysAllow, Attributes, Authorizer
from apiserver.endpoints.http import ASGIApp
from apiserver.filters.authentication import AuthenticationFilter
from apiserver.filters.impersonation import ImpersonationFilter, ImpersonationKinds
from apiserver.filters.pipeline import Pipeline
from apiserver.filters.requestinfo import RequestInfoFilter
from builtin.authentication.impersonation import IMPERSONATION_KINDS
from tests.unit.filters.support import FailingAuthorizer, RuleAuthorizer, echo, request


def chain(authorizer: Authorizer, kinds: ImpersonationKinds | None) -> ASGIApp:
    return Pipeline(
        [
            RequestInfoFilter(),
            AuthenticationFilter(request_authenticator(())),
            ImpersonationFilter(authorizer, kinds),
        ],
        echo,
    )


def impersonating(
    headers: list[tuple[str, str]],
    authorizer: Authorizer | None = None,
    kinds: ImpersonationKinds | None = IMPERSONATION_KINDS,
) -> tuple[int, Any]:
    """As a server built with the built-in kinds (``kinds``) impersonates."""
    response = request(chain(authorizer or AlwaysAllow(), kinds), "GET", "/api/v1/pods", headers)
    return response.status_code, response.json()


def test_no_impersonation_header_leaves_the_user_as_authenticated() -> None:
    authorizer = RuleAuthorizer(lambda _: False)
    status, body = impersonating([("X-Other", "1")], authorizer)
    assert status == 200
    assert body["user"] == {"username": "system:anonymous", "groups": ["system:unauthenticated"]}
    assert authorizer.asked == []


def test_user_groups_uid_and_extra_become_the_user() -> None:
    status, body = impersonating(
        [
            ("Impersonate-User", "jane"),
            ("Impersonate-Group", "devs"),
            ("Impersonate-Group", "ops"),
            ("Impersonate-Uid", "1234"),
            ("Impersonate-Extra-Scopes", "view"),
            ("Impersonate-Extra-Scopes", "edit"),
            ("Impersonate-Extra-acme.com%2Fproject", "apiforge"),
        ]
    )
    assert status == 200
    assert body["user"] == {
        "username": "jane",
        "uid": "1234",
        "groups": ["devs", "ops", "system:authenticated"],
        "extra": {"acme.com/project": ["apiforge"], "scopes": ["view", "edit"]},
    }
    assert not [name for name in body["headers"] if name.startswith("impersonate-")]


def test_each_part_is_authorized_with_verb_impersonate() -> None:
    authorizer = RuleAuthorizer(lambda _: True)
    impersonating(
        [
            ("Impersonate-Uid", "1234"),
            ("Impersonate-Extra-Scopes", "view"),
            ("Impersonate-Group", "devs"),
            ("Impersonate-User", "jane"),
        ],
        authorizer,
    )
    requestor = authorizer.asked[0].user
    assert requestor.name == "system:anonymous"
    assert authorizer.asked == [
        Attributes(requestor, "impersonate", True, "", "", "v1", "users", "", "jane"),
        Attributes(requestor, "impersonate", True, "", "", "v1", "groups", "", "devs"),
        Attributes(
            requestor, "impersonate", True, "", "authentication.k8s.io", "v1", "userextras", "scopes", "view"
        ),
        Attributes(requestor, "impersonate", True, "", "authentication.k8s.io", "v1", "uids", "", "1234"),
    ]  # fmt: skip


def test_a_service_account_user_is_impersonated_as_a_service_account() -> None:
    authorizer = RuleAuthorizer(lambda _: True)
    status, body = impersonating(
        [("Impersonate-User", "system:serviceaccount:team-a:builder")], authorizer
    )
    assert status == 200
    assert body["user"] == {
        "username": "system:serviceaccount:team-a:builder",
        "groups": [
            "system:serviceaccounts",
            "system:serviceaccounts:team-a",
            "system:authenticated",
        ],
    }
    [asked] = authorizer.asked
    assert (asked.resource, asked.namespace, asked.name) == ("serviceaccounts", "team-a", "builder")


def test_a_malformed_service_account_name_is_a_user() -> None:
    authorizer = RuleAuthorizer(lambda _: True)
    impersonating([("Impersonate-User", "system:serviceaccount:Team:x:y")], authorizer)
    assert authorizer.asked[0].resource == "users"


def test_groups_given_with_a_service_account_replace_its_groups() -> None:
    _, body = impersonating(
        [("Impersonate-User", "system:serviceaccount:a:b"), ("Impersonate-Group", "extra")]
    )
    assert body["user"]["groups"] == ["extra", "system:authenticated"]


def test_impersonating_anonymous_keeps_it_unauthenticated() -> None:
    _, body = impersonating([("Impersonate-User", "system:anonymous")])
    assert body["user"] == {"username": "system:anonymous", "groups": ["system:unauthenticated"]}
    _, body = impersonating(
        [("Impersonate-User", "jane"), ("Impersonate-Group", "system:unauthenticated")]
    )
    assert body["user"] == {"username": "jane", "groups": ["system:unauthenticated"]}


def test_a_refused_impersonation_is_403_worded_as_kube() -> None:
    authorizer = RuleAuthorizer(lambda a: a.resource != "groups", reason="not in the team")
    response = request(
        chain(authorizer, IMPERSONATION_KINDS),
        "GET",
        "/api/v1/pods",
        [("Impersonate-User", "jane"), ("Impersonate-Group", "admins")],
    )
    assert response.status_code == 403
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'groups "admins" is forbidden: User "system:anonymous" cannot impersonate resource'
        ' "groups" in API group "" at the cluster scope: not in the team',
        "reason": "Forbidden",
        "details": {"name": "admins", "kind": "groups"},
        "code": 403,
    }


def test_a_refused_extra_names_its_key_as_subresource() -> None:
    authorizer = RuleAuthorizer(lambda a: a.resource != "userextras")
    response = request(
        chain(authorizer, IMPERSONATION_KINDS),
        "GET",
        "/api/v1/pods",
        [("Impersonate-User", "jane"), ("Impersonate-Extra-Scopes", "admin")],
    )
    assert response.status_code == 403
    assert response.json()["message"] == (
        'userextras.authentication.k8s.io "admin" is forbidden: User "system:anonymous" cannot'
        ' impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the'
        " cluster scope"
    )


def test_groups_without_a_user_are_a_bad_request() -> None:
    # kube answers 500 (InternalError); user input never yields a 500 here
    response = request(
        chain(AlwaysAllow(), IMPERSONATION_KINDS),
        "GET",
        "/api/v1/pods",
        [("Impersonate-Group", "devs")],
    )
    assert response.status_code == 400
    assert response.json()["reason"] == "BadRequest"
    assert response.json()["message"] == ('requested groups "devs" without impersonating a user')


def test_an_authorizer_that_fails_refuses_the_impersonation_with_a_500_status() -> None:
    response = request(
        chain(FailingAuthorizer(), IMPERSONATION_KINDS),
        "GET",
        "/api/v1/pods",
        [("Impersonate-User", "jane")],
    )
    assert response.status_code == 500
    assert response.json()["message"] == (
        "Internal error occurred: authorization failed: ConnectionError"
    )


def test_service_accounts_uids_and_extras_are_authorized_where_the_kinds_say() -> None:
    """The filter names none of them: the resource and group come from the kinds handed to it."""
    authorizer = RuleAuthorizer(lambda _: True)
    status, body = impersonating(
        [
            ("Impersonate-User", "system:serviceaccount:team-a:builder"),
            ("Impersonate-Uid", "1234"),
            ("Impersonate-Extra-Scopes", "view"),
        ],
        authorizer,
        ImpersonationKinds(service_accounts="robots", user_attributes_group="identity.example.com"),
    )
    assert status == 200
    assert body["user"]["username"] == "system:serviceaccount:team-a:builder"
    assert [(a.api_group, a.resource, a.subresource, a.namespace) for a in authorizer.asked] == [
        ("", "robots", "", "team-a"),
        ("identity.example.com", "userextras", "scopes", ""),
        ("identity.example.com", "uids", "", ""),
    ]


def test_without_kinds_users_and_groups_are_impersonated() -> None:
    status, body = impersonating(
        [("Impersonate-User", "jane"), ("Impersonate-Group", "devs")], kinds=None
    )
    assert status == 200
    assert body["user"] == {"username": "jane", "groups": ["devs", "system:authenticated"]}


@pytest.mark.parametrize(
    ("headers", "what"),
    [
        ([("Impersonate-User", "system:serviceaccount:a:b")], "service account"),
        ([("Impersonate-User", "jane"), ("Impersonate-Uid", "1")], "uid"),
        ([("Impersonate-User", "jane"), ("Impersonate-Extra-Scopes", "v")], "extra 'scopes'"),
    ],
)
def test_without_kinds_what_they_define_is_refused_as_an_unknown_type(
    headers: list[tuple[str, str]], what: str
) -> None:
    """kube's WithImpersonation answers an impersonation request of a type it does not know with 403."""
    authorizer = RuleAuthorizer(lambda _: True)
    status, body = impersonating(headers, authorizer, kinds=None)
    assert status == 403
    assert body["reason"] == "Forbidden"
    assert body["message"] == (
        f"forbidden: unknown impersonation request type: {what} (the server was handed no kinds that"
        " define it)"
    )
    assert authorizer.asked == []
