"""Testing against a project's generated API without a cluster: :class:`TestServer` serves it in the test
process, and the pytest plugin (``apiforge.testing.plugin``, registered as a ``pytest11`` entry point) hands
out servers, namespaces, kubeconfig files and typed-client connections as fixtures.

The server is imported when first asked for, so that a test session that loads the plugin but uses none of
its fixtures does not import the server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apiforge.testing.server import Settings, TestServer

__all__ = ["Settings", "TestServer"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from apiforge.testing import server

        return getattr(server, name)
    raise AttributeError(name)
