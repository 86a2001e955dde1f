"""The impersonation filter (kube's WithImpersonation): `Impersonate-User`, `-Group`, `-Uid` and `-Extra-<key>`
headers make the request act as another user, once the authorizer allows the sender to `impersonate` each
of them (users, groups, uids, userextras; serviceaccounts for a `system:serviceaccount:<ns>:<name>` user).

kube's filter takes the resource of service accounts and the group of uids and extras from the API types
(corev1's ServiceAccount, authenticationv1.SchemeGroupVersion); the runtime names no kind, so the layer that
defines those kinds hands them over as ``ImpersonationKinds`` (builtin/authentication/impersonation.py)."""

from __future__ import annotations

import re
from collections.abc import Awaitable
from dataclasses import dataclass
from urllib.parse import unquote

from apiserver.authentication.user import (
    ANONYMOUS_USER,
    AUTHENTICATED_GROUP,
    UNAUTHENTICATED_GROUP,
    UserInfo,
)
from apiserver.authorization.authorizer import Attributes, Authorizer, Decision
from apiserver.endpoints.http import SCOPE_USER, Scope, respond_error
from apiserver.endpoints.replay import Replay
from apiserver.filters.authorization import authorize, forbidden
from apiserver.filters.pipeline import Exchange
from apiserver.machinery import errors

PREFIX = b"impersonate-"
USER = b"impersonate-user"
GROUP = b"impersonate-group"
UID = b"impersonate-uid"
EXTRA = b"impersonate-extra-"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


@dataclass(frozen=True, slots=True)
class ImpersonationKinds:
    """Where the API types put what is impersonated besides users and groups (core's, always)."""

    service_accounts: str
    """The core resource a `system:serviceaccount:<ns>:<name>` user is impersonated as, in its namespace."""
    user_attributes_group: str
    """The group of the `uids` and `userextras` resources a uid and each extra value are impersonated as."""


class ImpersonationFilter:
    """``kinds`` None: a server without the kinds that define service accounts and user attributes
    impersonates users and groups only, and refuses a service account, uid or extra as kube refuses an
    impersonation request of a type it does not know (403)."""

    def __init__(self, authorizer: Authorizer, kinds: ImpersonationKinds | None) -> None:
        self.authorizer = authorizer
        self.kinds = kinds

    def before(self, exchange: Exchange) -> Awaitable[bool] | None:
        for name, _ in exchange.scope["headers"]:
            if name.startswith(PREFIX):
                exchange.held[self] = True
                return self._impersonate(exchange)
        return None

    def replay(self, exchange: Exchange, replay: Replay) -> None:
        """An impersonation is authorized afresh every time: never replayed."""
        if self in exchange.held:
            replay.refuse()

    async def _impersonate(self, exchange: Exchange) -> bool:
        scope = exchange.scope
        try:
            user = await self._impersonated(scope)
        except errors.APIError as error:
            await respond_error(exchange.send, error)
            return False
        if user is not None:
            exchange.user = scope[SCOPE_USER] = user
            if exchange.recording is not None:
                exchange.recording.event.impersonated_user = user
            # the headers are spent: nothing after this filter sees them (kube deletes them)
            scope["headers"] = [h for h in scope["headers"] if not _impersonation_header(h[0])]
        return True

    async def _impersonated(self, scope: Scope) -> UserInfo | None:
        """The user to act as, once every part of it is allowed; None when no impersonation header asks for
        anything."""
        requests = _impersonation_requests(scope["headers"], scope[SCOPE_USER], self.kinds)
        if not requests:
            return None
        groups_specified = any(request.resource == "groups" for request in requests)
        username, uid = "", ""
        groups: list[str] = []
        extra: dict[str, list[str]] = {}
        for request in requests:
            if request.resource == "users":
                username = request.name
            elif request.resource == "groups":
                groups.append(request.name)
            elif request.resource == "userextras":
                extra.setdefault(request.subresource, []).append(request.name)
            elif request.resource == "uids":
                uid = request.name
            else:  # the service account
                username = f"{SERVICE_ACCOUNT_PREFIX}{request.namespace}:{request.name}"
                if not groups_specified:
                    groups = [
                        "system:serviceaccounts",
                        f"system:serviceaccounts:{request.namespace}",
                    ]
            decision, reason = await authorize(self.authorizer, request)
            if decision is not Decision.ALLOW:
                raise forbidden(request, reason)
        if username != ANONYMOUS_USER:
            if AUTHENTICATED_GROUP not in groups and UNAUTHENTICATED_GROUP not in groups:
                groups.append(AUTHENTICATED_GROUP)
        elif UNAUTHENTICATED_GROUP not in groups:
            groups.append(UNAUTHENTICATED_GROUP)
        return UserInfo(
            username, uid, tuple(groups), {key: tuple(values) for key, values in extra.items()}
        )


