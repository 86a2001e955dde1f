"""``GET /``: every path the server answers at, as kube-apiserver's index lists them (k8s.io/apiserver
pkg/server/routes/index.go, IndexLister: ``{"paths": [...]}``, sorted) — discovery, each health endpoint and
each of its named checks, /metrics, OpenAPI, /version and the service-account issuer's documents."""

from __future__ import annotations

from collections.abc import Iterable

import orjson

STATIC_PATHS = ("/metrics", "/openapi/v2", "/openapi/v3", "/openapi/v3/", "/version")


def index_body(
    discovery: Iterable[str], health: dict[str, list[str]], issuer: Iterable[str]
) -> bytes:
    """The index of ``discovery``'s paths, ``health``'s endpoints with their checks, and ``issuer``'s."""
    paths = {*discovery, *STATIC_PATHS, *issuer}
    for endpoint, checks in health.items():
        paths.add(f"/{endpoint}")
        paths.update(f"/{endpoint}/{check}" for check in checks)
    return orjson.dumps({"paths": sorted(paths)})
