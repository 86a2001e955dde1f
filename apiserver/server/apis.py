"""What a server is assembled from: the Scheme (types), each resource's storage wiring (RESTOptions) and the
parts definitions bring to the server itself (admission plugins, controllers, token authenticators), as
kube's genericapiserver installs APIGroupInfo (a scheme and a storage map) and registers admission plugins,
post-start hooks and authenticators where it assembles itself. Generated code's ``build_apis`` makes one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from apiserver.admission.interface import Plugin
from apiserver.authentication.token import TokenAuthenticator
from apiserver.machinery.scheme import Scheme
from apiserver.registry.rest import RESTOptions
from apiserver.server.config import ServerConfig
from apiserver.server.controllers import Controller

PluginFactory = Callable[[ServerConfig], Plugin]
ControllerFactory = Callable[[ServerConfig], Controller]
TokenAuthenticatorFactory = Callable[[ServerConfig], TokenAuthenticator]


@dataclass(frozen=True, slots=True)
class ServerParts:
    """What one definition brings to the server: admission plugins (``admission:``, ``admissionHooks:``),
    which judge writes of every kind; controllers (``controllers:``), run beside serving; and token
    authenticators (``authenticators:``), asked after the token file."""

    admission: tuple[PluginFactory, ...] = ()
    controllers: tuple[ControllerFactory, ...] = ()
    authenticators: tuple[TokenAuthenticatorFactory, ...] = ()


NO_PARTS = ServerParts()


@dataclass(frozen=True)
class APIs:
    """The resources a server serves from the start: their types, and by (group, plural) their storage
    wiring and server parts (a resource with neither takes the defaults)."""

    scheme: Scheme
    rest: Mapping[tuple[str, str], RESTOptions] = field(default_factory=dict)
    parts: Mapping[tuple[str, str], ServerParts] = field(default_factory=dict)
