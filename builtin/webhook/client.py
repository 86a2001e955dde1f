"""One JSON POST to a webhook's ``clientConfig``, as k8s.io/apiserver/pkg/util/webhook's ClientManager makes it
for both kinds of webhook kube-apiserver calls (admission and CRD conversion): to ``url``, or to the Service it
names. A Service reference is posted to ``https://<name>.<namespace>.svc:<port><path>``: the certificate is
verified for that name (TLS SNI) and errors quote that URL, while the connection goes where kube-apiserver's
ClusterIPServiceResolver leads (the Service's cluster IP; an ExternalName Service's DNS name), resolved when
the connection is made, as kube's dialer does. Failures are raised as CallFailed in the words of kube's REST
client and Go's net/http (``Post "<url>": ...``), because users search for those messages."""

from __future__ import annotations

import base64
import binascii
import posixpath
import ssl
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson

from builtin.core.serviceresolver import Unresolved, resolve
from builtin.wants import WantsStores

__all__ = ["CallFailed", "ClientConfigError", "WebhookClients", "go_transport_reason"]


class CallFailed(Exception):
    """The webhook could not be called, or did not answer 2xx JSON."""


class ClientConfigError(CallFailed):
    """No REST client could be made from the ``clientConfig`` (kube fails this before any call, so
    admission does not word it as a failed call)."""


class WebhookClients:
    """One HTTP client per CA bundle, kept while the server runs: a TLS context costs milliseconds to build
    and a connection's handshake is reused across calls."""

    def __init__(self, context: WantsStores) -> None:
        self.context = context
        self._clients: dict[str, httpx.AsyncClient] = {}

    def _client(self, ca_bundle: str) -> httpx.AsyncClient:
        found = self._clients.get(ca_bundle)
        if found is None:
            found = self._clients[ca_bundle] = httpx.AsyncClient(verify=_tls(ca_bundle))
        return found

    async def close(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()

    async def post(self, client_config: Any, body: Any, timeout: float) -> Any:
        """The webhook's decoded JSON answer; raises CallFailed in kube's words."""
        config = client_config if isinstance(client_config, dict) else {}
        try:
            client = self._client(str(config.get("caBundle") or ""))
        except (ValueError, ssl.SSLError) as error:
            raise ClientConfigError(
                f"could not get REST client: invalid caBundle: {error}"
            ) from None
        url = _url(config, timeout)
        # never Basic credentials from the URL (httpx would send them; kube refuses such a URL when the
        # configuration is written, and this keeps one stored before that rule from leaking them)
        request_url = httpx.URL(url).copy_with(username=None, password=None)
        extensions: dict[str, Any] = {"timeout": httpx.Timeout(timeout).as_dict()}
        service = config.get("service")
        if not config.get("url") and isinstance(service, dict):
            extensions["sni_hostname"] = request_url.host
            request_url = request_url.copy_with(host=await self._dial_host(service, url))
        request = client.build_request(
            "POST",
            request_url,
            content=orjson.dumps(body),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            extensions=extensions,
        )
        request.headers["Host"] = httpx.URL(url).netloc.decode("ascii")
        try:
            response = await client.send(request)
        except httpx.TimeoutException:
            raise CallFailed(f'Post "{url}": context deadline exceeded') from None
        except httpx.HTTPError as error:
            raise CallFailed(f'Post "{url}": {go_transport_reason(error)}') from None
        if not 200 <= response.status_code < 300:
            text = response.text.strip()[:1024]
            raise CallFailed(
                f'an error on the server ("{text}") has prevented the request from succeeding'
            )
        try:
            return orjson.loads(response.content)
        except orjson.JSONDecodeError:
            raise CallFailed(_json_error(response.content)) from None

    async def _dial_host(self, reference: dict[str, Any], url: str) -> str:
        """Where the Service leads; an unresolvable one fails the POST in the words of kube's
        ClusterIPServiceResolver (k8s.io/kube-aggregator pkg/apiserver/resolvers.go ResolveCluster)."""
        name = str(reference.get("name", ""))
        port = reference.get("port") or 443
        try:
            return (await resolve(self.context, {**reference, "port": port})).host
        except Unresolved as error:
            reason = {
                "ServiceNotFound": f'service "{name}" not found',
                "ServicePortError": f'no service port {port} found for service "{name}"',
                "MissingEndpoints": 'cannot route to service with ClusterIP "None"',
            }.get(error.reason, error.message)
            raise CallFailed(f'Post "{url}": {reason}') from None


def _url(config: dict[str, Any], timeout: float) -> str:
    """The URL kube posts to, with the ``?timeout=`` its REST client adds. The path is client-go's
    ``path.Join("/", apiPath)`` (rest.DefaultVersionedAPIPath): ``/`` when the configuration has none."""
    url = config.get("url")
    if isinstance(url, str) and url:
        parts = urlsplit(url)
        base, path = f"{parts.scheme}://{parts.netloc}", parts.path
    else:
        service = config.get("service") or {}
        name, namespace = service.get("name", ""), service.get("namespace", "")
        base, path = (
            f"https://{name}.{namespace}.svc:{service.get('port') or 443}",
            service.get("path") or "",
        )
    return f"{base}{posixpath.normpath('/' + path.lstrip('/'))}?timeout={timeout:g}s"


def _tls(ca_bundle: str) -> ssl.SSLContext:
    """The context that verifies the webhook's certificate against ``caBundle`` (base64 of PEM, as the
    API carries ``[]byte``), or the system's roots."""
    if not ca_bundle:
        return ssl.create_default_context()
    try:
        pem = base64.b64decode(ca_bundle, validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError) as error:
        raise ValueError(str(error)) from None
    return ssl.create_default_context(cadata=pem)


def go_transport_reason(error: httpx.HTTPError) -> str:
    """Go's net/http wording for the common failures."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return "tls: failed to verify certificate: x509: " + (
                cause.verify_message or "certificate signed by unknown authority"
            )
        if isinstance(cause, ConnectionRefusedError):
            return f"dial tcp {_address(error)}: connect: connection refused"
        cause = cause.__cause__ or cause.__context__
    text = str(error) or type(error).__name__
    if "refused" in text.lower():
        return f"dial tcp {_address(error)}: connect: connection refused"
    return text


def _address(error: httpx.HTTPError) -> str:
    try:
        url = error.request.url
    except RuntimeError:
        return ""
    return f"{url.host}:{url.port or 443}"


def _json_error(body: bytes) -> str:
    """Go's encoding/json words for a body that is not JSON (what kube's client reports)."""
    text = body.decode("utf-8", "replace").lstrip()
    if not text:
        return "unexpected end of JSON input"
    return f"invalid character {text[0]!r} looking for beginning of value"
