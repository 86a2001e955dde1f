"""The delegated TokenReview and SubjectAccessReview clients against an in-process stand-in for the front
(an httpx MockTransport that counts the reviews): the request bodies kube's webhooks send, the verdicts
read back, kube's caching (a verdict is asked once per TTL, a failed call is not kept), the
always-allowed health paths."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from apiserver.authentication.authenticator import AuthenticationError
from apiserver.authentication.user import UserInfo
from apiserver.authentication.webhook import TokenReviewAuthenticator
from apiserver.authorization.authorizer import Attributes, Decision
from apiserver.authorization.webhook import SubjectAccessReviewAuthorizer


class Front:
    def __init__(self, answer: dict[str, Any] | None) -> None:
        self.answer = answer
        self.bodies: list[dict[str, Any]] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content))
        if self.answer is None:
            return httpx.Response(500, text="down")
        return httpx.Response(201, json={"status": self.answer})

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url="https://front", transport=httpx.MockTransport(self.handle)
        )


def test_a_reviewed_token_is_its_user_and_asked_once_per_ttl() -> None:
    front = Front(
        {
            "authenticated": True,
            "user": {"username": "carol", "uid": "u1", "groups": ["qa"], "extra": {"k": ["v"]}},
        }
    )
    authenticator = TokenReviewAuthenticator(front.client(), cache_ttl=10)

    async def twice() -> list[Any]:
        return [await authenticator.authenticate_token("t0k3n", ()) for _ in range(2)]

    first, second = asyncio.run(twice())
    assert first is not None and first.user == UserInfo("carol", "u1", ("qa",), {"k": ("v",)})
    assert second == first
    assert front.bodies == [
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": "t0k3n"},
        }
    ]


def test_a_refused_token_says_why_and_a_front_that_fails_is_asked_again() -> None:
    refused = TokenReviewAuthenticator(Front({"authenticated": False, "error": "expired"}).client())
    with pytest.raises(AuthenticationError, match="expired"):
        asyncio.run(refused.authenticate_token("old", ()))
    down = Front(None)
    failing = TokenReviewAuthenticator(down.client())
    for _ in range(2):
        with pytest.raises(AuthenticationError, match="token review failed"):
            asyncio.run(failing.authenticate_token("t", ()))
    assert len(down.bodies) == 2


JANE = UserInfo("jane", groups=("devs",))


def test_access_reviews_carry_the_request_and_are_kept_per_verdict() -> None:
    front = Front({"allowed": False, "denied": True, "reason": "no"})
    authorizer = SubjectAccessReviewAuthorizer(front.client())
    attributes = Attributes(JANE, "list", True, "default", "", "v1", "configmaps")

    async def twice() -> list[tuple[Decision, str]]:
        return [await authorizer.authorize(attributes) for _ in range(2)]

    assert asyncio.run(twice()) == [(Decision.DENY, "no")] * 2
    assert front.bodies == [
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": "jane",
                "groups": ["devs"],
                "resourceAttributes": {
                    "namespace": "default",
                    "verb": "list",
                    "version": "v1",
                    "resource": "configmaps",
                },
            },
        }
    ]


def test_health_paths_are_allowed_without_asking_and_a_failed_review_has_no_opinion() -> None:
    down = Front(None)
    authorizer = SubjectAccessReviewAuthorizer(down.client())
    probe = Attributes(JANE, "get", False, path="/readyz")
    assert asyncio.run(authorizer.authorize(probe)) == (Decision.ALLOW, "")
    assert down.bodies == []
    decision, reason = asyncio.run(authorizer.authorize(Attributes(JANE, "get", False, path="/x")))
    assert decision is Decision.NO_OPINION and "authorization webhook failed" in reason
