"""The parts of kube's ValidateService that a Service's schema cannot say (pkg/apis/core/validation/
validation.go: validateService, validateServicePort, ValidateServiceClusterIPsRelatedFields,
validateServiceExternalTrafficPolicy), with kube's messages and in kube's order. kube validates a built-in
kind by hand only, so the port ranges are here rather than in the schema (its OpenAPI declares none)."""

from __future__ import annotations

import re
from typing import Any

from apiserver.machinery.names import is_dns1123_label, is_dns1123_subdomain
from apiserver.schema import Cause
from apiserver.schema.causes import duplicate, forbidden, invalid, not_supported, required
from apiserver.schema.objectmeta import label_causes
from builtin.core.serviceallocation import NONE

IP_FAMILIES = ("IPv4", "IPv6")
IP_FAMILY_POLICIES = ("PreferDualStack", "RequireDualStack", "SingleStack")
_PORT_NAME_CHARSET = re.compile(r"^[-a-z0-9]+$")
_PORT_NAME_LETTER = re.compile(r"[a-z]")


def service_causes(spec: dict[str, Any]) -> list[Cause]:
    """validateService's checks of the spec that the schema leaves to kube's Go validation."""
    found: list[Cause] = []
    kind = spec.get("type")
    ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
    headless = (spec.get("clusterIPs") or [""])[0] == NONE
    if not ports and not headless and kind != "ExternalName":
        found.append(required("spec.ports"))
    if kind == "ExternalName":
        found.extend(
            forbidden(f"spec.{key}", "may not be set for ExternalName services")
            for key in ("clusterIPs", "ipFamilies", "ipFamilyPolicy")
            if spec.get(key)
        )
        cname = str(spec.get("externalName") or "").removesuffix(".")
        if cname:
            found.extend(
                invalid("spec.externalName", cname, m) for m in is_dns1123_subdomain(cname)
            )
        else:
            found.append(required("spec.externalName"))
    names: set[str] = set()
    for index, port in enumerate(ports):
        found.extend(_port_causes(port, len(ports) > 1, names, f"spec.ports[{index}]"))
    selector = spec.get("selector")
    if isinstance(selector, dict):
        found.extend(label_causes(selector, "spec.selector"))
    found.extend(_ip_family_causes(spec))
    if kind == "ClusterIP" or kind == "ExternalName":
        found.extend(
            forbidden(f"spec.ports[{i}].nodePort", f"may not be used when `type` is '{kind}'")
            for i, port in enumerate(ports)
            if port.get("nodePort")
        )
    found.extend(_external_traffic_policy_causes(spec))
    return found


def _port_causes(
    port: dict[str, Any], require_name: bool, names: set[str], path: str
) -> list[Cause]:
    """validateServicePort."""
    found: list[Cause] = []
    name = port.get("name")
    if require_name and not name:
        found.append(required(f"{path}.name"))
    elif isinstance(name, str) and name:
        found.extend(invalid(f"{path}.name", name, m) for m in is_dns1123_label(name))
        if name in names:
            found.append(duplicate(f"{path}.name", name))
        names.add(name)
    number = port.get("port")
    if isinstance(number, int):
        found.extend(invalid(f"{path}.port", number, m) for m in port_number_errors(number))
    target = port.get("targetPort")
    if isinstance(target, int):
        found.extend(invalid(f"{path}.targetPort", target, m) for m in port_number_errors(target))
    elif isinstance(target, str):
        found.extend(invalid(f"{path}.targetPort", target, m) for m in port_name_errors(target))
    return found


def port_number_errors(port: int) -> list[str]:
    """apimachinery's IsValidPortNum."""
    return [] if 1 <= port <= 65535 else ["must be between 1 and 65535, inclusive"]


def port_name_errors(name: str) -> list[str]:
    """apimachinery's IsValidPortName (an IANA_SVC_NAME)."""
    errors = []
    if len(name) > 15:
        errors.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARSET.match(name):
        errors.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _PORT_NAME_LETTER.search(name):
        errors.append("must contain at least one letter (a-z)")
    if "--" in name:
        errors.append("must not contain consecutive hyphens")
    if name and (name[0] == "-" or name[-1] == "-"):
        errors.append("must not begin or end with a hyphen")
    return errors


def _ip_family_causes(spec: dict[str, Any]) -> list[Cause]:
    """The ipFamilies and ipFamilyPolicy values (ValidateServiceClusterIPsRelatedFields)."""
    found: list[Cause] = []
    seen: set[str] = set()
    families = spec.get("ipFamilies")
    for index, family in enumerate(families if isinstance(families, list) else []):
        path = f"spec.ipFamilies[{index}]"
        if family not in IP_FAMILIES:
            found.append(not_supported(path, family, IP_FAMILIES))
        if family in seen:
            found.append(duplicate(path, family))
        seen.add(family)
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in IP_FAMILY_POLICIES:
        found.append(not_supported("spec.ipFamilyPolicy", policy, IP_FAMILY_POLICIES))
    return found


def externally_accessible(spec: dict[str, Any]) -> bool:
    """kube's service.ExternallyAccessible: reachable from outside the cluster."""
    kind = spec.get("type")
    return kind in ("NodePort", "LoadBalancer") or (
        kind == "ClusterIP" and bool(spec.get("externalIPs"))
    )


def _external_traffic_policy_causes(spec: dict[str, Any]) -> list[Cause]:
    """validateServiceExternalTrafficPolicy's first rule: a policy only where traffic comes from outside."""
    policy = spec.get("externalTrafficPolicy")
    if not externally_accessible(spec) and policy:
        return [
            invalid(
                "spec.externalTrafficPolicy",
                policy,
                "may only be set for externally-accessible services",
            )
        ]
    return []
