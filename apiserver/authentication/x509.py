"""x509 client-certificate authentication, as kube's (k8s.io/apiserver pkg/authentication/request/x509):
the certificate the client presented must chain, through the intermediates it sent, to a client CA, every
certificate of the chain within its validity, with the clientAuth usage (or none, or any) along the chain;
then the user is the subject's CommonName and its groups the subject's Organizations. A certificate without
a CommonName authenticates nobody (kube's CommonNameUserConversion), so the request goes on as without one.

The certificate comes from the ASGI TLS extension (``scope["extensions"]["tls"]["client_cert_chain"]``, PEM,
leaf first), which the connection sets once per connection (apiserver/server/connection.py). The verdict is
kept in that same per-connection dict under ``VERDICT_KEY``: a certificate cannot change on a connection, so
it is verified once, and only the clock is checked again on later requests.

Chains are verified here, as Go's ``Certificate.Verify`` does, rather than by
``cryptography.x509.verification``: that verifier enforces the Web PKI profile (X509v3 only, an Authority Key
Identifier...), so it refuses the version-1 certificates that the everyday recipe (``openssl x509 -req -CA``)
makes, which kube accepts. Name constraints are not checked (kube's CAs rarely carry them).
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from apiserver.authentication.authenticator import AuthenticationError, vouch_stable
from apiserver.authentication.user import CREDENTIAL_ID, UserInfo

VERDICT_KEY = "apiforge.x509.verdict"
"""Where the authenticator keeps its verdict in a connection's TLS extension dict."""
MAX_CHAIN = 8
_CLIENT_USAGES = frozenset(
    {ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE}
)


@dataclass(frozen=True, slots=True)
class _Verdict:
    """A chain's verdict, which holds while the clock is within ``valid_from``..``valid_until`` (seconds
    since the epoch; the intersection of the chain's validity periods)."""

    user: UserInfo | None
    error: str
    valid_from: float
    valid_until: float
    lasting: bool = True
    """``error`` will be met again at any later time (only a certificate not valid yet may pass later)."""


class X509Authenticator:
    """Authenticates by client certificate against ``roots`` (the client CAs)."""

    def __init__(
        self,
        roots: Sequence[x509.Certificate],
        clock: Callable[[], float] = time.time,
        verdict_key: str = VERDICT_KEY,
    ) -> None:
        self.roots = tuple(roots)
        self.clock = clock
        self.verdict_key = verdict_key
        """Where this authenticator keeps its verdict: the request-header verifier trusts other CAs than
        the client CAs, so its verdict on the same connection is kept apart."""

    async def authenticate(self, scope: Mapping[str, Any]) -> UserInfo | None:
        return self.authenticate_now(scope)

    def authenticate_now(self, scope: Mapping[str, Any]) -> UserInfo | None:
        """The verdict on a connection's certificate is kept on it: never a wait."""
        tls = scope.get("extensions", {}).get("tls")
        if not tls:
            return None
        now = self.clock()
        verdict: _Verdict | None = tls.get(self.verdict_key)
        if verdict is None or not verdict.valid_from <= now <= verdict.valid_until:
            chain = tls.get("client_cert_chain")
            if not chain:
                return None
            verdict = self.verify(chain, now)
            tls[self.verdict_key] = verdict
        if verdict.error:
            raise AuthenticationError(verdict.error, lasting=verdict.lasting)
        if verdict.user is not None:  # the same certificate proves the same user until it expires
            vouch_stable(scope, verdict.valid_until)
        return verdict.user

    def verify(self, chain_pem: Sequence[str], now: float) -> _Verdict:
        """The verdict on a presented chain (PEM, leaf first) at ``now``; never raises."""
        try:
            chain = [x509.load_pem_x509_certificate(pem.encode()) for pem in chain_pem]
        except ValueError as error:
            return _Verdict(None, f"unreadable client certificate: {error}", now, now)
        leaf = chain[0]
        moment = datetime.datetime.fromtimestamp(now, datetime.UTC)
        try:
            path = _verify_path(leaf, chain[1:], self.roots, moment)
        except (_Invalid, ValueError) as error:  # ValueError: an extension that does not parse
            # kube's words: "verifying certificate %s failed: %w"
            return _Verdict(
                None,
                f"verifying certificate {_identify(leaf)} failed: {error}",
                now,
                now,
                lasting=not isinstance(error, _NotYetValid),
            )
        valid_from = max(c.not_valid_before_utc for c in path).timestamp()
        valid_until = min(c.not_valid_after_utc for c in path).timestamp()
        names = leaf.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        if not names or not names[0].value:
            return _Verdict(None, "", valid_from, valid_until)
        groups = tuple(
            str(o.value) for o in leaf.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
        )
        # kube's CommonNameUserConversion names the credential by the leaf's SHA-256 fingerprint
        # (k8s.io/apiserver/pkg/authentication/request/x509/x509.go): audit and SelfSubjectReview show it
        credential = f"X509SHA256={leaf.fingerprint(hashes.SHA256()).hex()}"
        user = UserInfo(str(names[0].value), groups=groups, extra={CREDENTIAL_ID: (credential,)})
        return _Verdict(user, "", valid_from, valid_until)


