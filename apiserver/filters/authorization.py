"""The last filter: may this user do what the request asks (kube's WithAuthorization), and the 403 that
answers a refusal here and in impersonation (responsewriters.Forbidden)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable

from apiserver.authentication.user import UserInfo
from apiserver.authorization.authorizer import Attributes, Authorizer, Decision
from apiserver.endpoints.http import SCOPE_REQUEST_INFO, SCOPE_USER, respond_error
from apiserver.endpoints.replay import Replay
from apiserver.endpoints.routing import RequestInfo
from apiserver.filters.pipeline import Exchange
from apiserver.machinery import errors

log = logging.getLogger(__name__)

_REMEMBERED = 4096
"""Allowed (user, request info) pairs kept: each client asks a few kinds of request over and over."""

DECISION_ANNOTATION = "authorization.k8s.io/decision"
REASON_ANNOTATION = "authorization.k8s.io/reason"


def authorizer_attributes(user: UserInfo, info: RequestInfo) -> Attributes:
    """kube's GetAuthorizerAttributes: the request as the authorizer (and the audit policy) sees it."""
    if info.is_resource_request:
        return Attributes(
            user,
            info.verb,
            True,
            info.namespace,
            info.api_group,
            info.api_version,
            info.resource,
            info.subresource,
            info.name,
            info.path,
        )
    return Attributes(user, info.verb, False, path=info.path)


def forbidden(attributes: Attributes, reason: str) -> errors.APIError:
    """403 worded as kube's responsewriters.Forbidden: `pods "web" is forbidden: User "jane" cannot get
    resource "pods" in API group "" in the namespace "default"[: <reason>]`."""
    quoted_user = _go_quote(attributes.user.name)
    if not attributes.resource_request:
        message = f"User {quoted_user} cannot {attributes.verb} path {_go_quote(attributes.path)}"
    else:
        resource = attributes.resource
        if attributes.subresource:
            resource = f"{resource}/{attributes.subresource}"
        where = (
            f"in the namespace {_go_quote(attributes.namespace)}"
            if attributes.namespace
            else "at the cluster scope"
        )
        message = (
            f"User {quoted_user} cannot {attributes.verb} resource {_go_quote(resource)}"
            f" in API group {_go_quote(attributes.api_group)} {where}"
        )
    # kube's sanitizer: an error never looks like HTML
    message = message.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    detail = f"{message}: {reason}" if reason else message
    return errors.forbidden(attributes.resource, attributes.api_group, attributes.name, detail)


def _go_quote(text: str) -> str:
    """Go's %q for the strings a Kubernetes name or path holds."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


async def authorize(authorizer: Authorizer, attributes: Attributes) -> tuple[Decision, str]:
    """The authorizer's decision; an authorizer that fails (a bug, a webhook down) refuses with a 500, as
    kube answers an authorization error, instead of dropping the connection."""
    try:
        return await authorizer.authorize(attributes)
    except Exception as error:
        log.exception("the authorizer failed on %s", attributes)
        raise _authorizer_failed(error) from error


def _authorizer_failed(error: Exception) -> errors.APIError:
    return errors.internal_error(f"authorization failed: {type(error).__name__}")


class AuthorizationFilter:
    """kube's WithAuthorization: every request is asked about; a decision other than Allow is a 403.

    An Allow holds while the authorizer's revision stands (authorizer.Revisioned: the replay of an answer
    relies on the same), so it is remembered for the same user object (the authenticator's, kept across a
    client's requests) and request info at that revision: a client's next request of the same kind passes
    without a coroutine or the authorizer's walk. An audited request is asked every time, for its event's
    decision and reason."""

    def __init__(self, authorizer: Authorizer) -> None:
        self.authorizer = authorizer
        self._revision = getattr(authorizer, "revision", None)
        """The authorizer's ``revision()`` (authorizer.Revisioned), when it has one."""
        self._allowed: dict[tuple[int, RequestInfo], tuple[UserInfo, object]] = {}
        """Allowed requests by the id of their user (kept alive here) and their info, with the revision."""

    def before(self, exchange: Exchange) -> Awaitable[bool] | None:
        scope = exchange.scope
        user, info = scope[SCOPE_USER], scope[SCOPE_REQUEST_INFO]
        revision = self._revision() if self._revision is not None else None
        if exchange.replay is not None and revision is not None:
            exchange.held[self] = revision  # what the decision is made on
        if revision is None or exchange.recording is not None:
            return self._decide(exchange, user, info, None)
        known = self._allowed.get((id(user), info))
        if known is not None and known[0] is user and known[1] == revision:
            return None
        return self._decide(exchange, user, info, revision)

    async def _decide(
        self, exchange: Exchange, user: UserInfo, info: RequestInfo, revision: object
    ) -> bool:
        """Ask the authorizer; an Allow at ``revision`` (None: not to be remembered) is remembered."""
        attributes = authorizer_attributes(user, info)
        try:  # authorize() inlined: one coroutine less
            decision, reason = await self.authorizer.authorize(attributes)
        except Exception as error:
            log.exception("the authorizer failed on %s", attributes)
            await respond_error(exchange.send, _authorizer_failed(error))
            return False
        allowed = decision is Decision.ALLOW
        recording = exchange.recording
        if recording is not None:
            recording.event.annotations[DECISION_ANNOTATION] = "allow" if allowed else "forbid"
            recording.event.annotations[REASON_ANNOTATION] = reason
        if allowed:
            if revision is not None:
                if len(self._allowed) >= _REMEMBERED:
                    self._allowed.clear()
                self._allowed[(id(user), info)] = (user, revision)
            return True
        await respond_error(exchange.send, forbidden(attributes, reason))
        return False

    def replay(self, exchange: Exchange, replay: Replay) -> None:
        """The decision holds while the authorizer's revision is the one it was made at; an authorizer that
        has none (a webhook's) is asked every time."""
        revision, decided_at = self._revision, exchange.held.get(self)
        if revision is None or decided_at is None:
            replay.refuse()
            return
        replay.check(lambda: revision() == decided_at)
