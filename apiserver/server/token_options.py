"""The bearer-token options of `apiforge serve`, with kube-apiserver's flag names: the static token file,
and the service-account token issuer, keys and audiences, turned into the server's ``TokenAuthentication``
(the key created in the data directory when none is named)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click

from apiserver.authentication.jwtkeys import (
    DEFAULT_ISSUER,
    JWKS_PATH,
    SIGNING_KEY_FILE,
    KeyFileError,
    ensure_signing_key,
    load_jwt_keys,
)
from apiserver.authentication.token import AudienceAgnostic, TokenAuthentication
from apiserver.authentication.tokenfile import TokenFileAuthenticator, TokenFileError

__all__ = [
    "TokenOptions",
    "TokenSetupError",
    "split_values",
    "token_authentication",
    "token_flags",
]


@dataclass(frozen=True, slots=True)
class TokenOptions:
    """kube-apiserver's --token-auth-file, --service-account-issuer (repeatable: the first issues, all are
    accepted), --service-account-key-file (repeatable), --service-account-signing-key-file,
    --api-audiences (the issuers when empty) and --service-account-jwks-uri (the server's own URL's
    /openid/v1/jwks when empty)."""

    token_auth_file: str = ""
    issuers: tuple[str, ...] = (DEFAULT_ISSUER,)
    key_files: tuple[str, ...] = ()
    signing_key_file: str = ""
    api_audiences: tuple[str, ...] = ()
    jwks_uri: str = ""

    def validate(self) -> list[str]:
        """What kube-apiserver refuses in these flags, in its words."""
        problems = []
        seen: set[str] = set()
        for issuer in self.issuers:
            if not issuer:
                problems.append("service-account-issuer should not be an empty string")
            elif issuer in seen:
                problems.append(f'service-account-issuer "{issuer}" is already specified')
            seen.add(issuer)
        return problems


class TokenSetupError(Exception):
    """A token file or key file cannot be used: the server does not start (exit 1, as kube-apiserver)."""


def token_authentication(
    options: TokenOptions, data_dir: Path, server_url: str
) -> TokenAuthentication:
    """The server's token authentication: the token file's users (for the API audiences only), and the
    service-account keys, the signing key created in ``data_dir`` when none is named. Run once before any
    worker starts, so that the workers share the key."""
    audiences = options.api_audiences or options.issuers
    tokens = TokenAuthentication(api_audiences=audiences)
    try:
        if options.token_auth_file:
            tokens.authenticators.append(
                AudienceAgnostic(
                    TokenFileAuthenticator.from_file(Path(options.token_auth_file)), audiences
                )
            )
        signing = Path(options.signing_key_file or data_dir / SIGNING_KEY_FILE)
        if not options.signing_key_file:
            ensure_signing_key(signing)
        tokens.keys = load_jwt_keys(
            signing,
            [Path(f) for f in options.key_files],
            options.issuers,
            options.jwks_uri or f"{server_url}{JWKS_PATH}",
        )
    except (TokenFileError, KeyFileError) as error:
        raise TokenSetupError(f"invalid authentication config: {error}") from None
    return tokens


def split_values(values: tuple[str, ...]) -> tuple[str, ...]:
    """Comma-separated values, as pflag's StringSlice reads them (repeating the flag adds more)."""
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


def token_flags(parsed: Callable[..., None]) -> Callable[..., None]:
    """The token flags (kube-apiserver's names), handed to ``parsed`` as one ``tokens`` argument."""

    @click.option(
        "--token-auth-file",
        default="",
        help='A CSV of static bearer tokens: token,user,uid,"group1,group2".',
    )
    @click.option(
        "--service-account-issuer",
        multiple=True,
        help=f"The issuer of service-account tokens (repeatable; the first issues). Default:"
        f" {DEFAULT_ISSUER}.",
    )
    @click.option(
        "--service-account-key-file",
        multiple=True,
        help="PEM public (or private) keys that verify service-account tokens (repeatable).",
    )
    @click.option(
        "--service-account-signing-key-file",
        default="",
        help=f"The PEM private key that signs service-account tokens (default: {SIGNING_KEY_FILE}"
        " in the data directory, created on first start).",
    )
    @click.option(
        "--api-audiences",
        multiple=True,
        help="Comma-separated audiences of the API (default: the issuers).",
    )
    @click.option(
        "--service-account-jwks-uri",
        default="",
        help="The jwks_uri of /.well-known/openid-configuration (default: this server's).",
    )
    @functools.wraps(parsed)
    def with_tokens(
        *args: object,
        token_auth_file: str,
        service_account_issuer: tuple[str, ...],
        service_account_key_file: tuple[str, ...],
        service_account_signing_key_file: str,
        api_audiences: tuple[str, ...],
        service_account_jwks_uri: str,
        **kwargs: object,
    ) -> None:
        tokens = TokenOptions(
            token_auth_file,
            service_account_issuer or (DEFAULT_ISSUER,),
            service_account_key_file,
            service_account_signing_key_file,
            split_values(api_audiences),
            service_account_jwks_uri,
        )
        problems = tokens.validate()
        if problems:
            raise click.UsageError("; ".join(problems))
        parsed(*args, tokens=tokens, **kwargs)

    return with_tokens
