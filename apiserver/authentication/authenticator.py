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
    cast("MutableMapping[str, Any]", scope)[SCOPE_STABLE_CREDENTIALS] = until


def _withdraw_stable(scope: Mapping[str, Any]) -> None:
    """What an authenticator vouched for on its way to finding no user (the request-header one vouches for
    the proxy's certificate, then finds no user header) does not speak for the one that finds it."""
    cast("MutableMapping[str, Any]", scope).pop(SCOPE_STABLE_CREDENTIALS, None)


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


class Later:
    """An authenticator may also have ``authenticate_now(scope)``: ``authenticate``'s answer when it is
    known without waiting (no credentials of its kind, a remembered token), with the same effect on the
    scope, so that most requests cost the filter no coroutine; or ``LATER`` when only ``authenticate`` can
    tell (a token to look up)."""


LATER = Later()


class RequestAuthenticator:
    """kube-apiserver's composition in one step (pkg/kubeapiserver/authenticator.Config.New: union.New of the
    authenticators, group.AuthenticatedGroupAdder, then union.NewFailOnError with anonymous): the first user
    any authenticator finds, in ``system:authenticated``; one authenticator's error does not stop the others
    (a token another one knows), and is raised when none finds a user; otherwise ``anonymous`` (None: nobody).
    One coroutine rather than the four of kube's nesting, on every request.

    The last user found is remembered with its grouped answer: a remembered token's or a connection's
    certificate's user is the same object request after request, and gets the same answer without it being
    built again."""

    def __init__(self, authenticators: Sequence[Authenticator], anonymous: UserInfo | None) -> None:
        self.authenticators = tuple(authenticators)
        self.anonymous = anonymous
        self._last: tuple[UserInfo | None, UserInfo | None] = (None, None)
        nows = [
            getattr(authenticator, "authenticate_now", None) for authenticator in authenticators
        ]
        self._nows: tuple[Any, ...] | None = None if None in nows else tuple(nows)
        """Every authenticator's ``authenticate_now``, when each has one."""

    def authenticate_now(self, scope: Mapping[str, Any]) -> UserInfo | Later | None:
        """``authenticate`` when every authenticator answers at once: the first user found, or
        ``anonymous`` when none reads the request's credentials."""
        if self._nows is None:
            return LATER
        for now in self._nows:
            try:
                user = now(scope)
            except (
                AuthenticationError
            ):  # the failure, and what may still find a user, are for later
                return LATER
            if isinstance(user, Later):
                return LATER
            if user is not None:
                return self._grouped(user)
            _withdraw_stable(scope)
        if self.anonymous is None:
            return LATER  # the refusal is ``authenticate``'s
        vouch_stable(scope)
        return self.anonymous

    def _grouped(self, user: UserInfo) -> UserInfo:
        """``user`` in ``system:authenticated``, the same object as last time for the same user."""
        last, grouped = self._last
        if user is not last or grouped is None:
            grouped = with_authenticated_group(user)
            self._last = (user, grouped)
        return grouped

    async def authenticate(self, scope: Mapping[str, Any]) -> UserInfo | None:
        failures: list[str] = []
        lasting = True
        for authenticator in self.authenticators:
            try:
                user = await authenticator.authenticate(scope)
            except AuthenticationError as error:
                _withdraw_stable(scope)
                failures.append(str(error))
                lasting = lasting and error.lasting
                continue
            if user is not None:
                # a failure before it may end (a certificate not valid yet) and decide instead
                if not lasting:
                    _withdraw_stable(scope)
                return self._grouped(user)
            _withdraw_stable(scope)
        if failures:
            raise AuthenticationError("; ".join(failures))
        if self.anonymous is not None:
            vouch_stable(scope)  # no authenticator recognised the request's credentials
        return self.anonymous


def with_authenticated_group(user: UserInfo) -> UserInfo:
    """``user`` in ``system:authenticated``, as kube's AuthenticatedGroupAdder puts it there: every user but
    the anonymous one, unless the user already carries it or ``system:unauthenticated``."""
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
        return self.authenticate_now(scope)

    def authenticate_now(self, scope: Mapping[str, Any]) -> UserInfo:
        vouch_stable(scope)  # no authenticator before it recognised the request's credentials
        return self.user


def request_authenticator(
    authenticators: Sequence[Authenticator],
    anonymous: bool = True,
    anonymous_user: UserInfo = ANONYMOUS,
) -> Authenticator:
    """The request authenticator of ``authenticators`` (RequestAuthenticator); with ``anonymous``,
    ``anonymous_user`` for a request none of them recognises, but never for one whose credentials they
    rejected. With nothing configured, anonymous alone (one call per request) or, without it, nobody
    (every request is refused)."""
    if not authenticators and anonymous:
        return AnonymousAuthenticator(anonymous_user)
    return RequestAuthenticator(authenticators, anonymous_user if anonymous else None)