def _impersonation_requests(
    headers: list[tuple[bytes, bytes]], requestor: UserInfo, kinds: ImpersonationKinds | None
) -> list[Attributes]:
    """kube's buildImpersonationRequests, each as the attributes of the `impersonate` request that allows
    it: the user (or service account) first, then each group, each extra value, and the uid. Groups, extras
    or a uid without a user are refused, and so is what ``kinds`` (None) cannot place."""

    def impersonate(
        resource: str, name: str, group: str = "", namespace: str = "", subresource: str = ""
    ) -> Attributes:
        return Attributes(
            requestor, "impersonate", True, namespace, group, "v1", resource, subresource, name
        )

    user = ""
    uid = ""
    groups: list[Attributes] = []
    extras: list[Attributes] = []
    for raw_name, raw_value in headers:
        if not raw_name.startswith(PREFIX):
            continue
        value = raw_value.decode("utf-8", "replace")
        if raw_name == USER:
            user = user or value
        elif raw_name == GROUP:
            groups.append(impersonate("groups", value))
        elif raw_name == UID:
            uid = uid or value
        elif raw_name.startswith(EXTRA):
            # the key is percent-encoded in the header name (kube's unescapeExtraKey)
            key = unquote(raw_name[len(EXTRA) :].decode("latin-1"))
            group = _placed(kinds, f"extra {key!r}").user_attributes_group
            extras.append(impersonate("userextras", value, group, subresource=key))
    requests: list[Attributes] = []
    if user:
        namespace, account = _service_account(user)
        if account:
            resource = _placed(kinds, "service account").service_accounts
            requests.append(impersonate(resource, account, namespace=namespace))
        else:
            requests.append(impersonate("users", user))
    requests += groups + extras
    if uid:
        group = _placed(kinds, "uid").user_attributes_group
        requests.append(impersonate("uids", uid, group))
    if (groups or extras or uid) and not user:
        # kube answers this with a 500; it is the client's mistake, so it is a 400 here
        asked = ", ".join(f'{request.resource} "{request.name}"' for request in requests)
        raise errors.bad_request(f"requested {asked} without impersonating a user")
    return requests


def _placed(kinds: ImpersonationKinds | None, what: str) -> ImpersonationKinds:
    """``kinds``, or kube's 403 for an impersonation request of a type it does not know (its switch's
    default case)."""
    if kinds is None:
        raise errors.forbidden(
            "",
            "",
            "",
            f"unknown impersonation request type: {what} (the server was handed no kinds that define it)",
        )
    return kinds


def _service_account(user: str) -> tuple[str, str]:
    """(namespace, name) of a user named `system:serviceaccount:<namespace>:<name>` (kube's
    serviceaccount.SplitUsername), or ("", "") for any other user."""
    if not user.startswith(SERVICE_ACCOUNT_PREFIX):
        return "", ""
    parts = user[len(SERVICE_ACCOUNT_PREFIX) :].split(":")
    if (
        len(parts) == 2
        and len(parts[0]) <= 63
        and _DNS_LABEL.fullmatch(parts[0])
        and len(parts[1]) <= 253
        and _DNS_SUBDOMAIN.fullmatch(parts[1])
    ):
        return parts[0], parts[1]
    return "", ""


def _impersonation_header(name: bytes) -> bool:
    return name in (USER, GROUP, UID) or name.startswith(EXTRA)
