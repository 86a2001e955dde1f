"""Calling a webhook: an HTTPS POST of its AdmissionReview to ``clientConfig.url`` or to its Service
(``https://<name>.<namespace>.svc:<port><path>``), trusting ``caBundle`` (the system's roots without one),
with the webhook's timeout; failures worded as kube's webhook client words them (``failed to call webhook:
Post "<url>": ...``), because users search for those messages."""

from __future__ import annotations

import base64
import binascii
import ssl
from typing import Any

import httpx
import orjson


class CallFailed(Exception):
    """The webhook could not be called or did not answer a decodable AdmissionReview."""


def webhook_url(client_config: Any, timeout: int) -> str:
    """The URL kube posts to, with the ``?timeout=`` its REST client adds."""
    config = client_config if isinstance(client_config, dict) else {}
    url = config.get("url")
    if not isinstance(url, str) or not url:
        service = config.get("service") or {}
        path = service.get("path") or ""
        url = (
            f"https://{service.get('name')}.{service.get('namespace')}.svc:"
            f"{service.get('port', 443)}{path}"
        )
    return f"{url}{'&' if '?' in url else '?'}timeout={timeout}s"


class Clients:
    """One HTTP client per CA bundle, kept while the server runs: a TLS context costs milliseconds to
    build and a connection's handshake is reused across calls."""

    def __init__(self) -> None:
        self._clients: dict[str, httpx.AsyncClient] = {}

    def client(self, ca_bundle: str) -> httpx.AsyncClient:
        found = self._clients.get(ca_bundle)
        if found is None:
            found = self._clients[ca_bundle] = httpx.AsyncClient(verify=_tls(ca_bundle))
        return found

    async def close(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()

    async def post(self, client_config: Any, review: dict[str, Any], timeout: int) -> Any:
        """The webhook's decoded answer; raises CallFailed in kube's words."""
        config = client_config if isinstance(client_config, dict) else {}
        url = webhook_url(config, timeout)
        try:
            client = self.client(str(config.get("caBundle") or ""))
        except (ValueError, ssl.SSLError) as error:
            raise CallFailed(f"could not get REST client: invalid caBundle: {error}") from None
        try:
            response = await client.post(
                url,
                content=orjson.dumps(review),
                headers={"Content-Type": "application/json", "Accept": "application/json"},
                timeout=timeout,
            )
        except httpx.TimeoutException:
            raise CallFailed(
                f'failed to call webhook: Post "{url}": context deadline exceeded'
            ) from None
        except httpx.HTTPError as error:
            raise CallFailed(f'failed to call webhook: Post "{url}": {_reason(error)}') from None
        if not 200 <= response.status_code < 300:
            text = response.text.strip()[:1024]
            raise CallFailed(
                f'failed to call webhook: an error on the server ("{text}") has prevented the '
                "request from succeeding"
            )
        try:
            return orjson.loads(response.content)
        except orjson.JSONDecodeError as error:
            raise CallFailed(f"failed to call webhook: {error}") from None


def _tls(ca_bundle: str) -> ssl.SSLContext:
    """The context that verifies the webhook's certificate against ``caBundle`` (base64 of PEM, as the
    API carries ``[]byte``), or the system's roots."""
    context = ssl.create_default_context()
    if ca_bundle:
        try:
            pem = base64.b64decode(ca_bundle, validate=True).decode("ascii")
        except (binascii.Error, UnicodeDecodeError) as error:
            raise ValueError(str(error)) from None
        context = ssl.create_default_context(cadata=pem)
    return context


def _reason(error: httpx.HTTPError) -> str:
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
