"""Fixtures of the server's unit tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import apiforge.cli
import apiserver.server.cli
from apiserver.server.options import ServeOptions


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The most permissive umask a user could run the server with."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[ServeOptions]:
    """The options `serve` would run with; no generated package is imported and nothing listens."""
    calls: list[ServeOptions] = []
    monkeypatch.setattr(apiforge.cli, "_project_api", lambda: (None, Path("openapi")))
    monkeypatch.setattr(
        apiserver.server.cli, "run", lambda scheme, openapi_dir, options: calls.append(options)
    )
    return calls
