"""The ``extension-apiserver-authentication`` ConfigMap in kube-system: how a front (kube-apiserver's
ClusterAuthenticationInfo controller) tells the extension API servers behind it whom to trust, and how an
extension server given only ``--authentication-kubeconfig`` reads it (k8s.io/apiserver's
DelegatingAuthenticationOptions.lookupMissingConfigInCluster).

Kube's keys: ``client-ca-file`` (PEM), ``requestheader-client-ca-file`` (PEM) and, as JSON lists,
``requestheader-allowed-names``, ``-username-headers``, ``-uid-headers``, ``-group-headers`` and
``-extra-headers-prefix``. The request-header keys are published only when the front has a request-header
CA. An apiforge front without ``--requestheader-client-ca-file`` publishes kubeadm's setup: its PKI's
front-proxy-ca, the CN of the front-proxy-client it proxies with, and the X-Remote-* headers.

The extension server reads the ConfigMap once, at start (kube's reloads it when it changes): a missing
ConfigMap leaves request-header authentication off, as kube's does; any other failure stops the start."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import httpx
import orjson
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from apiserver.authentication.requestheader import RequestHeaderConfig
from apiserver.client.kubeconfig import RemoteServer
from apiserver.machinery import errors
from apiserver.machinery.scheme import ResourceType, Scheme
from apiserver.registry.store import Store

log = logging.getLogger(__name__)
NAMESPACE = "kube-system"
NAME = "extension-apiserver-authentication"
TYPE = {"apiVersion": "v1", "kind": "ConfigMap"}
"""The object's type, core/v1 ConfigMap, as kube's generic code fixes it; its resource is the Scheme's."""
LOOKUP_TIMEOUT = 10.0


class AuthenticationInfoError(Exception):
    """The ConfigMap could not be read or makes no sense: the extension server does not start."""


def _pem(certificates: Sequence[x509.Certificate]) -> str:
    return "".join(c.public_bytes(Encoding.PEM).decode() for c in certificates)


def _list(values: Sequence[str]) -> str:
    return orjson.dumps(list(values)).decode()


def config_maps(scheme: Scheme) -> ResourceType:
    """The resource the ConfigMap is stored as, from the server's Scheme (as kube's generic code reaches it
    through client-go's generated clients); AuthenticationInfoError when the Scheme has no core/v1
    ConfigMap."""
    resource = scheme.kind("", TYPE["kind"])
    if resource is None or resource.version(TYPE["apiVersion"]) is None:
        raise AuthenticationInfoError(f"the server serves no {TYPE['apiVersion']} {TYPE['kind']}")
    return resource


def _path(resource: ResourceType) -> str:
    return f"/api/{TYPE['apiVersion']}/namespaces/{NAMESPACE}/{resource.plural}/{NAME}"


def published(
    client_cas: Sequence[x509.Certificate], request_header: RequestHeaderConfig | None
) -> dict[str, str]:
    """The ConfigMap's data for a server trusting ``client_cas`` and ``request_header``'s proxies."""
    data = {"client-ca-file": _pem(client_cas)}
    if request_header is not None:
        data |= {
            "requestheader-client-ca-file": _pem(request_header.client_cas),
            "requestheader-allowed-names": _list(request_header.allowed_names),
            "requestheader-username-headers": _list(request_header.username_headers),
            "requestheader-uid-headers": _list(request_header.uid_headers),
            "requestheader-group-headers": _list(request_header.group_headers),
            "requestheader-extra-headers-prefix": _list(request_header.extra_headers_prefixes),
        }
    return data


async def publish(store: Store, data: dict[str, str]) -> None:
    """Create the ConfigMap in ``store`` (the ConfigMaps'), or bring its data up to date (another replica's or
    a previous run's)."""
    configmap: dict[str, Any] = {
        **TYPE,
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "data": data,
    }
    try:
        current = await store.get(NAMESPACE, NAME)
    except errors.APIError as error:
        if error.code != 404:
            raise
        try:
            await store.create(NAMESPACE, configmap)
        except errors.APIError as create_error:
            if create_error.reason != "AlreadyExists":
                raise
        return
    if current.get("data") == data:
        return

    def update(obj: dict[str, Any]) -> dict[str, Any]:
        obj["data"] = dict(data)
        return obj

    await store.update(NAMESPACE, NAME, update)


async def lookup(
    remote: RemoteServer, resource: ResourceType
) -> tuple[list[x509.Certificate], RequestHeaderConfig | None]:
    """The client CAs and request-header configuration the front at ``remote`` publishes as ``resource``
    (``config_maps``; none when it publishes no ConfigMap)."""
    try:
        async with remote.client(LOOKUP_TIMEOUT) as client:
            answer = await client.get(_path(resource))
    except httpx.HTTPError as error:
        raise AuthenticationInfoError(
            f"unable to load configmap based request-header-client-ca-file: {error}"
        ) from None
    if answer.status_code == 404:
        log.warning("no %s/%s ConfigMap: request-header authentication is off", NAMESPACE, NAME)
        return [], None
    if answer.status_code != 200:
        raise AuthenticationInfoError(
            f"unable to load configmap based request-header-client-ca-file: {answer.status_code}"
            f" {answer.text[:200]}"
        )
    return parse((answer.json() or {}).get("data") or {})


def parse(data: dict[str, str]) -> tuple[list[x509.Certificate], RequestHeaderConfig | None]:
    """The ConfigMap's data as client CAs and a request-header configuration (None without its CA)."""
    try:
        client_cas = _certificates(data.get("client-ca-file", ""))
        request_cas = _certificates(data.get("requestheader-client-ca-file", ""))
        if not request_cas:
            return client_cas, None
        return client_cas, RequestHeaderConfig(
            tuple(request_cas),
            _strings(data, "requestheader-allowed-names"),
            _strings(data, "requestheader-username-headers"),
            _strings(data, "requestheader-group-headers"),
            _strings(data, "requestheader-extra-headers-prefix"),
            _strings(data, "requestheader-uid-headers"),
        )
    except (ValueError, TypeError) as error:
        raise AuthenticationInfoError(f"{NAMESPACE}/{NAME}: {error}") from None


def _certificates(pem: str) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(pem.encode()) if pem.strip() else []


def _strings(data: dict[str, str], key: str) -> tuple[str, ...]:
    raw = data.get(key)
    if not raw:
        return ()
    values = orjson.loads(raw)
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ValueError(f"{key}: not a JSON list of strings")
    return tuple(values)
