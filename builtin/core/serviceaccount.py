"""core/v1 ServiceAccount (kube's pkg/registry/core/serviceaccount, pkg/serviceaccount and the serviceaccounts
controller): a ``default`` service account in every namespace; the ``token`` subresource issuing bound JWTs
(TokenRequest); and the authenticator of those tokens, which holds a token good only while its service
account, and the object it is bound to, still exist with the uids it names."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from apiserver.admission.interface import Attributes
from apiserver.authentication.authenticator import AuthenticationError
from apiserver.authentication.token import TokenResponse
from apiserver.authentication.user import CREDENTIAL_ID, UserInfo
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.registry.meta import new_uid
from apiserver.registry.store import ListOptions, Store
from apiserver.schema import causes
from apiserver.storage.interface import StorageError
from builtin.wants import WantsStores, WantsTokens

log = logging.getLogger(__name__)

PLURAL, SECRETS, NAMESPACES = "serviceaccounts", "secrets", "namespaces"
DEFAULT_NAME = "default"
TOKEN_REQUEST = ("authentication.k8s.io", "TokenRequest")
DEFAULT_EXPIRATION_SECONDS = 3600
MIN_EXPIRATION_SECONDS = 600  # kube's ValidateTokenRequest: "no less than 10 minutes"
MAX_EXPIRATION_SECONDS = 1 << 32
PREFIX = "system:serviceaccount:"
GROUP_PREFIX = "system:serviceaccounts"
"""The extra kube sets to ``JTI=<jti>`` (apiserver/pkg/authentication/serviceaccount CredentialIDForJTI)."""
# kube's invalidIfDeletedBefore: a token outlives its account's deletion (deletionTimestamp) by 60 s
DELETED_GRACE_SECONDS = 60
RETRY_SECONDS = 1.0


class TokenServer(WantsStores, WantsTokens, Protocol):
    """The core Stores (service accounts, secrets, pods) and the server's token keys and audiences."""


def user_name(namespace: str, name: str) -> str:
    """kube's MakeUsername."""
    return f"{PREFIX}{namespace}:{name}"


