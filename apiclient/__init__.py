"""Typed Python clients for the API a project's definitions describe: the runtime the generated ``client.py``
modules bind their models to (configuration from a kubeconfig or a pod's service account, a connection,
typed resources, watches and kube's errors as exceptions)."""

from apiclient.config import Config, in_cluster, load_kubeconfig
from apiclient.connection import Connection
from apiclient.errors import APIStatusError
from apiclient.resource import Kind, Resource, WatchEvent

__all__ = [
    "APIStatusError",
    "Config",
    "Connection",
    "Kind",
    "Resource",
    "WatchEvent",
    "in_cluster",
    "load_kubeconfig",
]
