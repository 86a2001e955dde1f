"""The `kubernetes` Service in the default namespace, which in-cluster clients find the API server by (kube's
pkg/controlplane/controller/kubernetesservice): port 443 (`https`) to the server's secure port, on the first
address of --service-cluster-ip-range."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.storage.interface import StorageError
from builtin.core.serviceranges import service_ranges
from builtin.wants import WantsKindOptions, WantsStores

log = logging.getLogger(__name__)

NAMESPACE, NAME = "default", "kubernetes"
ATTEMPTS, RETRY_SECONDS = (
    100,
    0.1,
)  # the default namespace comes from the namespace controller's start


class KubernetesServiceServer(WantsStores, WantsKindOptions, Protocol):
    """The Services' Store, the Service ranges, and the port the server serves on (--secure-port)."""

    @property
    def secure_port(self) -> int: ...


class KubernetesServiceController:
    """Creates the Service once, when it does not exist (a server that finds it keeps it as it is)."""

    def __init__(self, context: KubernetesServiceServer) -> None:
        self.context = context
        self._task: asyncio.Task[None] | None = None

    def service(self) -> Object:
        first_ip = str(service_ranges(self.context).cluster_ips.network_address + 1)
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": NAME,
                "namespace": NAMESPACE,
                "labels": {"component": "apiserver", "provider": "kubernetes"},
            },
            "spec": {
                "type": "ClusterIP",
                "clusterIP": first_ip,
                "sessionAffinity": "None",
                "ports": [
                    {
                        "name": "https",
                        "port": 443,
                        "protocol": "TCP",
                        "targetPort": self.context.secure_port,
                    }
                ],
            },
        }

    async def start(self) -> None:
        self._task = asyncio.create_task(self._ensure())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _ensure(self) -> None:
        store = self.context.store("", "services")
        for _ in range(ATTEMPTS):
            try:
                await store.create(NAMESPACE, self.service())
                return
            except errors.APIError as error:
                if error.code != 404:  # anything but "no default namespace yet"
                    # another replica may have won the race, and holds the address (422) or the name
                    if not await self._exists():
                        log.warning("the kubernetes Service is not created: %s", error)
                    return
            except StorageError as error:
                log.warning("the kubernetes Service is not created yet: %s", error)
            await asyncio.sleep(RETRY_SECONDS)

    async def _exists(self) -> bool:
        try:
            await self.context.store("", "services").get(NAMESPACE, NAME)
        except errors.APIError:
            return False
        return True