class _Invalid(Exception):
    pass


class _NotYetValid(_Invalid):
    """A certificate of the chain is not valid yet: the same chain may verify later."""


def _verify_path(
    leaf: x509.Certificate,
    intermediates: Sequence[x509.Certificate],
    roots: Sequence[x509.Certificate],
    now: datetime.datetime,
) -> list[x509.Certificate]:
    """The path from ``leaf`` to one of ``roots`` (Go's x509 Verify with KeyUsages [ClientAuth]); raises
    _Invalid with Go's reason otherwise. Candidates are tried depth first, so a cross-signed or reissued
    intermediate does not hide a good path."""
    _check_certificate(leaf, now)
    path = _extend([leaf], intermediates, roots, now)
    if path is None:
        raise _Invalid("x509: certificate signed by unknown authority")
    return path


def _extend(
    path: list[x509.Certificate],
    intermediates: Sequence[x509.Certificate],
    roots: Sequence[x509.Certificate],
    now: datetime.datetime,
) -> list[x509.Certificate] | None:
    current = path[-1]
    for root in roots:
        if _signed_by(current, root):
            _check_validity(root, now)
            return [*path, root]
    if len(path) >= MAX_CHAIN:
        return None
    for candidate in intermediates:
        if candidate in path or not _signed_by(current, candidate):
            continue
        constraints = _extension(candidate, x509.BasicConstraints)
        if constraints is None or not constraints.ca:
            raise _Invalid(
                f"x509: certificate {_identify(candidate)} is not authorized to sign other certificates"
            )
        if constraints.path_length is not None and len(path) - 1 > constraints.path_length:
            raise _Invalid("x509: too many intermediates for path length constraint")
        _check_certificate(candidate, now)
        found = _extend([*path, candidate], intermediates, roots, now)
        if found is not None:
            return found
    return None


def _check_certificate(certificate: x509.Certificate, now: datetime.datetime) -> None:
    """Validity, the usage for client authentication and no critical extension we cannot judge."""
    _check_validity(certificate, now)
    usages = _extension(certificate, x509.ExtendedKeyUsage)
    if usages is not None and not _CLIENT_USAGES & set(usages):
        raise _Invalid("x509: certificate specifies an incompatible key usage")
    for extension in certificate.extensions:
        if extension.critical and isinstance(extension.value, x509.UnrecognizedExtension):
            raise _Invalid("x509: unhandled critical extension")


def _check_validity(certificate: x509.Certificate, now: datetime.datetime) -> None:
    """Go's words: "current time T is after/before B"."""
    invalid: type[_Invalid]
    if now < certificate.not_valid_before_utc:
        relation, bound, invalid = "before", certificate.not_valid_before_utc, _NotYetValid
    elif now > certificate.not_valid_after_utc:
        relation, bound, invalid = "after", certificate.not_valid_after_utc, _Invalid
    else:
        return
    stamp = "%Y-%m-%dT%H:%M:%SZ"
    raise invalid(
        "x509: certificate has expired or is not yet valid: current time"
        f" {now.strftime(stamp)} is {relation} {bound.strftime(stamp)}"
    )


def _signed_by(certificate: x509.Certificate, issuer: x509.Certificate) -> bool:
    try:
        certificate.verify_directly_issued_by(issuer)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _extension(certificate: x509.Certificate, kind: type[Any]) -> Any:
    try:
        return certificate.extensions.get_extension_for_class(kind).value
    except x509.ExtensionNotFound:
        return None


def _identify(certificate: x509.Certificate) -> str:
    """As kube's certificateIdentifier: the subject and serial, enough to find the certificate again."""
    return f'SN={certificate.serial_number}, subject="{certificate.subject.rfc4514_string()}"'
