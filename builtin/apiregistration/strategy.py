"""The APIService strategy (kube-aggregator pkg/registry/apiservice and pkg/apis/apiregistration/validation):
the name is ``version.group``, the priorities are bounded, and a local APIService (no service) carries no TLS
settings, in kube's words."""

from __future__ import annotations

import base64
import binascii
import datetime
from typing import Any

from apiserver.machinery.names import is_dns1035_label, is_dns1123_subdomain
from apiserver.machinery.objects import Object
from apiserver.registry.strategy import Strategy
from apiserver.schema import causes
from apiserver.schema.causes import Cause
from apiserver.schema.objectmeta import path_segment_name
from builtin.apiregistration.availability import LOCAL, with_condition


class APIServiceStrategy(Strategy):
    def prepare_for_create(self, obj: Object) -> None:
        """A local APIService (no service) is created Available, as kube-aggregator's strategy marks it
        (pkg/registry/apiservice/strategy.go PrepareForCreate), rather than a moment later by the
        availability controller: kube's create answer already carries the condition."""
        if (obj.get("spec") or {}).get("service") is None:
            obj["status"] = {}
            with_condition(obj, LOCAL, datetime.datetime.now(datetime.UTC))

    @staticmethod
    def name_rule(name: str, prefix: bool) -> list[str]:
        """Any path segment here; that it is ``version.group`` is checked with the spec (validate)."""
        return path_segment_name(name, prefix)

    def validate(self, obj: Object) -> list[Cause]:
        return validate_api_service(obj)

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return validate_api_service(obj)


def validate_api_service(obj: dict[str, Any]) -> list[Cause]:
    """kube's ValidateAPIService."""
    spec = obj.get("spec") or {}
    group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
    found: list[Cause] = []
    required_name = f"{version}.{group}"
    name = (obj.get("metadata") or {}).get("name", "")
    if name and name != required_name:
        found.append(
            causes.invalid(
                "metadata.name", name, f'must be `spec.version+"."+spec.group`: "{required_name}"'
            )
        )
    if not group and version != "v1":
        found.append(
            causes.required(
                "spec.group", "only v1 may have an empty group and it better be legacy kube"
            )
        )
    if group:
        found.extend(causes.invalid("spec.group", group, e) for e in is_dns1123_subdomain(group))
    found.extend(causes.invalid("spec.version", version, e) for e in is_dns1035_label(version))
    minimum = spec.get("groupPriorityMinimum") or 0
    if not 0 < minimum <= 20000:
        found.append(
            causes.invalid(
                "spec.groupPriorityMinimum", minimum, "must be positive and less than 20000"
            )
        )
    priority = spec.get("versionPriority") or 0
    if not 0 < priority <= 1000:
        found.append(
            causes.invalid("spec.versionPriority", priority, "must be positive and less than 1000")
        )
    ca_bundle = str(spec.get("caBundle") or "")
    skip = bool(spec.get("insecureSkipTLSVerify"))
    service = spec.get("service")
    if service is None:
        if ca_bundle:
            size = len(_decoded(ca_bundle))
            found.append(
                causes.invalid(
                    "spec.caBundle", f"{size} bytes", "local APIServices may not have a caBundle"
                )
            )
        if skip:
            found.append(
                causes.invalid(
                    "spec.insecureSkipTLSVerify",
                    skip,
                    "local APIServices may not have insecureSkipTLSVerify",
                )
            )
        return found
    if not service.get("namespace"):
        found.append(causes.required("spec.service.namespace"))
    if not service.get("name"):
        found.append(causes.required("spec.service.name"))
    port = service.get("port", 443)
    if not isinstance(port, int) or not 0 < port < 65536:
        found.append(
            causes.invalid(
                "spec.service.port",
                port,
                "port is not valid: must be between 1 and 65535, inclusive",
            )
        )
    if skip and ca_bundle:
        found.append(
            causes.invalid(
                "spec.insecureSkipTLSVerify", skip, "may not be true if caBundle is present"
            )
        )
    return found


def _decoded(data: str) -> bytes:
    try:
        return base64.b64decode(data)
    except (binascii.Error, ValueError):
        return b""
