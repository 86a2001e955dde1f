"""What the built-in parts take from the server's config, each a narrow Protocol (kube's admission plugin
initializers: a plugin that wants the authorizer implements WantsAuthorizer and is handed it). A part's
maker takes the Protocol of what it uses, or one combining several, so that mypy holds it to that; the
server hands every maker its one config, which has them all (apiserver/server/config.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

from apiserver.audit.internal import InternalAudit
from apiserver.authentication.token import TokenAuthentication
from apiserver.authorization.authorizer import Authorizer
from apiserver.endpoints.aggregation import Aggregation
from apiserver.registry.store import Store
from apiserver.server.controllers import Elector, LeaderElection
from apiserver.server.served import ServedResources
from apiserver.storage.interface import Storage

T = TypeVar("T")


class WantsAuthorizer(Protocol):
    @property
    def authorizer(self) -> Authorizer:
        """The server's authorizer, read when asked: the server composes it once every part is made."""
        ...


class WantsAuthorizerModes(Protocol):
    @property
    def authorizer_modes(self) -> dict[str, Authorizer]:
        """Where a part provides an ``--authorization-mode`` by name, before the server composes them."""
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


class WantsServed(Protocol):
    @property
    def served(self) -> ServedResources | None:
        """What the server serves, changeable while it serves; None until the server is built."""
        ...


class WantsAudit(Protocol):
    @property
    def audit(self) -> InternalAudit:
        """Where the server's own writes are audited, as requests of the controller making them."""
        ...


class WantsElection(Protocol):
    elector: Elector | None
    """Set by the part that elects (the Lease kind's)."""

    @property
    def leader_election(self) -> LeaderElection | None:
        """None: the only replica of its storage, which leads from the start."""
        ...


class WantsAggregation(Protocol):
    aggregation: Aggregation | None
    """Set by the part that proxies to other API servers (the APIService kind's)."""

    @property
    def proxy_client_cert(self) -> tuple[Path, Path] | None:
        """The certificate and key presented to the API servers proxied to (--proxy-client-cert-file)."""
        ...


class WantsKindOptions(Protocol):
    def kind_option(self, of: type[T], default: T) -> T:
        """What a kind's own serve flags parsed to (apiserver/server/options.py's KindFlags)."""
        ...


class WantsParts(Protocol):
    def part(self, make: Callable[[Any], T]) -> T:
        """The one object ``make`` makes per server, however many definitions name it."""
        ...
