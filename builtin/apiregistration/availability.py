"""The Available condition of an APIService (kube-aggregator's AvailableConditionController): a local one is
always available; a proxied one when its Service resolves and its backend answers the discovery of its
group-version with a 2xx, asked as ``system:kube-aggregator`` in ``system:masters`` within five seconds.
The check also returns what the backend's discovery and OpenAPI say, which the aggregator merges."""

from __future__ import annotations

import datetime
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from apiserver.authentication.user import MASTERS_GROUP, UserInfo
from builtin.apiregistration.transport import user_headers
from builtin.core.serviceresolver import Endpoint

CHECK_TIMEOUT = 5.0
OPENAPI_REFRESH = 60.0
"""Seconds a backend's OpenAPI is kept while its discovery does not change: the documents are large, the
checks frequent."""
AGGREGATOR_USER = UserInfo("system:kube-aggregator", groups=(MASTERS_GROUP,))
_HEADERS = [(b"accept", b"application/json"), *user_headers(AGGREGATOR_USER)]


@dataclass(frozen=True, slots=True)
class Verdict:
    available: bool
    reason: str
    message: str
    resources: tuple[dict[str, Any], ...] = ()
    openapi_v3: dict[str, Any] = field(default_factory=dict)
    """The backend's /openapi/v3 entry of the group-version (``serverRelativeURL``), when it has one."""
    openapi_v2: dict[str, Any] = field(default_factory=dict)
    openapi_fetched: float = field(default=0.0, compare=False)
    """When (monotonic seconds) the OpenAPI was fetched."""


LOCAL = Verdict(True, "Local", "Local APIServices are always available")


def unavailable(reason: str, message: str) -> Verdict:
    return Verdict(False, reason, message)


async def check(
    client: httpx.AsyncClient,
    endpoint: Endpoint,
    sni: str,
    group: str,
    version: str,
    previous: Verdict,
) -> Verdict:
    """The discovery check, then (best effort) the backend's OpenAPI, fetched again when its discovery
    changed or the ``previous`` verdict's is older than ``OPENAPI_REFRESH``."""
    url = f"{endpoint.url}/apis/{group}/{version}"
    try:
        answer = await _get(client, url, sni)
    except httpx.HTTPError as error:
        return unavailable(
            "FailedDiscoveryCheck", f"failing or missing response from {url}: {_text(error)}"
        )
    if not 200 <= answer.status_code < 300:
        return unavailable(
            "FailedDiscoveryCheck",
            f"failing or missing response from {url}: bad status from {url}: {answer.status_code}",
        )
    try:
        document = orjson.loads(answer.content)
        resources = tuple(r for r in document["resources"] if isinstance(r, dict))
    except (orjson.JSONDecodeError, KeyError, TypeError) as error:
        return unavailable(
            "FailedDiscoveryCheck",
            f"failing or missing response from {url}: not an APIResourceList: {_text(error)}",
        )
    now = time.monotonic()
    if (
        previous.available
        and previous.resources == resources
        and now - previous.openapi_fetched < OPENAPI_REFRESH
    ):
        v3, v2, fetched = previous.openapi_v3, previous.openapi_v2, previous.openapi_fetched
    else:
        (v3, v2), fetched = await _openapi(client, endpoint, sni, group, version), now
    return Verdict(True, "Passed", "all checks passed", resources, v3, v2, fetched)


async def _get(client: httpx.AsyncClient, url: str, sni: str) -> httpx.Response:
    return await client.get(
        url, headers=_HEADERS, timeout=CHECK_TIMEOUT, extensions={"sni_hostname": sni}
    )


async def _openapi(
    client: httpx.AsyncClient, endpoint: Endpoint, sni: str, group: str, version: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The backend's /openapi/v3 entry and /openapi/v2 document; empty for what it does not serve."""
    v3: dict[str, Any] = {}
    v2: dict[str, Any] = {}
    try:
        index = await _get(client, f"{endpoint.url}/openapi/v3", sni)
        if index.status_code == 200:
            entry = (orjson.loads(index.content).get("paths") or {}).get(f"apis/{group}/{version}")
            v3 = entry if isinstance(entry, dict) else {}
        swagger = await _get(client, f"{endpoint.url}/openapi/v2", sni)
        if swagger.status_code == 200:
            document = orjson.loads(swagger.content)
            v2 = document if isinstance(document, dict) else {}
    except (httpx.HTTPError, orjson.JSONDecodeError, AttributeError):
        pass  # discovery passed: the group-version is served, only less described
    return v3, v2


def _text(error: Exception) -> str:
    return str(error) or type(error).__name__


def with_condition(
    obj: dict[str, Any], verdict: Verdict, now: datetime.datetime
) -> dict[str, Any] | None:
    """``obj`` with its Available condition set to ``verdict``; None when it already says so."""
    status = obj.setdefault("status", {}) or {}
    obj["status"] = status
    conditions = [c for c in status.get("conditions") or () if isinstance(c, dict)]
    current = next((c for c in conditions if c.get("type") == "Available"), None)
    wanted = "True" if verdict.available else "False"
    if (
        current is not None
        and current.get("status") == wanted
        and current.get("reason") == verdict.reason
        and current.get("message") == verdict.message
    ):
        return None
    transition = (
        current["lastTransitionTime"]
        if current is not None
        and current.get("status") == wanted
        and current.get("lastTransitionTime")
        else now.strftime("%Y-%m-%dT%H:%M:%SZ")
    )
    condition = {
        "type": "Available",
        "status": wanted,
        "lastTransitionTime": transition,
        "reason": verdict.reason,
        "message": verdict.message,
    }
    status["conditions"] = [c for c in conditions if c.get("type") != "Available"] + [condition]
    return obj
