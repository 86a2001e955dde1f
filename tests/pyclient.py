"""The `kubernetes` Python client's typed CoreV1Api for a server's kubeconfig, closed with its sockets
collected so that an unclosed-socket warning of the client library cannot surface in another test."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kubernetes import client, config


@contextmanager
def core_v1(kubeconfig: Path) -> Iterator[client.CoreV1Api]:
    api = config.new_client_from_config(config_file=str(kubeconfig))
    yield client.CoreV1Api(api)
    api.close()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "unclosed <socket.socket", ResourceWarning)
        gc.collect()
