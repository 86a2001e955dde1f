"""The options that make `apiforge serve` an extension API server behind an authenticating front
(kube-aggregator or an apiforge front), named and defaulted as k8s.io/apiserver's
DelegatingAuthenticationOptions and DelegatingAuthorizationOptions: the request-header authenticator
(``--requestheader-*``), delegated token reviews (``--authentication-kubeconfig``) and delegated access reviews
(``--authorization-kubeconfig``), with kube's cache TTLs."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click
from cryptography import x509

from apiserver.authentication.requestheader import (
    DEFAULT_EXTRA_HEADERS_PREFIXES,
    DEFAULT_GROUP_HEADERS,
    DEFAULT_UID_HEADERS,
    DEFAULT_USERNAME_HEADERS,
    RequestHeaderAuthenticator,
    RequestHeaderConfig,
)
from apiserver.authentication.webhook import (
    DEFAULT_CACHE_TTL,
    DEFAULT_TIMEOUT,
    TokenReviewAuthenticator,
)
from apiserver.authorization.webhook import (
    DEFAULT_ALLOW_TTL,
    DEFAULT_ALWAYS_ALLOW_PATHS,
    DEFAULT_DENY_TTL,
    SubjectAccessReviewAuthorizer,
)
from apiserver.client.kubeconfig import KubeconfigError, RemoteServer, load_kubeconfig
from apiserver.machinery.goduration import parse_go_duration
from apiserver.machinery.scheme import ResourceType
from apiserver.server.authentication_info import lookup
from apiserver.server.pki import FRONT_PROXY_CLIENT, PKI
from apiserver.server.token_options import split_values

__all__ = ["DelegationError", "DelegationOptions", "delegation_flags"]


class DelegationError(Exception):
    """A file of these options cannot be used: the server does not start."""


@dataclass(frozen=True, slots=True)
class DelegationOptions:
    requestheader_client_ca_file: str = ""
    requestheader_allowed_names: tuple[str, ...] = ()
    requestheader_username_headers: tuple[str, ...] = DEFAULT_USERNAME_HEADERS
    requestheader_group_headers: tuple[str, ...] = DEFAULT_GROUP_HEADERS
    requestheader_extra_headers_prefix: tuple[str, ...] = DEFAULT_EXTRA_HEADERS_PREFIXES
    authentication_kubeconfig: str = ""
    authentication_cache_ttl: float = DEFAULT_CACHE_TTL
    authorization_kubeconfig: str = ""
    authorization_allow_ttl: float = DEFAULT_ALLOW_TTL
    authorization_deny_ttl: float = DEFAULT_DENY_TTL
    always_allow_paths: tuple[str, ...] = DEFAULT_ALWAYS_ALLOW_PATHS
    proxy_client_cert_file: str = ""
    proxy_client_key_file: str = ""
    requestheader_uid_headers: tuple[str, ...] = DEFAULT_UID_HEADERS

    def proxy_client_cert(self, pki_directory: Path | None) -> tuple[Path, Path] | None:
        """The certificate this server presents to the backends of its APIServices: the flags', else
        kubeadm's front-proxy-client of the PKI (None over plain HTTP without the flags)."""
        if self.proxy_client_cert_file:
            return Path(self.proxy_client_cert_file), Path(self.proxy_client_key_file)
        if pki_directory is None:
            return None
        return pki_directory / "front-proxy-client.crt", pki_directory / "front-proxy-client.key"

    def request_header_authenticator(self) -> RequestHeaderAuthenticator | None:
        """None without ``--requestheader-client-ca-file`` (as kube: no CA, no trusted proxy)."""
        config = self.request_header_config()
        return RequestHeaderAuthenticator(config) if config is not None else None

    def request_header_config(self) -> RequestHeaderConfig | None:
        """The ``--requestheader-*`` flags, None without ``--requestheader-client-ca-file``."""
        if not self.requestheader_client_ca_file:
            return None
        try:
            cas = x509.load_pem_x509_certificates(
                Path(self.requestheader_client_ca_file).read_bytes()
            )
        except (OSError, ValueError) as error:
            raise DelegationError(f"--requestheader-client-ca-file: {error}") from None
        return RequestHeaderConfig(
            tuple(cas),
            self.requestheader_allowed_names,
            self.requestheader_username_headers,
            self.requestheader_group_headers,
            self.requestheader_extra_headers_prefix,
            self.requestheader_uid_headers,
        )

    def published_request_header(self, pki: PKI | None) -> RequestHeaderConfig | None:
        """What this server tells the extension servers behind it to trust (the
        extension-apiserver-authentication ConfigMap): its own ``--requestheader-*`` flags, else, when it
        proxies with its PKI's front-proxy-client, kubeadm's setup of that certificate's CA."""
        config = self.request_header_config()
        if config is not None or pki is None or self.proxy_client_cert_file:
            return config
        return RequestHeaderConfig((pki.front_proxy_ca.certificate,), (FRONT_PROXY_CLIENT,))

    async def cluster_authentication(
        self, config_maps: ResourceType
    ) -> tuple[list[x509.Certificate], RequestHeaderConfig | None]:
        """kube's lookupMissingConfigInCluster: without ``--requestheader-client-ca-file`` but with
        ``--authentication-kubeconfig``, the front's ConfigMap names the client CAs and the proxies to
        trust; nothing otherwise. Raises AuthenticationInfoError."""
        if self.requestheader_client_ca_file or not self.authentication_kubeconfig:
            return [], None
        remote = _remote(self.authentication_kubeconfig, "--authentication-kubeconfig")
        return await lookup(remote, config_maps)

    def token_authenticator(self) -> TokenReviewAuthenticator | None:
        """The delegated TokenReviews, None without ``--authentication-kubeconfig``. Built in the serving
        process (its HTTP client belongs to that process's event loop)."""
        if not self.authentication_kubeconfig:
            return None
        remote = _remote(self.authentication_kubeconfig, "--authentication-kubeconfig")
        return TokenReviewAuthenticator(
            remote.client(DEFAULT_TIMEOUT), self.authentication_cache_ttl
        )

    def authorizer(self) -> SubjectAccessReviewAuthorizer | None:
        """The delegated SubjectAccessReviews, None without ``--authorization-kubeconfig``."""
        if not self.authorization_kubeconfig:
            return None
        remote = _remote(self.authorization_kubeconfig, "--authorization-kubeconfig")
        return SubjectAccessReviewAuthorizer(
            remote.client(DEFAULT_TIMEOUT),
            self.authorization_allow_ttl,
            self.authorization_deny_ttl,
            self.always_allow_paths,
        )

    def check(self) -> None:
        """Read every file once before serving, so that a bad one stops the server at start."""
        self.request_header_authenticator()
        if bool(self.proxy_client_cert_file) != bool(self.proxy_client_key_file):
            raise DelegationError(
                "--proxy-client-cert-file and --proxy-client-key-file must be given together"
            )
        for path, flag in (
            (self.authentication_kubeconfig, "--authentication-kubeconfig"),
            (self.authorization_kubeconfig, "--authorization-kubeconfig"),
        ):
            if path:
                _remote(path, flag)


