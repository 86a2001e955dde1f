"""The authorization filter (kube's WithAuthorization): the authorizer asked about every request with the
attributes kube's GetAuthorizerAttributes gives, and kube's 403 messages (responsewriters.Forbidden)."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from apiserver.authentication.authenticator import request_authenticator
from apiserver.authentication.user import ANONYMOUS, UserInfo
from apiserver.authorization.authorizer import Attributes, Authorizer, Decision
from apiserver.endpoints.http import ASGIApp
from apiserver.filters.authentication import AuthenticationFilter
from apiserver.filters.authorization import AuthorizationFilter
from apiserver.filters.pipeline import Pipeline
from apiserver.filters.requestinfo import RequestInfoFilter
from tests.unit.filters.support import FailingAuthorizer, RuleAuthorizer, echo, request, run


def chain(authorizer: Authorizer) -> ASGIApp:
    return Pipeline(
        [
            RequestInfoFilter(),
            AuthenticationFilter(request_authenticator(())),
            AuthorizationFilter(authorizer),
        ],
        echo,
    )


def test_an_allowed_request_is_served_and_asked_with_its_attributes() -> None:
    authorizer = RuleAuthorizer(lambda _: True)
    response = request(chain(authorizer), "DELETE", "/apis/apps/v1/namespaces/ns/deployments/web")
    assert response.status_code == 200
    assert authorizer.asked == [
        Attributes(
            ANONYMOUS,
            "delete",
            True,
            "ns",
            "apps",
            "v1",
            "deployments",
            "",
            "web",
            "/apis/apps/v1/namespaces/ns/deployments/web",
        )
    ]


def test_a_non_resource_request_is_asked_by_path() -> None:
    authorizer = RuleAuthorizer(lambda _: True)
    request(chain(authorizer), "GET", "/healthz")
    assert authorizer.asked == [Attributes(ANONYMOUS, "get", False, path="/healthz")]


def forbidden_message(method: str, path: str, reason: str = "") -> tuple[int, str, dict[str, str]]:
    response = request(chain(RuleAuthorizer(lambda _: False, reason)), method, path)
    body = response.json()
    return response.status_code, body["message"], body.get("details", {})


def test_a_namespaced_refusal_is_worded_as_kube() -> None:
    assert forbidden_message("GET", "/api/v1/namespaces/default/pods/web") == (
        403,
        'pods "web" is forbidden: User "system:anonymous" cannot get resource "pods" in API group ""'
        ' in the namespace "default"',
        {"name": "web", "kind": "pods"},
    )


def test_a_cluster_scoped_refusal_with_a_group_and_subresource() -> None:
    assert forbidden_message("PUT", "/apis/stable.example.com/v1/crontabs/c/status", "no") == (
        403,
        'crontabs.stable.example.com "c" is forbidden: User "system:anonymous" cannot update resource'
        ' "crontabs/status" in API group "stable.example.com" at the cluster scope: no',
        {"name": "c", "group": "stable.example.com", "kind": "crontabs"},
    )


def test_a_collection_refusal_names_no_object() -> None:
    status, message, details = forbidden_message("GET", "/api/v1/namespaces/kube-system/secrets")
    assert status == 403
    assert message == (
        'secrets is forbidden: User "system:anonymous" cannot list resource "secrets" in API group ""'
        ' in the namespace "kube-system"'
    )
    assert details == {"kind": "secrets"}


def test_a_non_resource_refusal_names_the_path() -> None:
    assert forbidden_message("GET", "/metrics") == (
        403,
        'forbidden: User "system:anonymous" cannot get path "/metrics"',
        {},
    )


def test_a_denial_is_a_refusal_like_no_opinion() -> None:
    authorizer = RuleAuthorizer(lambda _: False, "denied by policy", refusal=Decision.DENY)
    response = request(chain(authorizer), "GET", "/api/v1/pods")
    assert response.status_code == 403
    assert response.json()["message"].endswith(": denied by policy")


def test_html_is_never_echoed_in_a_refusal() -> None:
    # kube's sanitizer turns & < > of the message (not the reason) into HTML entities
    authorizer = RuleAuthorizer(lambda _: False)
    app = Pipeline(
        [
            RequestInfoFilter(),
            AuthenticationFilter(SingleUser(UserInfo("<script>"))),
            AuthorizationFilter(authorizer),
        ],
        echo,
    )
    message = request(app, "GET", "/healthz").json()["message"]
    assert message == 'forbidden: User "&lt;script&gt;" cannot get path "/healthz"'


class SingleUser:
    """Every request is this user."""

    def __init__(self, user: UserInfo) -> None:
        self.user = user

    async def authenticate(self, scope: object) -> UserInfo | None:
        return self.user


def test_an_authorizer_that_fails_is_a_500_status() -> None:
    response = request(chain(FailingAuthorizer()), "GET", "/api/v1/pods")
    assert response.status_code == 500
    assert response.json()["reason"] == "InternalError"
    assert response.json()["message"] == (
        "Internal error occurred: authorization failed: ConnectionError"
    )


class RevisionedAuthorizer(RuleAuthorizer):
    """A RuleAuthorizer whose policy has a revision (authorizer.Revisioned) that the test moves."""

    def __init__(self, rule: Callable[[Attributes], bool]) -> None:
        super().__init__(rule)
        self.policy_revision = 1

    def revision(self) -> object | None:
        return self.policy_revision


def test_an_allow_is_remembered_while_the_revision_stands_and_a_refusal_never() -> None:
    """The same user's same request is asked once while the authorizer's revision stands, again once it
    moves (a role or binding changed), and one that is refused is asked every time."""
    allowed = "/api/v1/namespaces/default/configmaps"
    refused = "/api/v1/namespaces/kube-system/secrets"
    authorizer = RevisionedAuthorizer(lambda attributes: attributes.resource != "secrets")
    app = chain(authorizer)

    async def exchange(client: httpx.AsyncClient) -> list[int]:
        codes = []
        for path in (allowed, allowed, refused, refused):
            codes.append((await client.get(path)).status_code)
        authorizer.policy_revision = 2
        for path in (allowed, allowed):
            codes.append((await client.get(path)).status_code)
        authorizer.rule = lambda _: False  # the policy changed without a new revision: not seen
        codes.append((await client.get(allowed)).status_code)
        authorizer.policy_revision = 3  # its revision moves: asked, and refused
        codes.append((await client.get(allowed)).status_code)
        return codes

    assert run(app, exchange) == [200, 200, 403, 403, 200, 200, 200, 403]
    asked = [attributes.resource for attributes in authorizer.asked]
    assert asked == ["configmaps", "secrets", "secrets", "configmaps", "configmaps"]


def test_an_authorizer_without_a_revision_is_asked_every_time() -> None:
    authorizer = RuleAuthorizer(lambda _: True)
    app = chain(authorizer)

    async def exchange(client: httpx.AsyncClient) -> None:
        for _ in range(3):
            assert (await client.get("/api/v1/namespaces/default/configmaps")).status_code == 200

    run(app, exchange)
    assert len(authorizer.asked) == 3
