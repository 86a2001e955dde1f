"""Typed Python clients for the API a project's definitions describe: the runtime the generated ``client.py``
modules bind their models to (configuration from a kubeconfig or a pod's service account, a sync or asyncio
connection, typed resources, watches, informers with listers, apply configurations and kube's errors as
exceptions)."""

from apiclient.applyconfig import extract
from apiclient.config import Config, in_cluster, load_kubeconfig
from apiclient.connection import AsyncConnection, Connection
from apiclient.errors import APIStatusError
from apiclient.informer import DeletedFinalStateUnknown, Informer, Lister
from apiclient.requests import Kind, Page, WatchEvent
from apiclient.resource import AsyncResource, Resource

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
