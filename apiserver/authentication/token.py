"""Bearer tokens (k8s.io/apiserver pkg/authentication/authenticator.Token, request/bearertoken,
token/union, the audience helpers): a token authenticator says whose a token is and for which audiences;
the bearer-token request authenticator reads the token of an ``Authorization: Bearer`` header and asks it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from apiserver.authentication.authenticator import (
    LATER,
    AuthenticationError,
    Later,
    vouch_stable,
)
from apiserver.authentication.jwtkeys import JWTKeys
from apiserver.authentication.tokentable import TokenTable
from apiserver.authentication.user import UserInfo

REMEMBERED = 4096
"""Tokens whose users the bearer-token authenticator keeps (the token file's: there are few)."""


@dataclass(frozen=True, slots=True)
class TokenResponse:
    """Who a token belongs to, and the audiences it was accepted for (kube's authenticator.Response)."""

    user: UserInfo
    audiences: tuple[str, ...] = ()
    stable: bool = False
    """The token proves this user for as long as the server runs (the token file's): see
    authenticator.SCOPE_STABLE_CREDENTIALS; the bearer-token authenticator remembers it."""


class TokenAuthenticator(Protocol):
    async def authenticate_token(
        self, token: str, audiences: Sequence[str]
    ) -> TokenResponse | None:
        """The user ``token`` proves for one of ``audiences`` (the API server's own when empty); None for a
        token this authenticator does not know; raises ``AuthenticationError`` for one it knows and
        refuses (expired, for another audience, of a deleted account)."""
        ...


class UnionTokenAuthenticator:
    """The first authenticator that knows the token (kube's token/union): one's refusal does not stop the
    others; the refusals are raised when none accepts."""

    def __init__(self, authenticators: Sequence[TokenAuthenticator]) -> None:
        self.authenticators = tuple(authenticators)

    async def authenticate_token(
        self, token: str, audiences: Sequence[str]
    ) -> TokenResponse | None:
        failures: list[str] = []
        for authenticator in self.authenticators:
            try:
                response = await authenticator.authenticate_token(token, audiences)
            except AuthenticationError as error:
                failures.append(str(error))
                continue
            if response is not None:
                return response
        if failures:
            raise AuthenticationError("; ".join(failures))
        return None


class AudienceAgnostic:
    """A token authenticator whose tokens name no audience (the static token file), made audience-aware as
    kube's WrapAudienceAgnosticToken does: its tokens are for the API server's ``api_audiences`` only, so a
    TokenReview that asks for another audience does not get them."""

    def __init__(self, authenticator: TokenAuthenticator, api_audiences: Sequence[str]) -> None:
        self.authenticator = authenticator
        self.api_audiences = tuple(api_audiences)

    async def authenticate_token(
        self, token: str, audiences: Sequence[str]
    ) -> TokenResponse | None:
        if audiences and self.api_audiences and not set(audiences) & set(self.api_audiences):
            return None
        response = await self.authenticator.authenticate_token(token, audiences)
        if response is None:
            return None
        return TokenResponse(response.user, self.api_audiences, response.stable)


class BearerTokenAuthenticator:
    """The request authenticator of ``Authorization: Bearer <token>`` (kube's request/bearertoken): a
    header of another scheme or an empty token is not its business (another authenticator, or anonymous,
    may take the request); a token that no token authenticator accepts fails the request (401), never
    anonymous, with kube's "invalid bearer token".

    The users of ``stable`` answers are kept by token (at most ``REMEMBERED``), so a client's every request
    with a token of the token file costs one constant-time lookup. kube-apiserver keeps every token's answer
    for 10 s (pkg/kubeapiserver/options/authentication.go, TokenSuccessCacheTTL; k8s.io/apiserver
    pkg/authentication/token/cache); a service-account token is asked afresh here, so that a deleted
    account's token stops at once, as it did before."""

    def __init__(self, authenticator: TokenAuthenticator) -> None:
        self.authenticator = authenticator
        self.remembered: TokenTable[UserInfo] = TokenTable(REMEMBERED)

    def authenticate_now(self, scope: Mapping[str, Any]) -> UserInfo | Later | None:
        """No token, or a remembered one; ``LATER`` for a token to ask about."""
        token = bearer_token(scope)
        if not token:
            return None
        user = self.remembered.get(token)
        if user is None:
            return LATER
        vouch_stable(scope)  # it was remembered for being stable
        return user

    async def authenticate(self, scope: Mapping[str, Any]) -> UserInfo | None:
        known = self.authenticate_now(scope)
        if not isinstance(known, Later):
            return known
        token = bearer_token(scope)
        response = await self.authenticator.authenticate_token(token, ())
        if response is None:
            raise AuthenticationError("invalid bearer token")
        if response.stable:
            vouch_stable(scope)
            self.remembered.put(token, response.user)
        return response.user


def bearer_token(scope: Mapping[str, Any]) -> str:
    """The token of the request's Authorization header, "" when it has none or not a bearer one. As kube's
    bearertoken: the header splits on single spaces, the scheme is case-insensitive, the token is the
    second field."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            parts = value.decode("latin-1").strip().split(" ", 2)
            if len(parts) < 2 or parts[0].lower() != "bearer":
                return ""
            return str(parts[1])
    return ""


@dataclass
class TokenAuthentication:
    """The server's bearer tokens: the API server's audiences (kube's --api-audiences), the service-account
    token keys (None: no such token is issued or accepted) and the token authenticators, asked in order (the
    token file's, then those the definitions bring), filled while the server is built."""

    api_audiences: tuple[str, ...] = ()
    keys: JWTKeys | None = None
    authenticators: list[TokenAuthenticator] = field(default_factory=list)

    def authenticator(self) -> TokenAuthenticator | None:
        """All of them as one (TokenReview and the bearer-token filter ask this), None with none."""
        return UnionTokenAuthenticator(self.authenticators) if self.authenticators else None
