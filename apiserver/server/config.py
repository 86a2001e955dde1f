"""The config a server assembles and hands the parts its definitions name (strategies, create subresources,
admission plugins, controllers, token authenticators), as kube's genericapiserver.Config is completed into a
server that its post-start hooks see. Each part declares, as the Protocol its maker takes, the few
attributes it uses (kube's admission initializers: a plugin that wants the authorizer says so); this one
object has them all, so a built-in kind reaches the authorizer or another resource's Store without
globals, and the registry never sees it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from apiserver.audit.internal import InternalAudit
from apiserver.authentication.token import TokenAuthentication
from apiserver.authorization.authorizer import AlwaysAllow, Authorizer
from apiserver.endpoints.aggregation import Aggregation
from apiserver.registry.store import Store
from apiserver.server.controllers import Elector, LeaderElection
from apiserver.server.served import ServedResources
from apiserver.storage.interface import Storage


@dataclass
class ServerConfig:
    storage: Storage
    authorizer: Authorizer = field(default_factory=AlwaysAllow)
    stores: dict[tuple[str, str], Store] = field(default_factory=dict)
    """Every resource's Store by (group, plural), filled while the server is built."""
    authorizer_modes: dict[str, Authorizer] = field(default_factory=dict)
    """Authorizers the server's parts provide by ``--authorization-mode`` name (the RBAC kinds' "RBAC"),
    filled while the server is built; the server composes its authorizer from them."""
    tokens: TokenAuthentication = field(default_factory=TokenAuthentication)
    """Bearer-token authentication (TokenReview, service-account tokens, the bearer-token filter)."""
    leader_election: LeaderElection | None = None
    """None: this server is the only replica of its storage (SQLite, memory), so it leads from the start."""
    elector: Elector | None = None
    """The part that elects (the Lease kind's), set while the server is built."""
    proxy_client_cert: tuple[Path, Path] | None = None
    """The certificate and key the server presents to the API servers it proxies to
    (``--proxy-client-cert-file``, ``--proxy-client-key-file``; kubeadm's front-proxy-client by default)."""
    kind_options: Mapping[type, object] = field(default_factory=dict)
    """What the kinds' own serve flags parsed to, by type (``options.KindFlags``: the Service ranges of
    --service-cluster-ip-range and --service-node-port-range), and what the kinds tell the runtime's generic
    code with no flag (the impersonation filter's ``ImpersonationKinds``); see ``kind_option``."""
    secure_port: int = 6443
    """The port the server serves on (--secure-port), which the `kubernetes` Service targets."""
    audit: InternalAudit = field(default_factory=InternalAudit)
    """How the server's own writes (its controllers') reach the audit log; the audit chain sets the log's
    policy and backend on it (no log: nothing is recorded)."""
    served: ServedResources | None = None
    """What the server serves, changeable while it serves (CustomResourceDefinitions install kinds there);
    set by the server once it is built."""
    aggregation: Aggregation | None = None
    """The aggregator in front of the server's own handlers, set by the part that provides it (the
    APIService kind's); None: every request is served here."""
    parts: dict[Callable[..., Any], Any] = field(default_factory=dict)
    """Parts made once per server and shared, by their maker (see ``part``)."""

    def store(self, group: str, plural: str) -> Store:
        return self.stores[(group, plural)]

    def kind_option(self, of: type[T], default: D) -> T | D:
        """The value of type ``of`` that the kinds handed the server, else ``default`` (a server not
        started by `apiforge serve`, or whose command line lacked those flags)."""
        if of not in self.kind_options:
            return default
        found = self.kind_options[of]
        if not isinstance(found, of):
            raise TypeError(f"kind option {of.__name__} is a {type(found).__name__}")
        return found

    def part(self, make: Callable[[ServerConfig], T]) -> T:
        """The one ``make(self)`` of this server: a definition that names one class both as its admission
        plugin and as its controller (the webhook plugins follow their configurations) gets one object."""
        if make not in self.parts:
            self.parts[make] = make(self)
        made: T = self.parts[make]
        return made


T = TypeVar("T")
D = TypeVar("D")
