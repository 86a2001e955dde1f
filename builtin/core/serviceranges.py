"""The address and port ranges the server hands Services from (kube-apiserver's --service-cluster-ip-range and
--service-node-port-range): the core kinds' own serve flags, which `apiforge serve` adds to the runtime's
(``KIND_FLAGS``); the parsed ranges reach the Service strategy through the server's ``kind_options``."""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Callable
from dataclasses import dataclass

import click

from builtin.wants import WantsKindOptions

__all__ = [
    "DEFAULT_CLUSTER_IP_RANGE",
    "DEFAULT_NODE_PORT_RANGE",
    "DEFAULT_SERVICE_RANGES",
    "ServiceRanges",
    "parse_service_ranges",
    "service_range_flags",
    "service_ranges",
]

DEFAULT_CLUSTER_IP_RANGE = "10.0.0.0/24"
"""kube-apiserver's historical default (kubeadm picks 10.96.0.0/12)."""
DEFAULT_NODE_PORT_RANGE = "30000-32767"
"""kube-apiserver's default (pkg/kubeapiserver/options DefaultServiceNodePortRange)."""

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class ServiceRanges:
    cluster_ips: Network
    node_ports: range

    @property
    def node_port_text(self) -> str:
        """The range as kube prints it in its errors ("30000-32767")."""
        return f"{self.node_ports.start}-{self.node_ports.stop - 1}"


def parse_service_ranges(cluster_ip_range: str, node_port_range: str) -> ServiceRanges:
    """The ranges the flags name; ValueError saying which flag is wrong and why."""
    try:
        network = ipaddress.ip_network(cluster_ip_range.strip(), strict=True)
    except ValueError as error:
        raise ValueError(f"--service-cluster-ip-range: {error}") from None
    if network.num_addresses < 4:  # kube: the network and broadcast addresses are never handed out
        raise ValueError(f"--service-cluster-ip-range: {network} is too small")
    # kube's net.ParsePortRange: "N-M" (or "N+M", N to N+M, or just "N")
    text = node_port_range.strip()
    try:
        if "+" in text:
            base, extra = text.split("+", 1)
            first, last = int(base), int(base) + int(extra)
        elif "-" in text:
            low, high = text.split("-", 1)
            first, last = int(low), int(high)
        else:
            first = last = int(text)
    except ValueError:
        raise ValueError(
            f'--service-node-port-range: unable to parse port range: "{text}"'
        ) from None
    if not 0 < first <= last <= 65535:
        raise ValueError(f'--service-node-port-range: invalid port range: "{text}"')
    return ServiceRanges(network, range(first, last + 1))


DEFAULT_SERVICE_RANGES = parse_service_ranges(DEFAULT_CLUSTER_IP_RANGE, DEFAULT_NODE_PORT_RANGE)


def service_ranges(server: WantsKindOptions) -> ServiceRanges:
    """The ranges the server was started with (``service_range_flags``), else kube's defaults."""
    return server.kind_option(ServiceRanges, DEFAULT_SERVICE_RANGES)


def service_range_flags(parsed: Callable[..., None]) -> Callable[..., None]:
    """kube-apiserver's two Service flags, handed on to ``parsed`` as ``ServiceRanges`` in its
    ``kind_options`` (a wrong range is a usage error, as a wrong flag)."""

    @click.option(
        "--service-cluster-ip-range",
        default=DEFAULT_CLUSTER_IP_RANGE,
        show_default=True,
        help="The CIDR Services' cluster IPs are allocated from.",
    )
    @click.option(
        "--service-node-port-range",
        default=DEFAULT_NODE_PORT_RANGE,
        show_default=True,
        help="The ports (N-M, inclusive) NodePort and LoadBalancer Services' node ports are allocated from.",
    )
    @functools.wraps(parsed)
    def with_service_ranges(
        *args: object,
        service_cluster_ip_range: str,
        service_node_port_range: str,
        kind_options: dict[type, object],
        **kwargs: object,
    ) -> None:
        try:
            ranges = parse_service_ranges(service_cluster_ip_range, service_node_port_range)
        except ValueError as error:
            raise click.UsageError(str(error)) from None
        parsed(*args, kind_options={**kind_options, ServiceRanges: ranges}, **kwargs)

    return with_service_ranges
