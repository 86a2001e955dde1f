"""The address and port ranges the server hands Services from (kube-apiserver's --service-cluster-ip-range and
--service-node-port-range): server options, shared with the built-in kinds through the ServerContext."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

__all__ = [
    "DEFAULT_CLUSTER_IP_RANGE",
    "DEFAULT_NODE_PORT_RANGE",
    "DEFAULT_SERVICE_RANGES",
    "ServiceRanges",
    "parse_service_ranges",
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
