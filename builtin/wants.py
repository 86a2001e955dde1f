"""What the built-in parts take from the server's config, each a narrow Protocol (kube's admission plugin
initializers: a plugin that wants the authorizer implements WantsAuthorizer and is handed it). A part's
maker takes the Protocol of what it uses, or one combining several, so that mypy holds it to that; the
server hands every maker its one config, which has them all (apiserver/server/config.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from apiserver.authentication.token import TokenAuthentication
from apiserver.authorization.authorizer import Authorizer
from apiserver.registry.store import Store
from apiserver.storage.interface import Storage


class WantsAuthorizer(Protocol):
    @property
    def authorizer(self) -> Authorizer:
        """The server's authorizer, read when asked: the server composes it once every part is made."""
        ...


class WantsTokens(Protocol):
    @property
    def tokens(self) -> TokenAuthentication: ...


class WantsStorage(Protocol):
    @property
    def storage(self) -> Storage: ...


class WantsStores(Protocol):
    @property
    def stores(self) -> Mapping[tuple[str, str], Store]:
        """Every resource's Store by (group, plural), those installed while serving too."""
        ...

    def store(self, group: str, plural: str) -> Store: ...