def _remote(path: str, flag: str) -> RemoteServer:
    try:
        return load_kubeconfig(Path(path))
    except KubeconfigError as error:
        raise DelegationError(f"{flag}: {error}") from None


def _duration(value: str, flag: str) -> float:
    try:
        return parse_go_duration(value)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint=flag) from None


def delegation_flags(parsed: Callable[..., None]) -> Callable[..., None]:
    """The flags, handed to ``parsed`` as one ``delegation`` argument."""

    @click.option(
        "--requestheader-client-ca-file",
        default="",
        help="The CA of the authenticating proxies whose X-Remote-* headers name the user (off when empty).",
    )
    @click.option(
        "--requestheader-allowed-names",
        multiple=True,
        help="CommonNames of the proxies' client certificates that may name the user (any when empty).",
    )
    @click.option(
        "--requestheader-username-headers",
        multiple=True,
        help="Headers that carry the user name, first non-empty wins (default X-Remote-User).",
    )
    @click.option(
        "--requestheader-uid-headers",
        multiple=True,
        help="Headers that carry the user's UID, first non-empty wins (default X-Remote-Uid).",
    )
    @click.option(
        "--requestheader-group-headers",
        multiple=True,
        help="Headers that carry the groups (default X-Remote-Group).",
    )
    @click.option(
        "--requestheader-extra-headers-prefix",
        multiple=True,
        help="Prefixes of the headers that carry extra values (default X-Remote-Extra-).",
    )
    @click.option(
        "--authentication-kubeconfig",
        default="",
        help="A kubeconfig of the API server that reviews the bearer tokens this one does not know"
        " (TokenReview).",
    )
    @click.option(
        "--authentication-token-webhook-cache-ttl",
        default="10s",
        show_default=True,
        help="How long a token review's answer is kept.",
    )
    @click.option(
        "--authorization-kubeconfig",
        default="",
        help="A kubeconfig of the API server that decides what --authorization-mode has no opinion on"
        " (SubjectAccessReview).",
    )
    @click.option(
        "--authorization-webhook-cache-authorized-ttl",
        default="10s",
        show_default=True,
        help="How long an allowed access review is kept.",
    )
    @click.option(
        "--authorization-webhook-cache-unauthorized-ttl",
        default="10s",
        show_default=True,
        help="How long a refused access review is kept.",
    )
    @click.option(
        "--authorization-always-allow-paths",
        multiple=True,
        help="Paths allowed without an access review (default /healthz, /readyz, /livez).",
    )
    @click.option(
        "--proxy-client-cert-file",
        default="",
        help="The client certificate presented to the backends of APIServices (default: the PKI's"
        " front-proxy-client.crt).",
    )
    @click.option(
        "--proxy-client-key-file", default="", help="The key of --proxy-client-cert-file."
    )
    @functools.wraps(parsed)
    def with_delegation(
        *args: object,
        requestheader_client_ca_file: str,
        requestheader_allowed_names: tuple[str, ...],
        requestheader_username_headers: tuple[str, ...],
        requestheader_uid_headers: tuple[str, ...],
        requestheader_group_headers: tuple[str, ...],
        requestheader_extra_headers_prefix: tuple[str, ...],
        authentication_kubeconfig: str,
        authentication_token_webhook_cache_ttl: str,
        authorization_kubeconfig: str,
        authorization_webhook_cache_authorized_ttl: str,
        authorization_webhook_cache_unauthorized_ttl: str,
        authorization_always_allow_paths: tuple[str, ...],
        proxy_client_cert_file: str,
        proxy_client_key_file: str,
        **kwargs: object,
    ) -> None:
        delegation = DelegationOptions(
            requestheader_client_ca_file,
            split_values(requestheader_allowed_names),
            split_values(requestheader_username_headers) or DEFAULT_USERNAME_HEADERS,
            split_values(requestheader_group_headers) or DEFAULT_GROUP_HEADERS,
            split_values(requestheader_extra_headers_prefix) or DEFAULT_EXTRA_HEADERS_PREFIXES,
            authentication_kubeconfig,
            _duration(
                authentication_token_webhook_cache_ttl, "--authentication-token-webhook-cache-ttl"
            ),
            authorization_kubeconfig,
            _duration(
                authorization_webhook_cache_authorized_ttl,
                "--authorization-webhook-cache-authorized-ttl",
            ),
            _duration(
                authorization_webhook_cache_unauthorized_ttl,
                "--authorization-webhook-cache-unauthorized-ttl",
            ),
            split_values(authorization_always_allow_paths) or DEFAULT_ALWAYS_ALLOW_PATHS,
            proxy_client_cert_file,
            proxy_client_key_file,
            split_values(requestheader_uid_headers) or DEFAULT_UID_HEADERS,
        )
        parsed(*args, delegation=delegation, **kwargs)

    return with_delegation