class TokenREST:
    """POST serviceaccounts/{name}/token (kube's TokenREST.Create): a JWT for the service account, for the
    requested audiences (the API server's by default) and lifetime (at least 10 minutes, an hour by
    default), bound to a Secret when asked (Pods and Nodes are not served here)."""

    def __init__(self, context: TokenServer) -> None:
        self.context = context

    async def create(self, attributes: Attributes) -> Object:
        keys = self.context.tokens.keys
        if keys is None:  # kube installs the subresource only with an issuer and a signing key
            raise errors.resource_not_found()
        namespace, name = attributes.namespace, attributes.name
        request = attributes.obj
        assert request is not None
        metadata = request.setdefault("metadata", {})
        spec = request.setdefault("spec", {})
        # spec is a struct in Go, defaulted even when the body has none (SetDefaults_TokenRequestSpec)
        spec.setdefault("expirationSeconds", DEFAULT_EXPIRATION_SECONDS)
        self._check(request, namespace, name)
        account = await self.context.store("", PLURAL).get(namespace, name)
        bound = await self._bound_object(spec.get("boundObjectRef"), namespace, name)
        audiences = list(spec.get("audiences") or self.context.tokens.api_audiences)
        spec["audiences"] = audiences
        now = int(time.time())
        expires = now + int(spec["expirationSeconds"])
        private: dict[str, Any] = {
            "namespace": namespace,
            "serviceaccount": {"name": name, "uid": account["metadata"]["uid"]},
        }
        if bound is not None:
            private["secret"] = bound
        token = keys.sign(
            {
                "sub": user_name(namespace, name),
                "aud": audiences,
                "exp": expires,
                "nbf": now,
                "iat": now,
                "jti": new_uid(),
                "kubernetes.io": private,
            }
        )
        metadata["name"], metadata["namespace"] = name, namespace
        expiration = datetime.fromtimestamp(expires, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        request["status"] = {"token": token, "expirationTimestamp": expiration}
        return request

    def _check(self, request: Object, namespace: str, name: str) -> None:
        """kube's ValidateTokenRequest and the name/namespace checks of TokenREST.Create, in its words."""
        metadata, spec = request["metadata"], request["spec"]
        problems = []
        if metadata.get("name") and metadata["name"] != name:
            problems.append(
                causes.invalid(
                    "metadata.name",
                    metadata["name"],
                    "must match the service account name if specified",
                )
            )
        if metadata.get("namespace") and metadata["namespace"] != namespace:
            problems.append(
                causes.invalid(
                    "metadata.namespace",
                    metadata["namespace"],
                    "must match the service account namespace if specified",
                )
            )
        seconds = int(spec.get("expirationSeconds") or 0)
        path = "spec.expirationSeconds"
        if seconds < MIN_EXPIRATION_SECONDS:
            problems.append(
                causes.invalid(path, seconds, "may not specify a duration less than 10 minutes")
            )
        elif seconds > MAX_EXPIRATION_SECONDS:
            problems.append(
                causes.invalid(path, seconds, "may not specify a duration larger than 2^32 seconds")
            )
        if problems:
            raise errors.invalid(
                TOKEN_REQUEST[1],
                TOKEN_REQUEST[0],
                name,
                [errors.StatusCause(c.reason, c.message, c.field) for c in problems],
            )

    async def _bound_object(
        self, ref: Object | None, namespace: str, name: str
    ) -> dict[str, str] | None:
        """The bound object's name and uid (for the token's claims), after kube's checks."""
        if not ref:
            return None
        api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
        group, _, version = api_version.rpartition("/")
        if (group, kind) != ("", "Secret"):
            raise errors.bad_request(
                f'cannot bind token for serviceaccount "{name}" to object of type'
                f" {group}/{version}, Kind={kind}"
            )
        ref_name = str(ref.get("name") or "")
        secret = await self.context.store("", SECRETS).get(namespace, ref_name)
        uid = secret["metadata"]["uid"]
        if ref.get("uid") and ref["uid"] != uid:
            raise errors.conflict(
                kind,
                group,
                ref_name,
                f"the UID in the bound object reference ({ref['uid']}) does not match the UID in"
                " record. The object might have been deleted and then recreated",
            )
        return {"name": ref_name, "uid": uid}


class ServiceAccountTokenAuthenticator:
    """kube's service-account JWT authenticator with its validator (pkg/serviceaccount/jwt.go, claims.go): a
    token of one of the server's issuers, signed by one of its keys, valid now, for a wanted audience, whose
    service account (and bound Secret) still exist with the uids it was issued for. Tokens of other issuers
    are left to the other authenticators."""

    def __init__(self, context: TokenServer) -> None:
        self.context = context

    async def authenticate_token(
        self, token: str, audiences: Sequence[str]
    ) -> TokenResponse | None:
        keys = self.context.tokens.keys
        if keys is None or keys.issued_here(token) is None:
            return None
        claims = keys.verify(token)
        matched = keys.audiences(claims, audiences, self.context.tokens.api_audiences)
        private = claims.get("kubernetes.io")
        account = private.get("serviceaccount") if isinstance(private, dict) else None
        if not isinstance(private, dict) or not isinstance(account, dict):
            raise AuthenticationError("service account token claims could not be validated")
        namespace = str(private.get("namespace") or "")
        name, uid = str(account.get("name") or ""), str(account.get("uid") or "")
        if not namespace or not name:
            raise AuthenticationError("service account token claims could not be validated")
        current = await self._current(PLURAL, namespace, name)
        if current["metadata"]["uid"] != uid:
            raise AuthenticationError(
                f"service account UID ({current['metadata']['uid']}) does not match claim ({uid})"
            )
        if _deleted(current):
            raise AuthenticationError(f"service account {namespace}/{name} has been deleted")
        secret = private.get("secret")
        if isinstance(secret, dict):
            secret_name, secret_uid = str(secret.get("name") or ""), str(secret.get("uid") or "")
            bound = await self._current(SECRETS, namespace, secret_name)
            if bound["metadata"]["uid"] != secret_uid:
                raise AuthenticationError(
                    f"secret UID ({bound['metadata']['uid']}) does not match service account secret"
                    f" ref claim ({secret_uid})"
                )
            if _deleted(bound):
                raise AuthenticationError(f"secret {namespace}/{secret_name} has been deleted")
        extra = {CREDENTIAL_ID: (f"JTI={claims['jti']}",)} if claims.get("jti") else {}
        user = UserInfo(
            user_name(namespace, name),
            uid,
            (GROUP_PREFIX, f"{GROUP_PREFIX}:{namespace}"),
            extra,
        )
        return TokenResponse(user, matched)

    async def _current(self, plural: str, namespace: str, name: str) -> Object:
        try:
            return await self.context.store("", plural).get(namespace, name)
        except errors.APIError as error:
            raise AuthenticationError(error.message) from None


def _deleted(obj: Object) -> bool:
    stamp = obj["metadata"].get("deletionTimestamp")
    if not stamp:
        return False
    deleted = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
    return deleted < time.time() - DELETED_GRACE_SECONDS


class ServiceAccountsController:
    """kube's serviceaccounts controller: a ``default`` service account in every active namespace,
    created when the namespace appears and again whenever it is deleted."""

    leader_only = True

    def __init__(self, context: TokenServer) -> None:
        self.context = context
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._follow(NAMESPACES, self._namespace_seen)),
            asyncio.create_task(self._follow(PLURAL, self._account_gone)),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _follow(self, plural: str, seen: Any) -> None:
        """List, then watch from the list's revision, handing every object (and event type) to ``seen``;
        start over whenever the watch ends, as an informer does."""
        store: Store = self.context.store("", plural)
        while True:
            try:
                page = await store.list(None, ListOptions())
                for obj in page.items:
                    await seen("ADDED", obj)
                async for event in store.watch(None, page.revision, None):
                    await seen(event.type, event.object)
            except (errors.APIError, StorageError) as error:
                log.warning(
                    "the serviceaccounts controller lists %s again after: %s", plural, error
                )
            await asyncio.sleep(RETRY_SECONDS)

    async def _namespace_seen(self, event: str, namespace: Object) -> None:
        metadata = namespace["metadata"]
        if event != "DELETED" and not metadata.get("deletionTimestamp"):
            await self._ensure(metadata["name"])

    async def _account_gone(self, event: str, account: Object) -> None:
        metadata = account["metadata"]
        if event == "DELETED" and metadata["name"] == DEFAULT_NAME:
            await self._ensure(metadata["namespace"])

    async def _ensure(self, namespace: str) -> None:
        account = {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": DEFAULT_NAME, "namespace": namespace},
        }
        try:
            await self.context.store("", PLURAL).create(namespace, account)
        except errors.APIError as error:
            # it exists already, or its namespace is going or gone: nothing to do
            if error.reason not in ("AlreadyExists", "Forbidden", "NotFound"):
                log.warning("creating the default service account in %s: %s", namespace, error)
