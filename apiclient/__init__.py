"""Typed Python clients for the API a project's definitions describe: the runtime the generated ``client.py``
modules bind their models to (configuration from a kubeconfig or a pod's service account, a sync or asyncio
connection, typed resources, watches, informers with listers, apply configurations and kube's errors as
exceptions).

Each name is imported from its module when first asked for: a process that needs only the configuration
(``apiclient.config``: a test server writing its kubeconfig) does not import the typed machinery and
pydantic."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apiclient.applyconfig import extract
    from apiclient.config import Config, in_cluster, load_kubeconfig
    from apiclient.connection import AsyncConnection, Connection
    from apiclient.errors import APIStatusError
    from apiclient.informer import DeletedFinalStateUnknown, Informer, Lister
    from apiclient.requests import Kind, Page, WatchEvent
    from apiclient.resource import AsyncResource, Resource

_MODULES = {
    "APIStatusError": "apiclient.errors",
    "AsyncConnection": "apiclient.connection",
    "AsyncResource": "apiclient.resource",
    "Config": "apiclient.config",
    "Connection": "apiclient.connection",
    "DeletedFinalStateUnknown": "apiclient.informer",
    "Informer": "apiclient.informer",
    "Kind": "apiclient.requests",
    "Lister": "apiclient.informer",
    "Page": "apiclient.requests",
    "Resource": "apiclient.resource",
    "WatchEvent": "apiclient.requests",
    "extract": "apiclient.applyconfig",
    "in_cluster": "apiclient.config",
    "load_kubeconfig": "apiclient.config",
}
__all__ = [
    "APIStatusError",
    "AsyncConnection",
    "AsyncResource",
    "Config",
    "Connection",
    "DeletedFinalStateUnknown",
    "Informer",
    "Kind",
    "Lister",
    "Page",
    "Resource",
    "WatchEvent",
    "extract",
    "in_cluster",
    "load_kubeconfig",
]


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return getattr(importlib.import_module(_MODULES[name]), name)
    raise AttributeError(f"module 'apiclient' has no attribute {name!r}")
