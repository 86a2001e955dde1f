"""The authentication seam (k8s.io/apiserver pkg/authentication/authenticator, group, request/union, request/anonymous):
an authenticator turns a request's credentials into a ``UserInfo``. Client certificates, bearer tokens and
service-account tokens plug in here as more authenticators; ``request_authenticator`` composes them as
kube-apiserver does."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from apiserver.authentication.user import (
    ANONYMOUS,
    ANONYMOUS_USER,
    AUTHENTICATED_GROUP,
    UNAUTHENTICATED_GROUP,
    UserInfo,
)


class AuthenticationError(Exception):
    """Credentials were presented and are bad (an unknown token, an expired certificate): the request is
    refused (401), never served as anonymous."""


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
                if self.fail_on_error:
                    raise
                failures.append(error)
                continue
            if user is not None:
                return user
        if failures:
            raise AuthenticationError("; ".join(str(failure) for failure in failures))
        return None


class AuthenticatedGroupAdder:
    """Adds ``system:authenticated`` to every user but the anonymous one, unless the user already carries it
    or ``system:unauthenticated`` (kube's group.AuthenticatedGroupAdder). The last user it was given is
    remembered with its answer: a remembered token's or a connection's certificate's user is the same object
    request after request, and the next request gets the same answer without building it again."""

    def __init__(self, authenticator: Authenticator) -> None:
        self.authenticator = authenticator
        self._last: tuple[UserInfo | None, UserInfo | None] = (None, None)

    async def authenticate(self, scope: Mapping[str, Any]) -> UserInfo | None:
        user = await self.authenticator.authenticate(scope)
        if user is None:
            return None
        last, grouped = self._last
        if user is last:
            return grouped
        grouped = with_authenticated_group(user)
        self._last = (user, grouped)
        return grouped


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
