"""The context a server hands the parts it assembles (admission plugins, controllers, token authenticators):
the registry's ServerContext, which strategies and create subresources get, and what only the assembled
server has, as kube's genericapiserver.Config is completed into a server that its post-start hooks see."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from apiserver.endpoints.aggregation import Aggregation
from apiserver.registry.context import ServerContext
from apiserver.server.served import ServedResources


@dataclass
class ServerConfig(ServerContext):
    served: ServedResources | None = None
    """What the server serves, changeable while it serves (CustomResourceDefinitions install kinds there);
    set by the server once it is built."""
    aggregation: Aggregation | None = None
    """The aggregator in front of the server's own handlers, set by the part that provides it (the
    APIService kind's); None: every request is served here."""
    parts: dict[Callable[..., Any], Any] = field(default_factory=dict)
    """Parts made once per server and shared, by their maker (see ``part``)."""

    def part(self, make: Callable[[ServerConfig], T]) -> T:
        """The one ``make(self)`` of this server: a definition that names one class both as its admission
        plugin and as its controller (the webhook plugins follow their configurations) gets one object."""
        if make not in self.parts:
            self.parts[make] = make(self)
        made: T = self.parts[make]
        return made


T = TypeVar("T")
