"""Where a Service reference leads (kube-aggregator's ServiceResolver, without --enable-aggregator-routing,
which kube-apiserver also gives the admission webhooks, and the service checks of its
AvailableConditionController): the Service's cluster IP and the reference's port, or the DNS name of an
ExternalName Service. A Service that is missing or does not listen on the port makes an APIService unavailable,
with kube's reason and message, and a webhook call fail."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apiserver.machinery import errors
from builtin.wants import WantsStores


class Unresolved(Exception):
    """The backend cannot be reached: ``reason`` and ``message`` for the Available condition."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True, slots=True)
class Endpoint:
    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"https://{host}:{self.port}"


async def resolve(context: WantsStores, reference: dict[str, Any]) -> Endpoint:
    """The endpoint of ``spec.service``; raises Unresolved."""
    namespace, name = str(reference.get("namespace", "")), str(reference.get("name", ""))
    port = int(reference.get("port", 443))
    try:
        service = await context.store("", "services").get(namespace, name)
    except errors.APIError as error:
        if error.code != 404:
            raise
        raise Unresolved(
            "ServiceNotFound", f'service/{name} in "{namespace}" is not present'
        ) from None
    spec = service.get("spec") or {}
    if spec.get("type") == "ExternalName":
        return Endpoint(str(spec.get("externalName", "")), port)
    if not any(entry.get("port") == port for entry in spec.get("ports") or ()):
        raise Unresolved(
            "ServicePortError", f'service/{name} in "{namespace}" is not listening on port {port}'
        )
    cluster_ip = str(spec.get("clusterIP") or "")
    if not cluster_ip or cluster_ip == "None":
        raise Unresolved(
            "MissingEndpoints",
            f'endpoints for service/{name} in "{namespace}" have no addresses with port name ""',
        )
    return Endpoint(cluster_ip, port)


def server_name(reference: dict[str, Any]) -> str:
    """The name the certificate behind a Service reference must carry (kube: ``<name>.<namespace>.svc``, the
    TLS ServerName of both the aggregator's proxy and the webhook client)."""
    return f"{reference.get('name', '')}.{reference.get('namespace', '')}.svc"
