"""Delegated token authentication (k8s.io/apiserver pkg/authentication/authenticatorfactory's delegating
config and plugin/pkg/authenticator/token/webhook): a bearer token this server does not know is judged by
another API server, in a TokenReview posted with ``--authentication-kubeconfig``'s credentials; its verdict is
kept for ``--authentication-token-webhook-cache-ttl`` (kube's 10s), accepted or refused alike, so that a burst of
requests with one token asks once. A review that cannot be made is not kept, and fails the request (401)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence

import httpx
import orjson

from apiserver.authentication.authenticator import AuthenticationError
from apiserver.authentication.token import TokenResponse
from apiserver.authentication.user import UserInfo
from apiserver.client.ttlcache import TTLCache

log = logging.getLogger(__name__)
TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
DEFAULT_CACHE_TTL = 10.0
DEFAULT_TIMEOUT = 10.0


class TokenReviewAuthenticator:
    """A TokenAuthenticator asking a remote TokenReview API."""

    def __init__(self, client: httpx.AsyncClient, cache_ttl: float = DEFAULT_CACHE_TTL) -> None:
        self.client = client
        self.cache_ttl = cache_ttl
        self.cache: TTLCache[tuple[TokenResponse | None, str]] = TTLCache()

    async def authenticate_token(
        self, token: str, audiences: Sequence[str]
    ) -> TokenResponse | None:
        key = hashlib.sha256(orjson.dumps([token, list(audiences)])).hexdigest()
        verdict = self.cache.get(key)
        if verdict is None:
            verdict = await self._review(token, audiences)
            self.cache.set(key, verdict, self.cache_ttl)
        response, error = verdict
        if error:
            raise AuthenticationError(error)
        return response

    async def _review(
        self, token: str, audiences: Sequence[str]
    ) -> tuple[TokenResponse | None, str]:
        spec: dict[str, object] = {"token": token}
        if audiences:
            spec["audiences"] = list(audiences)
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}
        try:
            answer = await self.client.post(TOKEN_REVIEWS, content=orjson.dumps(review))
            answer.raise_for_status()
            status = orjson.loads(answer.content).get("status") or {}
        except (httpx.HTTPError, orjson.JSONDecodeError, AttributeError) as error:
            # not kept: the next request asks again
            raise AuthenticationError(f"token review failed: {error}") from None
        if not status.get("authenticated"):
            return None, str(status.get("error") or "")
        user = status.get("user") or {}
        info = UserInfo(
            str(user.get("username", "")),
            str(user.get("uid", "")),
            tuple(str(g) for g in user.get("groups") or ()),
            {str(k): tuple(str(v) for v in vs) for k, vs in (user.get("extra") or {}).items()},
        )
        return TokenResponse(info, tuple(status.get("audiences") or ())), ""
