"""The server's TLS context, as kube-apiserver's secure serving configures Go's (k8s.io/apiserver
pkg/server/secure_serving.go): the serving certificate, TLS 1.2 at least unless told otherwise, the cipher
suites asked for, and a client certificate requested but never required (``tls.RequestClientCert``): the x509
authenticator judges it, a request without one goes on to the other authenticators."""

from __future__ import annotations

import ssl

from apiserver.server.openssl import request_any_client_certificate
from apiserver.server.pki import PKI
from apiserver.server.tlsoptions import TLSOptions

_X509_V_FLAG_NO_CHECK_TIME = 0x200000  # openssl/x509_vfy.h; not in Python's ssl.VerifyFlags


def server_context(options: TLSOptions, pki: PKI) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    if options.cert_file:
        context.load_cert_chain(options.cert_file, options.private_key_file)
    else:
        context.load_cert_chain(pki.serving_cert_file, pki.serving_key_file)
    context.minimum_version = options.minimum_version
    # one session ticket per connection, as Go's server sends (crypto/tls handshake_server_tls13.go
    # sendSessionTickets: "we only ever send one ticket per connection"), not OpenSSL's two: each costs the
    # handshake ~15 us, ~120 us when the client sent a certificate (the session carrying it is copied)
    context.num_tickets = 1
    if options.openssl_ciphers:
        context.set_ciphers(options.openssl_ciphers)
    if not request_any_client_certificate(context):
        # OpenSSL judges client certificates itself: against the client CAs, but not their time, so that an
        # expired certificate still gets its 401 from the authenticator. With the callback OpenSSL has no
        # CA to build a chain to, which spares every handshake a verification the authenticator repeats.
        context.load_verify_locations(cadata=pki.ca.certificate_pem().decode())
        if options.client_ca_file:
            context.load_verify_locations(options.client_ca_file)
        context.verify_flags |= _X509_V_FLAG_NO_CHECK_TIME
    return context
