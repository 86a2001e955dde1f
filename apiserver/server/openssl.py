"""Two things Python's ssl module cannot do, done through OpenSSL itself (ctypes), each checked at run time
and optional: the server works without them, a little less like kube.

1. Request a client certificate without judging it in the handshake. kube-apiserver's Go server asks with
   ``tls.RequestClientCert`` and leaves the verdict to its x509 authenticator, so a certificate from another
   CA, an expired one or one without the clientAuth usage is answered 401 with a Status. Python offers only
   ``CERT_OPTIONAL``, with which OpenSSL aborts the handshake on any of them, and no verify callback. Here
   an accept-all callback is set on the context's ``SSL_CTX`` (``SSL_CTX_set_verify``); the verdict is the
   authenticator's (apiserver/authentication/x509.py). Without it, the context keeps OpenSSL's verification
   against the client CAs (expiry excepted: X509_V_FLAG_NO_CHECK_TIME, so expired certificates still get
   their 401), and a certificate from an unknown CA fails the handshake.
2. The chain the client sent (its intermediates): ``SSLObject.get_unverified_chain`` from Python 3.13,
   ``SSL_get_peer_cert_chain`` before. Without it, only the leaf is known (certificates signed by an
   intermediate then authenticate only when the intermediate is in the client CA file).

The C structures' first fields (CPython's ``PySSLContext.ctx`` and ``PySSLSocket.ssl``) are read after a
self-check through OpenSSL that they are what they should be: a CPython whose layout differs is detected and
the fallbacks apply.
"""

from __future__ import annotations

import _ssl
import ctypes
import logging
import platform
import ssl
from pathlib import Path

log = logging.getLogger(__name__)

_SSL_VERIFY_PEER = 1
_SSL_VERIFY_FAIL_IF_NO_PEER_CERT = 2
_VERIFY_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_void_p)


def _accept(preverified: int, store: int | None) -> int:
    return 1


_ACCEPT = _VERIFY_CALLBACK(
    _accept
)  # referenced for the life of the process: OpenSSL keeps the pointer
_HEAD = object.__basicsize__  # PyObject_HEAD: the first field of a C object follows it
_POINTER = ctypes.sizeof(ctypes.c_void_p)


def _load_libssl() -> ctypes.CDLL | None:
    """The libssl the ssl module was linked with (the one loaded in this process), None when not found."""
    if platform.python_implementation() != "CPython":
        return None
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    paths = {line.split()[-1] for line in maps.splitlines() if "/libssl.so" in line}
    if len(paths) != 1:
        return None
    library = ctypes.CDLL(paths.pop())
    for name, result, arguments in (
        ("SSL_CTX_get_verify_mode", ctypes.c_int, [ctypes.c_void_p]),
        ("SSL_CTX_get_verify_callback", ctypes.c_void_p, [ctypes.c_void_p]),
        ("SSL_CTX_set_verify", None, [ctypes.c_void_p, ctypes.c_int, _VERIFY_CALLBACK]),
        ("SSL_get_SSL_CTX", ctypes.c_void_p, [ctypes.c_void_p]),
        ("SSL_get_peer_cert_chain", ctypes.c_void_p, [ctypes.c_void_p]),
        ("OPENSSL_sk_num", ctypes.c_int, [ctypes.c_void_p]),
        ("OPENSSL_sk_value", ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_int]),
        ("i2d_X509", ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]),
    ):
        function = getattr(library, name, None)
        if function is None:
            return None
        function.restype = result
        function.argtypes = arguments
    return library


_LIBSSL = _load_libssl()


def _context_pointer(context: ssl.SSLContext) -> int | None:
    """The context's SSL_CTX*, once OpenSSL confirms it: its verify mode follows the Python object's."""
    if _LIBSSL is None or type(context).__basicsize__ < _HEAD + _POINTER:
        return None
    pointer = ctypes.c_void_p.from_address(id(context) + _HEAD).value
    if not pointer:
        return None
    previous = context.verify_mode
    try:
        for mode, expected in (
            (ssl.CERT_REQUIRED, _SSL_VERIFY_PEER | _SSL_VERIFY_FAIL_IF_NO_PEER_CERT),
            (ssl.CERT_OPTIONAL, _SSL_VERIFY_PEER),
        ):
            context.verify_mode = mode
            if _LIBSSL.SSL_CTX_get_verify_mode(pointer) != expected:
                return None
    finally:
        context.verify_mode = previous
    return pointer


def request_any_client_certificate(context: ssl.SSLContext) -> bool:
    """Ask clients for a certificate and accept whatever they present (the authenticator judges it);
    False when this Python cannot, the context then verifying as ``CERT_OPTIONAL`` does."""
    context.verify_mode = ssl.CERT_OPTIONAL
    pointer = _context_pointer(context)
    if _LIBSSL is None or pointer is None:
        log.warning(
            "cannot defer client certificate verification to the authenticator on this Python:"
            " a certificate from an unknown CA fails the TLS handshake instead of getting 401"
        )
        return False
    _LIBSSL.SSL_CTX_set_verify(pointer, _SSL_VERIFY_PEER, _ACCEPT)
    # CPython keeps a context's callback when its verify mode changes (SSL_CTX_get_verify_callback)
    return bool(
        _LIBSSL.SSL_CTX_get_verify_callback(pointer) == ctypes.cast(_ACCEPT, ctypes.c_void_p).value
    )


def peer_chain(ssl_object: ssl.SSLObject) -> list[bytes]:
    """The certificates the client sent, leaf first, DER; [] without one. Only the leaf when the chain
    cannot be had."""
    leaf = ssl_object.getpeercert(binary_form=True)
    if not leaf:
        return []
    unverified = getattr(ssl_object, "get_unverified_chain", None)
    if unverified is not None:  # Python 3.13
        chain = unverified() or []
        der = _ssl.ENCODING_DER
        return [leaf] + [c.public_bytes(der) for c in chain[1:]]
    return [leaf, *_intermediates(ssl_object)]


def _intermediates(ssl_object: ssl.SSLObject) -> list[bytes]:
    """What follows the leaf in the client's chain, read through SSL_get_peer_cert_chain (server side, it
    holds the intermediates only). The SSL* is checked to belong to the object's context first."""
    native = getattr(ssl_object, "_sslobj", None)
    if _LIBSSL is None or native is None or type(native).__basicsize__ < _HEAD + 2 * _POINTER:
        return []
    ssl_pointer = ctypes.c_void_p.from_address(id(native) + _HEAD + _POINTER).value
    context_pointer = ctypes.c_void_p.from_address(id(ssl_object.context) + _HEAD).value
    if not ssl_pointer or _LIBSSL.SSL_get_SSL_CTX(ssl_pointer) != context_pointer:
        return []
    stack = _LIBSSL.SSL_get_peer_cert_chain(ssl_pointer)
    if not stack:
        return []
    certificates = []
    for index in range(_LIBSSL.OPENSSL_sk_num(stack)):
        certificate = _LIBSSL.OPENSSL_sk_value(stack, index)
        size = _LIBSSL.i2d_X509(certificate, None)
        if size <= 0:
            return []
        buffer = ctypes.create_string_buffer(size)
        cursor = ctypes.c_void_p(ctypes.addressof(buffer))
        _LIBSSL.i2d_X509(certificate, ctypes.byref(cursor))
        certificates.append(buffer.raw)
    leaf = ssl_object.getpeercert(binary_form=True)
    return [der for der in certificates if der != leaf]
