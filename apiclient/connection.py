"""One HTTP/1.1 connection pool to one server (httpx), carrying the configuration's credentials on every
request, retrying what kube says to retry (429 and 5xx answers with ``Retry-After``, as client-go's
``checkWait`` does, up to ``max_retries`` times), and turning every other refusal into kube's error."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from apiclient.config import Config
from apiclient.errors import status_error

MAX_RETRY_WAIT = 10.0
"""The longest Retry-After honoured before giving up (client-go caps its wait likewise)."""


class Connection:
    """A kept-alive client for one server; close it (or use it as a context manager) when done."""

    def __init__(self, config: Config, timeout: float = 30.0, max_retries: int = 10) -> None:
        self.config = config
        self.max_retries = max_retries
        self._http = httpx.Client(
            base_url=config.server,
            verify=config.ssl_context if config.ssl_context is not None else True,
            timeout=timeout,
        )

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def request(
        self,
        method: str,
        path: str,
        params: dict[str, Any] | None = None,
        body: bytes | None = None,
        content_type: str = "application/json",
    ) -> bytes:
        """The answer's body; raises the APIStatusError of a refusal."""
        headers = self._headers(content_type if body is not None else None)
        for attempt in range(self.max_retries + 1):
            response = self._http.request(
                method, path, params=_params(params), content=body, headers=headers
            )
            if response.status_code < 400:
                return response.content
            error = status_error(
                response.status_code, response.content, response.headers.get("retry-after")
            )
            wait = error.retry_after
            retryable = response.status_code == 429 or response.status_code >= 500
            if (
                not retryable
                or wait is None
                or wait > MAX_RETRY_WAIT
                or attempt == self.max_retries
            ):
                raise error
            time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def stream(self, path: str, params: dict[str, Any] | None = None) -> Iterator[Iterator[bytes]]:
        """A streaming GET (a watch): its body's lines, as they come."""
        with self._http.stream(
            "GET", path, params=_params(params), headers=self._headers(None), timeout=None
        ) as response:
            if response.status_code >= 400:
                response.read()
                raise status_error(
                    response.status_code, response.content, response.headers.get("retry-after")
                )
            yield (line.encode() for line in response.iter_lines() if line)

    def _headers(self, content_type: str | None) -> list[tuple[str, str]]:
        headers = list(self.config.request_headers().items())
        headers += self.config.impersonation_groups()
        headers.append(("Accept", "application/json"))
        if content_type:
            headers.append(("Content-Type", content_type))
        return headers


def _params(params: dict[str, Any] | None) -> dict[str, str]:
    """Query parameters without the unset ones; booleans as kube reads them."""
    return {
        key: ("true" if value is True else "false" if value is False else str(value))
        for key, value in (params or {}).items()
        if value is not None
    }
