"""The connection to an APIService's backend (kube-aggregator's remote.BuildTransportConfig): TLS verified
against the APIService's caBundle (the system's roots without one) for the name
``<service>.<namespace>.svc``, or not verified at all with insecureSkipTLSVerify; the front's proxy client
certificate presented, so that the backend believes the X-Remote-* headers that name the user
(``user_headers``, kube's SetAuthProxyHeaders)."""

from __future__ import annotations

import base64
import binascii
import ssl
import urllib.parse
from pathlib import Path
from typing import Any

import httpx

from apiserver.authentication.user import UserInfo

CONNECT_TIMEOUT = 5.0


def ssl_context(spec: dict[str, Any], client_cert: tuple[Path, Path] | None) -> ssl.SSLContext:
    """Raises ValueError for a caBundle that is not PEM certificates."""
    context = ssl.create_default_context()
    if spec.get("insecureSkipTLSVerify"):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif spec.get("caBundle"):
        try:
            bundle = base64.b64decode(spec["caBundle"]).decode()
            context = ssl.create_default_context(cadata=bundle)
        except (binascii.Error, UnicodeDecodeError, ssl.SSLError) as error:
            raise ValueError(f"invalid caBundle: {error}") from None
    if client_cert is not None:
        context.load_cert_chain(*map(str, client_cert))
    return context


def server_name(reference: dict[str, Any]) -> str:
    """The name the backend's serving certificate must carry (kube: ``<name>.<namespace>.svc``)."""
    return f"{reference.get('name', '')}.{reference.get('namespace', '')}.svc"


def backend_client(context: ssl.SSLContext) -> httpx.AsyncClient:
    """One pool of connections per APIService. No read timeout: watches stream for as long as the front's
    own request timeout lets them."""
    return httpx.AsyncClient(
        verify=context,
        timeout=httpx.Timeout(connect=CONNECT_TIMEOUT, read=None, write=None, pool=CONNECT_TIMEOUT),
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
    )


def user_headers(user: UserInfo) -> list[tuple[bytes, bytes]]:
    """X-Remote-User, X-Remote-Uid when the user has one (kube 1.32+), one X-Remote-Group per group, one
    X-Remote-Extra-<key> per value, the key percent-encoded as Go's url.PathEscape does (kube's
    SetAuthProxyHeaders)."""
    headers = [(b"x-remote-user", user.name.encode())]
    if user.uid:
        headers.append((b"x-remote-uid", user.uid.encode()))
    headers.extend((b"x-remote-group", group.encode()) for group in user.groups)
    for key, values in user.extra.items():
        name = b"x-remote-extra-" + urllib.parse.quote(key, safe="").encode()
        headers.extend((name, value.encode()) for value in values)
    return headers
