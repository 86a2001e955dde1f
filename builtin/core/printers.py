"""The core kinds' table cells as kube's printers compute them (pkg/printers/internalversion/printers.go:
printService, printSecret, printConfigMap, printNamespace, printServiceAccount, printEvent).

The server prints every column (kube's TableConvertor asks its printers for the wide form), so cells are
never clipped; each function takes the object and the time of the request.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.endpoints.tablecells import since

NONE = "<none>"


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def service_cluster_ip(obj: dict[str, Any], now: datetime) -> str:
    """The first of spec.clusterIPs, ``<none>`` before one is allocated."""
    ips = _strings(_spec(obj).get("clusterIPs"))
    return ips[0] if ips else NONE


def _load_balancer_ips(obj: dict[str, Any]) -> list[str]:
    """loadBalancerStatusStringer: each ingress's IP, else its hostname, as a sorted set."""
    status = obj.get("status")
    balancer = status.get("loadBalancer") if isinstance(status, dict) else None
    ingress = balancer.get("ingress") if isinstance(balancer, dict) else None
    found: set[str] = set()
    for entry in ingress if isinstance(ingress, list) else []:
        if isinstance(entry, dict):
            address = entry.get("ip") or entry.get("hostname")
            if isinstance(address, str) and address:
                found.add(address)
    return sorted(found)


def service_external_ip(obj: dict[str, Any], now: datetime) -> str:
    """getServiceExternalIP: external IPs of ClusterIP and NodePort services, the load balancer's addresses
    (``<pending>`` until it has one), the external name, or ``<unknown>`` for an unknown type."""
    spec = _spec(obj)
    external = _strings(spec.get("externalIPs"))
    kind = spec.get("type")
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else NONE
    if kind == "LoadBalancer":
        addresses = _load_balancer_ips(obj) + external
        return ",".join(addresses) if addresses else "<pending>"
    if kind == "ExternalName":
        name = spec.get("externalName")
        return name if isinstance(name, str) else ""
    return "<unknown>"


def service_ports(obj: dict[str, Any], now: datetime) -> str:
    """makePortString: ``port/protocol`` or ``port:nodePort/protocol`` per port, ``<none>`` without ports."""
    ports = _spec(obj).get("ports")
    pieces = []
    for port in ports if isinstance(ports, list) else []:
        if not isinstance(port, dict):
            continue
        number, protocol, node_port = (
            port.get("port"),
            port.get("protocol", ""),
            port.get("nodePort"),
        )
        if isinstance(node_port, int) and node_port > 0:
            pieces.append(f"{number}:{node_port}/{protocol}")
        else:
            pieces.append(f"{number}/{protocol}")
    return ",".join(pieces) or NONE


def service_selector(obj: dict[str, Any], now: datetime) -> str:
    """labels.FormatLabels(spec.selector): ``k=v`` sorted by key, comma-separated; ``<none>`` when empty."""
    selector = _spec(obj).get("selector")
    pairs = sorted(selector.items()) if isinstance(selector, dict) else []
    return ",".join(f"{key}={value}" for key, value in pairs) or NONE


def _size(value: Any) -> int:
    return len(value) if isinstance(value, dict | list) else 0


def data_count(obj: dict[str, Any], now: datetime) -> int:
    """A Secret's DATA: how many keys ``data`` has."""
    return _size(obj.get("data"))


def config_map_data_count(obj: dict[str, Any], now: datetime) -> int:
    """A ConfigMap's DATA: its keys in ``data`` and ``binaryData`` together."""
    return _size(obj.get("data")) + _size(obj.get("binaryData"))


def secrets_count(obj: dict[str, Any], now: datetime) -> int:
    """A ServiceAccount's SECRETS: how many it lists."""
    return _size(obj.get("secrets"))


def _field(obj: Any, *path: str) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _text(obj: dict[str, Any], *path: str) -> str:
    value = _field(obj, *path)
    return value if isinstance(value, str) else ""


def _timestamp(value: Any) -> Any:
    """A timestamp that is set: the zero time and an absent one are both unset in Go."""
    return value if isinstance(value, str) and value else None


def _first_seen(obj: dict[str, Any], now: datetime) -> str:
    first = _timestamp(obj.get("firstTimestamp"))
    return since(first if first is not None else obj.get("eventTime"), now)


def event_last_seen(obj: dict[str, Any], now: datetime) -> str:
    """The series' last observation, else lastTimestamp, else when it was first seen."""
    series_last = _field(obj, "series", "lastObservedTime")
    if isinstance(obj.get("series"), dict):
        return since(series_last, now)
    last = _timestamp(obj.get("lastTimestamp"))
    return since(last, now) if last is not None else _first_seen(obj, now)


def event_first_seen(obj: dict[str, Any], now: datetime) -> str:
    """firstTimestamp, else eventTime (events.k8s.io/v1 events set only that)."""
    return _first_seen(obj, now)


def event_count(obj: dict[str, Any], now: datetime) -> int:
    """The series' count, else count; a singleton event of the new API (count 0) counts 1."""
    series = obj.get("series")
    if isinstance(series, dict):
        count = series.get("count")
        return count if isinstance(count, int) else 0
    count = obj.get("count")
    return count if isinstance(count, int) and count != 0 else 1


def event_object(obj: dict[str, Any], now: datetime) -> str:
    """``kind/name`` of the involved object, the kind lower-cased (just the kind when it has no name)."""
    kind = _text(obj, "involvedObject", "kind").lower()
    name = _text(obj, "involvedObject", "name")
    return f"{kind}/{name}" if name else kind


def event_type(obj: dict[str, Any], now: datetime) -> str:
    """TYPE: the Go string, "" when unset (a JSONPath column would print null)."""
    return _text(obj, "type")


def event_reason(obj: dict[str, Any], now: datetime) -> str:
    """REASON: the Go string, "" when unset."""
    return _text(obj, "reason")


def event_subobject(obj: dict[str, Any], now: datetime) -> str:
    """SUBOBJECT: the involved object's fieldPath, "" when unset."""
    return _text(obj, "involvedObject", "fieldPath")


def event_source(obj: dict[str, Any], now: datetime) -> str:
    """formatEventSource: ``component, host``, each falling back to reportingComponent / reportingInstance."""
    component = _text(obj, "source", "component") or _text(obj, "reportingComponent")
    instance = _text(obj, "source", "host") or _text(obj, "reportingInstance")
    return f"{component}, {instance}" if instance else component


def event_message(obj: dict[str, Any], now: datetime) -> str:
    """The message without surrounding white space (strings.TrimSpace)."""
    return _text(obj, "message").strip()
