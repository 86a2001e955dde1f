"""core/v1 Service (kube's pkg/registry/core/service): kube's defaults (pkg/apis/core/v1/defaults.go
SetDefaults_Service), the rules of ValidateService and ValidateServiceUpdate a schema cannot say
(pkg/apis/core/validation/validation.go), and the cluster IP and node ports each Service holds
(builtin/core/serviceallocation.py)."""

from __future__ import annotations

from typing import Any, Protocol

from apiserver.machinery.objects import Object
from apiserver.registry.strategy import Finish, Strategy
from apiserver.schema import Cause
from apiserver.schema.causes import invalid
from builtin.core.serviceallocation import (
    ServiceAllocators,
    needs_cluster_ip,
    needs_node_ports,
)
from builtin.core.serviceranges import service_ranges
from builtin.core.servicevalidation import externally_accessible, service_causes
from builtin.wants import WantsKindOptions, WantsStorage

DEFAULT_CLIENT_IP_TIMEOUT = 10800  # v1.DefaultClientIPServiceAffinitySeconds


class ServiceServer(WantsStorage, WantsKindOptions, Protocol):
    """The storage the allocations are kept in, and the ranges they are made from."""


class ServiceStrategy(Strategy):
    """Defaults on every write; on create a cluster IP (unless headless or ExternalName) and, for NodePort
    and LoadBalancer Services, node ports; on update what the new type and ports need, what they no longer
    need given back once stored; everything given back on delete."""

    def __init__(self, server: ServiceServer) -> None:
        super().__init__()
        self.allocators = ServiceAllocators(server.storage, service_ranges(server))

    def default(self, obj: Object) -> None:
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict):
            _set_defaults(spec)

    def prepare_for_create(self, obj: Object) -> None:
        _cluster_ips_from_cluster_ip(obj.setdefault("spec", {}))
        _empty_status(obj)

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        spec, old_spec = obj.setdefault("spec", {}), old.get("spec") or {}
        _cluster_ips_from_cluster_ip(spec)
        _empty_status(obj)
        _patch_allocated_values(spec, old_spec)
        _drop_type_dependent_fields(spec, old_spec)

    async def begin_create(self, obj: Object, dry_run: bool) -> Finish:
        return await self.allocators.create(obj, dry_run)

    async def begin_update(self, obj: Object, old: Object, dry_run: bool) -> Finish:
        return await self.allocators.update(obj, old, dry_run)

    async def after_delete(self, obj: Object) -> None:
        await self.allocators.release(obj)

    def validate(self, obj: Object) -> list[Cause]:
        return service_causes(obj.get("spec") or {})

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
        return _cluster_ips_unchanged(spec, old_spec) + service_causes(spec)


def _empty_status(obj: Object) -> None:
    """kube's ServiceStatus and its LoadBalancerStatus are structs, encoded even when empty: a Service
    always shows ``status: {loadBalancer: {}}``."""
    status = obj.get("status")
    if not isinstance(status, dict):
        status = obj["status"] = {}
    status.setdefault("loadBalancer", {})


def _set_defaults(spec: dict[str, Any]) -> None:
    """SetDefaults_Service (pkg/apis/core/v1/defaults.go), run as kube's decoder runs it: before validation,
    so a value of the wrong type is left for validation to refuse."""
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        config = spec.setdefault("sessionAffinityConfig", {})
        client_ip = config.setdefault("clientIP", {}) if isinstance(config, dict) else None
        if isinstance(client_ip, dict):
            client_ip.setdefault("timeoutSeconds", DEFAULT_CLIENT_IP_TIMEOUT)
    ports = spec.get("ports")
    for port in ports if isinstance(ports, list) else []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if port.get("targetPort") in (None, 0, ""):
                port["targetPort"] = port.get("port")
    kind = spec["type"]
    if externally_accessible(spec) and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if kind in ("NodePort", "LoadBalancer", "ClusterIP"):
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if kind == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)


def _cluster_ips_from_cluster_ip(spec: dict[str, Any]) -> None:
    """kube's REST fills clusterIPs from a lone clusterIP (pkg/registry/core/service/storage
    normalizeClusterIPs)."""
    if spec.get("clusterIP") and not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]


def _patch_allocated_values(spec: dict[str, Any], old: dict[str, Any]) -> None:
    """kube's patchAllocatedValues: an update that leaves out the cluster IP or a port's node port (a PUT
    of a manifest, kubectl replace) keeps the ones the Service holds, node ports matched by port name."""
    if needs_cluster_ip(old) and needs_cluster_ip(spec):
        if not spec.get("clusterIP") and old.get("clusterIP"):
            spec["clusterIP"] = old["clusterIP"]
        if not spec.get("clusterIPs") and old.get("clusterIPs"):
            spec["clusterIPs"] = list(old["clusterIPs"])
        # initIPFamilyFields: an update that names no policy (nor families) keeps the Service's
        for key in ("ipFamilyPolicy", "ipFamilies"):
            if not spec.get(key) and old.get(key):
                spec[key] = old[key]
    if needs_node_ports(old) and needs_node_ports(spec):
        old_ports = [p for p in old.get("ports") or [] if isinstance(p, dict)]
        new_ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
        used = {p.get("nodePort") for p in old_ports} & {p.get("nodePort") for p in new_ports}
        by_name = {p.get("name"): p.get("nodePort") for p in old_ports}
        for port in new_ports:
            if not port.get("nodePort") and by_name.get(port.get("name")) not in used:
                port["nodePort"] = by_name.get(port.get("name"))
                if port["nodePort"] is None:
                    del port["nodePort"]


def _drop_type_dependent_fields(spec: dict[str, Any], old: dict[str, Any]) -> None:
    """kube's dropTypeDependentFields: a Service changed to a type that needs no node ports (or no cluster
    IP) loses those it had, unless the update changed them itself."""
    unchanged_ports = _node_port_list(spec) == _node_port_list(old)
    if needs_node_ports(old) and not needs_node_ports(spec) and unchanged_ports:
        for port in spec.get("ports") or []:
            if isinstance(port, dict):
                port.pop("nodePort", None)
    if not externally_accessible(spec) and spec.get("externalTrafficPolicy") == old.get(
        "externalTrafficPolicy"
    ):
        spec.pop("externalTrafficPolicy", None)
    if needs_cluster_ip(old) and not needs_cluster_ip(spec):
        if spec.get("clusterIPs") == old.get("clusterIPs"):
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        for key in ("ipFamilies", "ipFamilyPolicy"):
            if spec.get(key) == old.get(key):
                spec.pop(key, None)


def _node_port_list(spec: dict[str, Any]) -> list[object]:
    return [p.get("nodePort") for p in spec.get("ports") or [] if isinstance(p, dict)]


def _cluster_ips_unchanged(spec: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """validateUpgradeDowngradeClusterIPs on a single-stack cluster: a cluster IP never changes, except by
    a change to or from ExternalName."""
    if "ExternalName" in (spec.get("type"), old.get("type")):
        return []
    new_ips, old_ips = spec.get("clusterIPs") or [], old.get("clusterIPs") or []
    if old_ips and not new_ips:
        return [invalid("spec.clusterIPs[0]", new_ips, "primary clusterIP can not be unset")]
    return [
        invalid(f"spec.clusterIPs[{i}]", new_ips, "may not change once set")
        for i, ip in enumerate(old_ips[: len(new_ips)])
        if ip != new_ips[i]
    ]
