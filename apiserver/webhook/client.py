"""One JSON POST to a webhook's ``clientConfig`` (k8s.io/apiserver/pkg/util/webhook): to ``url``, or to the
Service it names. A Service reference is resolved as kube-apiserver's default ServiceResolver does (the
Service's cluster IP and port; an ExternalName Service's DNS name), while the request keeps the Service's
DNS name ``<name>.<namespace>.svc``: the certificate is verified for that name (TLS SNI), and errors quote
the URL as kube does (``Post "https://name.ns.svc:443/path?timeout=30s": ...``). Failures are raised as
CallFailed in Go's net/http words, because users search for those messages."""

from __future__ import annotations

import ssl
from typing import Any

import httpx
import orjson

from apiserver.registry.context import ServerContext
from builtin.admissionregistration.client import Clients, _reason  # Go's net/http words
from builtin.apiregistration.resolver import Unresolved, resolve

__all__ = ["CallFailed", "WebhookClients"]


class CallFailed(Exception):
    """The webhook could not be called, or did not answer 2xx JSON."""


class WebhookClients:
    """Calls through the admission webhooks' HTTP clients (one per CA bundle, kept while the server runs),
    to a url or a resolved Service."""

    def __init__(self, context: ServerContext) -> None:
        self.context = context
        self._clients = Clients()  # the admission webhooks' cache of one HTTP client per CA bundle

    async def close(self) -> None:
        await self._clients.close()

    async def post(self, client_config: dict[str, Any], body: Any, timeout: float) -> Any:
        """The webhook's decoded JSON answer; raises CallFailed in kube's words."""
        url, connect_to = await self._where(client_config, timeout)
        try:
            client = self._clients.client(str(client_config.get("caBundle") or ""))
        except (ValueError, ssl.SSLError) as error:
            raise CallFailed(f"could not get REST client: invalid caBundle: {error}") from None
        request_url = httpx.URL(url)
        extensions: dict[str, Any] = {"timeout": httpx.Timeout(timeout).as_dict()}
        if connect_to is not None:
            extensions["sni_hostname"] = request_url.host
            request_url = request_url.copy_with(host=connect_to)
        request = client.build_request(
            "POST",
            request_url,
            content=orjson.dumps(body),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            extensions=extensions,
        )
        if connect_to is not None:
            request.headers["Host"] = httpx.URL(url).netloc.decode("ascii")
        try:
            response = await client.send(request)
        except httpx.TimeoutException:
            raise CallFailed(f'Post "{url}": context deadline exceeded') from None
        except httpx.HTTPError as error:
            raise CallFailed(f'Post "{url}": {_reason(error)}') from None
        if not 200 <= response.status_code < 300:
            text = response.text.strip()[:1024]
            raise CallFailed(
                f'an error on the server ("{text}") has prevented the request from succeeding'
            )
        try:
            return orjson.loads(response.content)
        except orjson.JSONDecodeError:
            raise CallFailed(_json_error(response.content)) from None

    async def _where(self, config: dict[str, Any], timeout: float) -> tuple[str, str | None]:
        """The URL kube posts to (with the ``?timeout=`` its REST client adds) and, for a Service
        reference, the host it connects to instead of the Service's DNS name."""
        seconds = f"{timeout:g}s"
        url = config.get("url")
        if isinstance(url, str) and url:
            return f"{url}{'&' if '?' in url else '?'}timeout={seconds}", None
        service = config.get("service") or {}
        namespace, name = str(service.get("namespace", "")), str(service.get("name", ""))
        port = int(service.get("port") or 443)
        path = str(service.get("path") or "")
        host = await self._resolve(namespace, name, port)
        return f"https://{name}.{namespace}.svc:{port}{path}?timeout={seconds}", host

    async def _resolve(self, namespace: str, name: str, port: int) -> str:
        """The host of the Service: kube-aggregator's resolver (builtin/apiregistration), as
        kube-apiserver gives the same ServiceResolver to its conversion webhooks."""
        reference = {"namespace": namespace, "name": name, "port": port}
        try:
            return (await resolve(self.context, reference)).host
        except Unresolved as error:
            raise CallFailed(error.message) from None


def _json_error(body: bytes) -> str:
    """Go's encoding/json words for a body that is not JSON (what kube's client reports)."""
    text = body.decode("utf-8", "replace").lstrip()
    if not text:
        return "unexpected end of JSON input"
    return f"invalid character {text[0]!r} looking for beginning of value"
