"""The authentication seam (k8s.io/apiserver pkg/authentication/authenticator, group, request/union, request/anonymous):
an authenticator turns a request's credentials into a ``UserInfo``. Client certificates, bearer tokens and
service-account tokens plug in here as more authenticators; ``request_authenticator`` composes them as
kube-apiserver does."""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, Protocol, cast

from apiserver.authentication.user import (
    ANONYMOUS,
    ANONYMOUS_USER,
    AUTHENTICATED_GROUP,
    UNAUTHENTICATED_GROUP,
    UserInfo,
)

SCOPE_STABLE_CREDENTIALS = "apiforge.stable_credentials"
"""Set on a request's scope by the authenticator that found its user when the same credentials, on the same
connection, will prove the same user until a known time (``time.time()``; infinity for as long as the server
runs: a static token, no credentials at all; a client certificate's end of validity): the request's answer
may then be replayed (endpoints/replay.py) until then. An authenticator that asks someone (a webhook) or whose
verdict can lapse at a time it cannot tell (a deleted service account) leaves it unset."""


def vouch_stable(scope: Mapping[str, Any], until: float = math.inf) -> None:
    """The user found for this request's credentials is the same until ``until`` (epoch seconds)."""
    cast(MutableMapping[str, Any], scope)[SCOPE_STABLE_CREDENTIALS] = until


def _withdraw_stable(scope: Mapping[str, Any]) -> None:
    """What an authenticator vouched for on its way to finding no user (the request-header one vouches for
    the proxy's certificate, then finds no user header) does not speak for the one that finds it."""
    cast(MutableMapping[str, Any], scope).pop(SCOPE_STABLE_CREDENTIALS, None)


class AuthenticationError(Exception):
    """Credentials were presented and are bad (an unknown token, an expired certificate): the request is
    refused (401), never served as anonymous."""

    def __init__(self, message: str = "", lasting: bool = False) -> None:
        super().__init__(message)
        self.lasting = lasting
        """The same credentials fail the same way on every later request (an expired certificate, one of
        an unknown CA): the user another authenticator finds after this failure may be vouched for."""


class Authenticator(Protocol):
    async def authenticate(self, scope: Mapping[str, Any]) -> UserInfo | None:
        """The user the ASGI HTTP ``scope``'s credentials prove, None when it carries none this
        authenticator reads; raises ``AuthenticationError`` for credentials it reads and rejects."""
        ...


class UnionAuthenticator:
    """The first user any authenticator finds (kube's union.New). One authenticator's error does not stop
    the others (a token another one knows); it is raised when none finds a user. With ``fail_on_error``
    (kube's union.NewFailOnError) the first error is raised at once."""

    def __init__(
        self, authenticators: Sequence[Authenticator], fail_on_error: bool = False
    ) -> None:
        self.authenticators = tuple(authenticators)
        self.fail_on_error = fail_on_error

    async def authenticate(self, scope: Mapping[str, Any]) -> UserInfo | None:
        failures: list[AuthenticationError] = []
        for authenticator in self.authenticators:
            try:
                user = await authenticator.authenticate(scope)
            except AuthenticationError as error:
                _withdraw_stable(scope)
                if self.fail_on_error:
                    raise
                failures.append(error)
                continue
            if user is not None:
                # an earlier failure that may end (a certificate not valid yet) would decide instead
                if not all(failure.lasting for failure in failures):
                    _withdraw_stable(scope)
                return user
            _withdraw_stable(scope)
        if failures:
            raise AuthenticationError("; ".join(str(failure) for failure in failures))
        return None


class AuthenticatedGroupAdder:
    """Adds ``system:authenticated`` to every user but the anonymous one, unless the user already carries it
    or ``system:unauthenticated`` (kube's group.AuthenticatedGroupAdder)."""

    def __init__(self, authenticator: Authenticator) -> None:
        self.authenticator = authenticator

    async def authenticate(self, scope: Mapping[str, Any]) -> UserInfo | None:
        user = await self.authenticator.authenticate(scope)
        return None if user is None else with_authenticated_group(user)


def with_authenticated_group(user: UserInfo) -> UserInfo:
    """``user`` in ``system:authenticated``, as AuthenticatedGroupAdder puts it there."""
    if user.name == ANONYMOUS_USER:
        return user
    if AUTHENTICATED_GROUP in user.groups or UNAUTHENTICATED_GROUP in user.groups:
        return user
    return UserInfo(user.name, user.uid, (*user.groups, AUTHENTICATED_GROUP), user.extra)


class AnonymousAuthenticator:
    """Every request is ``system:anonymous`` in ``system:unauthenticated`` (kube's --anonymous-auth), or the
    ``user`` given (on plain HTTP, kube's insecure-port user)."""

    def __init__(self, user: UserInfo = ANONYMOUS) -> None:
        self.user = user

    async def authenticate(self, scope: Mapping[str, Any]) -> UserInfo | None:
        vouch_stable(scope)  # no authenticator before it recognised the request's credentials
        return self.user


def request_authenticator(
    authenticators: Sequence[Authenticator],
    anonymous: bool = True,
    anonymous_user: UserInfo = ANONYMOUS,
) -> Authenticator:
    """kube-apiserver's composition (pkg/kubeapiserver/authenticator.Config.New): the union of the
    configured authenticators, their users in ``system:authenticated``; then, with ``anonymous``,
    ``anonymous_user`` for a request none of them recognises, but never for one whose credentials they
    rejected. With nothing configured, anonymous alone (one call per request) or, without it, nobody
    (every request is refused)."""
    fallback = AnonymousAuthenticator(anonymous_user)
    if not authenticators:
        return fallback if anonymous else UnionAuthenticator(())
    # one authenticator needs no union around it (one coroutine less on every request): its error is
    # the union's
    composed: Authenticator = AuthenticatedGroupAdder(
        authenticators[0] if len(authenticators) == 1 else UnionAuthenticator(authenticators)
    )
    if anonymous:
        composed = UnionAuthenticator([composed, fallback], fail_on_error=True)
    return composed
