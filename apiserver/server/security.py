"""What serving over TLS needs, prepared once by `serve` before anything listens (and before workers fork,
so that they share it): the PKI (server/pki.py), the TLS context (server/tls.py), the client CAs and the
authenticators that trust them, and the admin's credentials for the kubeconfig. A file that cannot be read
(--tls-cert-file, --client-ca-file...) stops the server at once, with what is wrong."""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509

from apiserver.authentication.authenticator import Authenticator
from apiserver.authentication.x509 import X509Authenticator
from apiserver.server.kubeconfig import Credentials
from apiserver.server.pki import PKI, bootstrap, serving_names
from apiserver.server.tls import server_context
from apiserver.server.tlsoptions import TLSOptions


class SecurityError(Exception):
    """A TLS file of the options cannot be used."""


@dataclass(frozen=True)
class Security:
    pki: PKI
    context: ssl.SSLContext
    client_cas: tuple[x509.Certificate, ...]
    own_serving_certificate: bool

    def authenticators(self, extra_cas: Sequence[x509.Certificate] = ()) -> list[Authenticator]:
        """The x509 authenticator, trusting the generated CA, --client-ca-file's and ``extra_cas`` (an
        extension server's front's, from its extension-apiserver-authentication ConfigMap)."""
        return [X509Authenticator((*self.client_cas, *extra_cas))]

    def credentials(self) -> Credentials:
        """The admin kubeconfig's. A serving certificate of the user's own: its CA is not ours to name
        (clients use the system's trust store)."""
        pki = self.pki
        authority = b"" if self.own_serving_certificate else pki.ca.certificate_pem()
        return Credentials(authority, pki.admin.certificate_pem(), pki.admin.key_pem())


def prepare(data_dir: Path, bind_address: str, options: TLSOptions) -> Security | None:
    """None with --insecure-serving; raises SecurityError."""
    if options.insecure_serving:
        return None
    names = None if options.cert_file else serving_names(bind_address, options.sans)
    pki = bootstrap(data_dir, names)
    client_cas = [pki.ca.certificate]
    try:
        if options.client_ca_file:
            client_cas += x509.load_pem_x509_certificates(Path(options.client_ca_file).read_bytes())
        context = server_context(options, pki)
    except (OSError, ValueError) as error:  # ssl.SSLError is an OSError
        raise SecurityError(str(error)) from error
    return Security(pki, context, tuple(client_cas), bool(options.cert_file))
