"""How the registry serves one resource beyond its types: kube's generic.RESTOptions and the registry Store's
options, with which a kind's REST storage is built. Generated code (from a definition's ``strategy:`` and
``createSubresources:``) and the CustomResourceDefinition controller hand these to the server beside the
Scheme, which knows names, versions, schemas and conversions only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from apiserver.machinery.scheme import ServerConverter
from apiserver.registry.strategy import Strategy
from apiserver.registry.subresource import NamedCreater

MakerArgument = Any
"""What each server hands the makers below: its config, opaque to the registry (which never reads it). A
maker declares the part it uses as the Protocol of its parameter (the storage, the authorizer), as kube's
REST storage constructors take their own arguments."""
StrategyFactory = Callable[[MakerArgument], Strategy]


@dataclass(frozen=True, slots=True)
class CreateSubresource:
    """A subresource that takes a POST of another kind and answers with it (kube's rest.NamedCreater): the
    body's group, version and kind (registered in the Scheme, served at no path of its own), and the
    ``handler`` class, built once per server with its config."""

    name: str
    group: str
    version: str
    kind: str
    handler: Callable[[MakerArgument], NamedCreater]


@dataclass(frozen=True, slots=True)
class RESTOptions:
    """One resource's storage wiring: its strategy class (None: the generic default), the create
    subresources it serves, and, for a generated kind whose CRD converts by webhook, the maker of its
    ``ResourceType.converter``: built by each server with its config (the Services a webhook reference
    resolves through) before it builds the kind's store."""

    strategy: StrategyFactory | None = None
    create_subresources: tuple[CreateSubresource, ...] = ()
    converter: Callable[[MakerArgument], ServerConverter] | None = None

    def new_strategy(self, server: MakerArgument) -> Strategy:
        return (self.strategy or Strategy)(server)

    @property
    def update_subresources(self) -> tuple[str, ...]:
        """The subresources the strategy updates the whole object through (Strategy.update_subresources)."""
        strategy = self.strategy
        if isinstance(strategy, type) and issubclass(strategy, Strategy):
            return strategy.update_subresources
        return ()


DEFAULT_OPTIONS = RESTOptions()
"""A resource nothing configures (a CustomResourceDefinition's): the generic strategy, no subresource
beyond status and scale."""
