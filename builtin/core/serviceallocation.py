"""The cluster IPs and node ports of Services (kube's pkg/registry/core/service/storage/alloc.go, with the
ipallocator's and portallocator's errors): taken when a Service is created or changes type or ports, given back
when it no longer needs them or is deleted, each a RangeAllocator key in the shared storage."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.registry.strategy import Finish
from apiserver.schema import causes
from apiserver.storage.interface import Storage
from builtin.core.allocator import AlreadyAllocatedError, Holder, RangeAllocator, RangeFullError
from builtin.core.serviceranges import ServiceRanges

KIND = "Service"
NONE = "None"  # kube's ClusterIPNone: a headless Service
IPS_PREFIX = "/registry/ranges/serviceips/"
NODE_PORTS_PREFIX = "/registry/ranges/servicenodeports/"
MAX_IPS = 1 << 20  # a larger range is used from its start: more than any cluster has Services


def static_band(size: int, least: int, most: int, step: int) -> int:
    """kube's calculateRangeOffset: the lower part of a range kept for values users pick by hand."""
    if size < least:
        return 0
    return max(least, min(most, size // step))


def needs_cluster_ip(spec: dict[str, Any]) -> bool:
    return spec.get("type") != "ExternalName"


def needs_node_ports(spec: dict[str, Any]) -> bool:
    return spec.get("type") in ("NodePort", "LoadBalancer")


def allocates_node_ports(spec: dict[str, Any]) -> bool:
    """kube's shouldAllocateNodePorts: a NodePort Service always; a LoadBalancer one unless it opts out."""
    if spec.get("type") == "NodePort":
        return True
    return (
        spec.get("type") == "LoadBalancer"
        and spec.get("allocateLoadBalancerNodePorts") is not False
    )


def node_ports(spec: dict[str, Any]) -> set[int]:
    ports = spec.get("ports")
    found = set()
    for port in ports if isinstance(ports, list) else []:
        if isinstance(port, dict) and isinstance(port.get("nodePort"), int) and port["nodePort"]:
            found.add(port["nodePort"])
    return found


def _invalid(obj: Object, found: list[causes.Cause]) -> errors.APIError:
    name = str(obj["metadata"].get("name", ""))
    return errors.invalid(
        KIND, "", name, [errors.StatusCause(c.reason, c.message, c.field) for c in found]
    )


@dataclass
class Operation:
    """One write's allocations (kube's metaTransaction): what it took is given back unless the write is
    stored; what it stops using is given back only once it is stored. A dry run takes nothing."""

    holder: Holder
    dry_run: bool
    taken: list[tuple[RangeAllocator, int]] = field(default_factory=list)
    dropped: list[tuple[RangeAllocator, int]] = field(default_factory=list)

    async def take(self, allocator: RangeAllocator, index: int) -> None:
        await allocator.allocate(index, self.holder, self.dry_run)
        self.taken.append((allocator, index))

    async def take_next(self, allocator: RangeAllocator) -> int:
        index = await allocator.allocate_next(self.holder, self.dry_run)
        self.taken.append((allocator, index))
        return index

    async def finish(self, stored: bool) -> None:
        if self.dry_run:
            return
        for allocator, index in self.dropped if stored else self.taken:
            await allocator.release(index, self.holder)


class ServiceAllocators:
    """The server's two ranges, per --service-cluster-ip-range and --service-node-port-range."""

    def __init__(self, storage: Storage, ranges: ServiceRanges) -> None:
        network = ranges.cluster_ips
        self.network = network
        self.family = "IPv4" if network.version == 4 else "IPv6"
        # IPv4 never hands out the network and broadcast addresses; IPv6 only not the network's
        size = min(network.num_addresses - (2 if network.version == 4 else 1), MAX_IPS)
        self.ips = RangeAllocator(
            storage,
            IPS_PREFIX,
            size,
            lambda index: str(network.network_address + 1 + index),
            static_band(size + 2, 16, 256, 16),
        )
        self.ports_range = ranges.node_ports
        self.ports = RangeAllocator(
            storage,
            NODE_PORTS_PREFIX,
            len(ranges.node_ports),
            lambda index: str(ranges.node_ports.start + index),
            static_band(len(ranges.node_ports), 16, 128, 32),
        )
        self.ip_range_text = str(network)
        self.port_range_text = ranges.node_port_text

    def ip_index(self, text: str) -> int | None:
        """The allocator's index of a cluster IP, None when outside the range (or not handed out)."""
        address = ipaddress.ip_address(text)
        index = int(address) - int(self.network.network_address) - 1
        return index if address in self.network and 0 <= index < self.ips.size else None

    # -- create, update, delete ---------------------------------------------------------------------

    async def create(self, obj: Object, dry_run: bool) -> Finish:
        """kube's allocateCreate: the IP family fields, the cluster IP, the node ports."""
        operation = Operation(_holder(obj), dry_run)
        spec = obj.setdefault("spec", {})
        try:
            self._init_families(obj, spec)
            if needs_cluster_ip(spec) and not _headless(spec):
                await self._allocate_cluster_ip(obj, spec, operation)
            if needs_node_ports(spec):
                await self._allocate_node_ports(obj, spec, set(), operation)
        except BaseException:
            await operation.finish(False)
            raise
        return operation.finish

    async def update(self, obj: Object, old: Object, dry_run: bool) -> Finish:
        """kube's allocateUpdate: a cluster IP for a Service that stops being an ExternalName one (and the
        old one back for one that becomes it), node ports for new ports, the unused ones back."""
        operation = Operation(_holder(obj), dry_run)
        spec, old_spec = obj.setdefault("spec", {}), old.get("spec") or {}
        try:
            self._init_families(obj, spec)
            if not needs_cluster_ip(old_spec) and needs_cluster_ip(spec) and not _headless(spec):
                await self._allocate_cluster_ip(obj, spec, operation)
            elif needs_cluster_ip(old_spec) and not needs_cluster_ip(spec):
                operation.dropped.extend(self._held_ips(old_spec))
            old_ports = node_ports(old_spec) if needs_node_ports(old_spec) else set()
            if needs_node_ports(spec):
                await self._allocate_node_ports(obj, spec, old_ports, operation)
                kept = node_ports(spec)
            else:
                kept = set()
            operation.dropped.extend(self._held_ports(old_ports - kept))
        except BaseException:
            await operation.finish(False)
            raise
        return operation.finish

    async def release(self, obj: Object) -> None:
        """kube's releaseAllocatedResources, once the Service is deleted."""
        operation = Operation(_holder(obj), False)
        spec = obj.get("spec") or {}
        if needs_cluster_ip(spec):
            operation.dropped.extend(self._held_ips(spec))
        if needs_node_ports(spec):
            operation.dropped.extend(self._held_ports(node_ports(spec)))
        await operation.finish(True)

    # -- the parts ----------------------------------------------------------------------------------

    def _init_families(self, obj: Object, spec: dict[str, Any]) -> None:
        """kube's initIPFamilyFields on a single-stack cluster, after ValidateServiceClusterIPsRelatedFields'
        check that each cluster IP is one."""
        if not needs_cluster_ip(spec):
            return
        ips = spec.get("clusterIPs") or []
        assert isinstance(ips, list)
        bad = [
            causes.invalid(
                f"spec.clusterIPs[{i}]",
                ip,
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            )
            for i, ip in enumerate(ips)
            if not (i == 0 and ip == NONE) and not _is_ip(ip)
        ]
        # ValidateServiceClusterIPsRelatedFields: clusterIPs repeats clusterIP first, or both are empty
        if spec.get("clusterIP") and ips and ips[0] != spec["clusterIP"]:
            bad.append(causes.invalid("spec.clusterIPs", ips, "first value must match `clusterIP`"))
        elif not spec.get("clusterIP") and ips:
            detail = "must be empty when `clusterIP` is not specified"
            bad.append(causes.invalid("spec.clusterIPs", ips, detail))
        if bad:
            raise _invalid(obj, bad)
        if spec.get("ipFamilyPolicy") is None:
            headless_selectorless = _headless(spec) and not spec.get("selector")
            spec["ipFamilyPolicy"] = "RequireDualStack" if headless_selectorless else "SingleStack"
        families = (
            spec.get("ipFamilies") or [_family(ip) for ip in ips if ip != NONE] or [self.family]
        )
        if _headless(spec) and not spec.get("selector") and spec["ipFamilyPolicy"] != "SingleStack":
            families = [*families, "IPv6" if families[0] == "IPv4" else "IPv4"][:2]
        spec["ipFamilies"] = families

    async def _allocate_cluster_ip(
        self, obj: Object, spec: dict[str, Any], operation: Operation
    ) -> None:
        ips = spec.get("clusterIPs") or []
        assert isinstance(ips, list)
        wanted = str(ips[0]) if ips else ""
        if not wanted:
            try:
                index = await operation.take_next(self.ips)
            except RangeFullError as error:
                raise errors.internal_error(f"failed to allocate a serviceIP: {error}") from None
            wanted = self.ips.text(index)
        else:
            index_or_none = self.ip_index(wanted)
            problem = ""
            if index_or_none is None:
                problem = (
                    f"the provided IP ({wanted}) is not in the valid range. The range of valid IPs is "
                    f"{self.ip_range_text}"
                )
            else:
                try:
                    await operation.take(self.ips, index_or_none)
                except AlreadyAllocatedError:
                    problem = "provided IP is already allocated"
            if problem:
                detail = f"failed to allocate IP {wanted}: {problem}"
                raise _invalid(obj, [causes.invalid("spec.clusterIPs", ips, detail)])
        spec["clusterIP"] = wanted
        spec["clusterIPs"] = [wanted]

    async def _allocate_node_ports(
        self, obj: Object, spec: dict[str, Any], held: set[int], operation: Operation
    ) -> None:
        """kube's initNodePorts/updateNodePorts: a port that asks for a node port gets it (unless another
        holds it); one that asks for none gets a free one (the same for the same service port)."""
        by_service_port: dict[object, int] = {}
        ports = spec.get("ports") or []
        assert isinstance(ports, list)
        allocate_new = allocates_node_ports(spec)
        for i, port in enumerate(ports):
            if not isinstance(port, dict):
                continue
            requested = port.get("nodePort") or 0
            if not requested and not allocate_new:
                continue
            if requested in held or requested in by_service_port.values():
                by_service_port.setdefault(port.get("port"), requested)
                continue
            if requested:
                await self._take_port(obj, i, requested, operation)
            elif port.get("port") in by_service_port:
                requested = by_service_port[port.get("port")]
            else:
                try:
                    index = await operation.take_next(self.ports)
                except RangeFullError as error:
                    raise errors.internal_error(f"failed to allocate a nodePort: {error}") from None
                requested = self.ports_range.start + index
            port["nodePort"] = requested
            by_service_port.setdefault(port.get("port"), requested)

    async def _take_port(self, obj: Object, i: int, port: int, operation: Operation) -> None:
        if port not in self.ports_range:
            problem = (
                "provided port is not in the valid range. The range of valid ports is "
                f"{self.port_range_text}"
            )
        else:
            try:
                await operation.take(self.ports, port - self.ports_range.start)
                return
            except AlreadyAllocatedError:
                problem = "provided port is already allocated"
        raise _invalid(obj, [causes.invalid(f"spec.ports[{i}].nodePort", port, problem)])

    def _held_ips(self, spec: dict[str, Any]) -> Iterator[tuple[RangeAllocator, int]]:
        ips = spec.get("clusterIPs")
        for ip in ips if isinstance(ips, list) else []:
            if _is_ip(ip):
                index = self.ip_index(ip)
                if index is not None:
                    yield self.ips, index

    def _held_ports(self, ports: set[int]) -> Iterator[tuple[RangeAllocator, int]]:
        for port in sorted(ports):
            if port in self.ports_range:
                yield self.ports, port - self.ports_range.start


def _holder(obj: Object) -> Holder:
    metadata = obj["metadata"]
    return Holder(
        str(metadata.get("namespace", "")),
        str(metadata.get("name", "")),
        str(metadata.get("uid", "")),
    )


def _headless(spec: dict[str, Any]) -> bool:
    ips = spec.get("clusterIPs")
    return isinstance(ips, list) and bool(ips) and ips[0] == NONE


def _is_ip(text: object) -> bool:
    if not isinstance(text, str):
        return False
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _family(ip: str) -> str:
    return "IPv4" if ipaddress.ip_address(ip).version == 4 else "IPv6"
