"""One HTTP/1.1 connection pool to one server (httpx), sync (``Connection``) or async (``AsyncConnection``),
carrying the configuration's credentials on every request, retrying what kube says to retry (429 and 5xx
answers with ``Retry-After``, as client-go's ``checkWait`` does, up to ``max_retries`` times), and turning
every other refusal into kube's error. Both send the same ``Request``s with the same headers and retry rule."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx

from apiclient.config import Config
from apiclient.errors import APIStatusError, status_error
from apiclient.requests import Request

MAX_RETRY_WAIT = 10.0
"""The longest Retry-After honoured before giving up (client-go caps its wait likewise)."""


class _Transport:
    """What the sync and async connections share: configuration, headers, and the retry rule."""

    def __init__(self, config: Config, max_retries: int) -> None:
        self.config = config
        self.max_retries = max_retries

    def _options(self, timeout: float) -> dict[str, Any]:
        verify = self.config.ssl_context if self.config.ssl_context is not None else True
        return {"base_url": self.config.server, "verify": verify, "timeout": timeout}

    def _arguments(self, request: Request) -> dict[str, Any]:
        """httpx's arguments for a request."""
        content_type = request.content_type if request.body is not None else None
        return {
            "params": _params(request.params),
            "content": request.body,
            "headers": self._headers(content_type),
        }

    def _retry_wait(self, response: httpx.Response, attempt: int) -> float:
        """How long to wait before retrying a refused request; raises its error when not to retry."""
        error = refusal(response)
        wait = error.retry_after
        retryable = response.status_code == 429 or response.status_code >= 500
        if not retryable or wait is None or wait > MAX_RETRY_WAIT or attempt == self.max_retries:
            raise error
        return wait

    def _headers(self, content_type: str | None) -> list[tuple[str, str]]:
        headers = list(self.config.request_headers().items())
        headers += self.config.impersonation_groups()
        headers.append(("Accept", "application/json"))
        if content_type:
            headers.append(("Content-Type", content_type))
        return headers


class Connection(_Transport):
    """A kept-alive client for one server; close it (or use it as a context manager) when done."""

    def __init__(self, config: Config, timeout: float = 30.0, max_retries: int = 10) -> None:
        super().__init__(config, max_retries)
        self._http = httpx.Client(**self._options(timeout))

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def send(self, request: Request) -> bytes:
        """The answer's body; raises the APIStatusError of a refusal."""
        for attempt in range(self.max_retries + 1):
            response = self._http.request(request.method, request.path, **self._arguments(request))
            if response.status_code < 400:
                return response.content
            time.sleep(self._retry_wait(response, attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def stream(self, request: Request) -> Iterator[Iterator[bytes]]:
        """A streaming request (a watch): its body's lines, as they come."""
        arguments = self._arguments(request)
        with self._http.stream(request.method, request.path, **arguments, timeout=None) as response:
            if response.status_code >= 400:
                response.read()
                raise refusal(response)
            yield (line.encode() for line in response.iter_lines() if line)


class AsyncConnection(_Transport):
    """The asyncio twin of ``Connection`` (httpx.AsyncClient); close it with ``aclose`` or ``async with``."""

    def __init__(self, config: Config, timeout: float = 30.0, max_retries: int = 10) -> None:
        super().__init__(config, max_retries)
        self._http = httpx.AsyncClient(**self._options(timeout))

    async def __aenter__(self) -> AsyncConnection:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def send(self, request: Request) -> bytes:
        """The answer's body; raises the APIStatusError of a refusal."""
        for attempt in range(self.max_retries + 1):
            response = await self._http.request(
                request.method, request.path, **self._arguments(request)
            )
            if response.status_code < 400:
                return response.content
            await asyncio.sleep(self._retry_wait(response, attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    @asynccontextmanager
    async def stream(self, request: Request) -> AsyncIterator[AsyncIterator[bytes]]:
        """A streaming request (a watch): its body's lines, as they come."""
        arguments = self._arguments(request)
        async with self._http.stream(
            request.method, request.path, **arguments, timeout=None
        ) as response:
            if response.status_code >= 400:
                await response.aread()
                raise refusal(response)
            yield (line.encode() async for line in response.aiter_lines() if line)


def refusal(response: httpx.Response) -> APIStatusError:
    """kube's error for a refused answer (read in full)."""
    return status_error(response.status_code, response.content, response.headers.get("retry-after"))


def _params(params: dict[str, Any]) -> dict[str, str]:
    """Query parameters without the unset ones; booleans as kube reads them."""
    return {
        key: ("true" if value is True else "false" if value is False else str(value))
        for key, value in params.items()
        if value is not None
    }
