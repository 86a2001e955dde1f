"""The authentication filter (kube's WithAuthentication): who sends the request. A request whose
credentials fail, or that no authenticator accepts, is refused with 401; otherwise its ``UserInfo`` goes on
the scope and its Authorization header goes away, so that nothing after this point can read or forward it."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable

import orjson

from apiserver.authentication.authenticator import (
    SCOPE_STABLE_CREDENTIALS,
    AuthenticationError,
    Authenticator,
)
from apiserver.authentication.user import UserInfo
from apiserver.endpoints.http import SCOPE_REQUEST_INFO, SCOPE_USER, respond
from apiserver.endpoints.replay import Replay
from apiserver.filters.audit import Auditor
from apiserver.filters.pipeline import Exchange
from apiserver.machinery import errors

log = logging.getLogger(__name__)

_UNAUTHORIZED = orjson.dumps(errors.unauthorized().status())
"""kube's Unauthorized handler: NewUnauthorized("Unauthorized") as a Status, whatever failed."""


class AuthenticationFilter:
    """A request whose user its authenticator knows at once (``authenticate_now``: no credentials, a
    remembered token, a connection's verified certificate) goes on without a coroutine."""

    def __init__(self, authenticator: Authenticator, auditor: Auditor | None = None) -> None:
        self.authenticator = authenticator
        self.auditor = auditor
        self._now = getattr(authenticator, "authenticate_now", None)

    def before(self, exchange: Exchange) -> Awaitable[bool] | None:
        if self._now is not None:
            user = self._now(exchange.scope)
            if isinstance(user, UserInfo):
                _authenticated(exchange, user)
                return None
        return self._authenticate(exchange)

    async def _authenticate(self, exchange: Exchange) -> bool:
        scope = exchange.scope
        try:
            user = await self.authenticator.authenticate(scope)
        except AuthenticationError as error:
            log.info("unable to authenticate the request: %s", error)
            user = None
        except (
            Exception
        ):  # an authenticator that breaks (a webhook down) fails the request, as in kube
            log.exception("an authenticator failed")
            user = None
        if user is None:
            if self.auditor is not None:
                self.auditor.failed_authentication(scope, scope[SCOPE_REQUEST_INFO])
            await respond(exchange.send, 401, _UNAUTHORIZED)
            return False
        _authenticated(exchange, user)
        return True

    def replay(self, exchange: Exchange, replay: Replay) -> None:
        """Replayed only while the authenticator vouched that these credentials prove this user."""
        until = exchange.scope.get(SCOPE_STABLE_CREDENTIALS)
        if until is None:
            replay.refuse()
        elif until != math.inf:
            replay.check(lambda: time.time() <= until)


def _authenticated(exchange: Exchange, user: UserInfo) -> None:
    """The user goes on the scope; the credentials leave it."""
    scope = exchange.scope
    exchange.user = scope[SCOPE_USER] = user
    headers = scope["headers"]
    for name, _ in headers:
        if name == b"authorization":
            scope["headers"] = [header for header in headers if header[0] != b"authorization"]
            break
