"""The request-header authenticator (k8s.io/apiserver pkg/authentication/request/headerrequest and
x509.NewDynamicCAVerifier): an authenticating proxy in front of this server (kube-aggregator, an apiforge
front) says who the user is in headers (``X-Remote-User``, ``X-Remote-Uid`` (kube 1.32's
``--requestheader-uid-headers``), ``X-Remote-Group``, ``X-Remote-Extra-<key>``),
and those headers are believed only on a connection whose client certificate chains to the request-header
CA (``--requestheader-client-ca-file``) with a CommonName among ``--requestheader-allowed-names`` (any, when
that list is empty). Without such a certificate the headers are ignored, so no client can claim a user by
sending them; a certificate that fails is an error (401 unless another authenticator accepts the request).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography import x509

from apiserver.authentication.authenticator import LATER, AuthenticationError, Later
from apiserver.authentication.user import UserInfo
from apiserver.authentication.x509 import X509Authenticator

VERDICT_KEY = "apiforge.requestheader.verdict"
DEFAULT_USERNAME_HEADERS = ("X-Remote-User",)
DEFAULT_UID_HEADERS = ("X-Remote-Uid",)
DEFAULT_GROUP_HEADERS = ("X-Remote-Group",)
DEFAULT_EXTRA_HEADERS_PREFIXES = ("X-Remote-Extra-",)


@dataclass(frozen=True, slots=True)
class RequestHeaderConfig:
    """kube's RequestHeaderConfig: which headers carry the user, and which proxies may send them. kube-apiserver
    has no default headers (the flags are empty unless set); kubeadm sets the X-Remote-* ones, which
    ``request_header_flags`` uses as defaults."""

    client_cas: tuple[x509.Certificate, ...]
    allowed_names: tuple[str, ...] = ()
    username_headers: tuple[str, ...] = DEFAULT_USERNAME_HEADERS
    group_headers: tuple[str, ...] = DEFAULT_GROUP_HEADERS
    extra_headers_prefixes: tuple[str, ...] = DEFAULT_EXTRA_HEADERS_PREFIXES
    uid_headers: tuple[str, ...] = DEFAULT_UID_HEADERS


class RequestHeaderAuthenticator:
    """The user of the headers of a verified front proxy. Once it has read them, it removes them from the
    request (kube's ClearAuthenticationHeaders), so that nothing downstream forwards or reads them again."""

    def __init__(self, config: RequestHeaderConfig) -> None:
        self.verifier = X509Authenticator(config.client_cas, verdict_key=VERDICT_KEY)
        self.allowed_names = frozenset(config.allowed_names)
        self.username_headers = tuple(h.lower().encode("latin-1") for h in config.username_headers)
        self.uid_headers = tuple(h.lower().encode("latin-1") for h in config.uid_headers)
        self.group_headers = frozenset(h.lower().encode("latin-1") for h in config.group_headers)
        self.extra_prefixes = tuple(
            p.lower().encode("latin-1") for p in config.extra_headers_prefixes
        )

    def authenticate_now(self, scope: Mapping[str, Any]) -> Later | None:
        """None without a client certificate; a proxy's request is ``authenticate``'s."""
        tls = scope.get("extensions", {}).get("tls")
        return LATER if tls and tls.get("client_cert_chain") else None

    async def authenticate(self, scope: Mapping[str, Any]) -> UserInfo | None:
        tls = scope.get("extensions", {}).get("tls")
        if not tls or not tls.get("client_cert_chain"):
            return None
        proxy = await self.verifier.authenticate(scope)  # raises for a certificate that fails
        if self.allowed_names:
            name = proxy.name if proxy is not None else ""
            if name not in self.allowed_names:
                raise AuthenticationError(
                    f"x509: subject with cn={name} is not in the allowed list"
                )
        user = self._user(scope["headers"])
        if user is not None:
            self._clear(scope)
        return user

    def _user(self, headers: Sequence[tuple[bytes, bytes]]) -> UserInfo | None:
        """The user the headers name, None when no username header has a value (kube: not authenticated
        by this authenticator, so the x509 one may take the proxy's own certificate)."""
        by_name: dict[bytes, list[str]] = {}
        for name, value in headers:
            by_name.setdefault(name, []).append(value.decode("latin-1"))
        username = _first(by_name, self.username_headers)
        if not username:
            return None
        groups: list[str] = []
        extra: dict[str, list[str]] = {}
        for name, values in by_name.items():
            if name in self.group_headers:
                groups.extend(values)
                continue
            for prefix in self.extra_prefixes:
                if name.startswith(prefix) and len(name) > len(prefix):
                    # kube's unescapeExtraKey: the key was percent-encoded by the proxy, since a header
                    # name cannot carry every character a key may have ("example.org/key")
                    key = urllib.parse.unquote(name[len(prefix) :].decode("latin-1"))
                    extra.setdefault(key, []).extend(values)
                    break
        return UserInfo(
            username,
            uid=_first(by_name, self.uid_headers),
            groups=tuple(groups),
            extra={key: tuple(values) for key, values in extra.items()},
        )

    def _clear(self, scope: Mapping[str, Any]) -> None:
        headers = scope["headers"]
        scope["headers"][:] = [
            (name, value) for name, value in headers if not self._is_user_header(name)
        ]

    def _is_user_header(self, name: bytes) -> bool:
        return (
            name in self.username_headers
            or name in self.uid_headers
            or name in self.group_headers
            or name.startswith(self.extra_prefixes)
        )


def _first(by_name: Mapping[bytes, list[str]], headers: Sequence[bytes]) -> str:
    """The first non-empty value of the first of ``headers`` that has one (kube's headerValue)."""
    for header in headers:
        values = by_name.get(header)
        if values and values[0]:
            return values[0]
    return ""
