"""The OpenAPI files, written from entries: each group-version's v3 document, the v3 aggregate and the Swagger 2.0
document (/openapi/v2), byte for byte what ``jsontext.dumps`` of the whole documents writes.

A group-version's entries (its paths and schemas, in v3 and converted to v2) are serialised once, with it, and
kept in the build cache; the aggregates are joins of every group-version's entries (see jsontext).
"""

from __future__ import annotations

from typing import Any

from generator.jsontext import Entries, document, entries, merge
from generator.openapi import INFO, OPENAPI_VERSION
from generator.openapi_v2 import SECURITY_DEFINITIONS, swagger_path_item, swagger_schema

V3_PATHS = "paths"
V3_SCHEMAS = "schemas"
V2_PATHS = "swagger paths"
V2_DEFINITIONS = "swagger definitions"
AGGREGATE = "openapi/aggregate.json"
SWAGGER = "openapi/swagger.json"  # /openapi/v2 (kubectl 1.27, 1.28)


def fragments(v3: dict[str, Any]) -> dict[str, Entries]:
    """A group-version document's entries, as they appear in its own file and in the aggregates."""
    components = v3["components"]
    if set(components) != {"schemas"}:  # the Swagger conversion below carries schemas only
        raise ValueError(f"unexpected components {sorted(components)} in a group-version document")
    schemas, paths = components["schemas"], v3["paths"]
    return {
        V3_PATHS: entries(paths, 1),
        V3_SCHEMAS: entries(schemas, 2),
        V2_PATHS: entries({path: swagger_path_item(item) for path, item in paths.items()}, 1),
        V2_DEFINITIONS: entries(
            {name: swagger_schema(schema) for name, schema in schemas.items()}, 1
        ),
    }


def v3_text(sections: dict[str, Entries]) -> str:
    """The v3 document made of ``sections`` (one group-version's, or all of them merged)."""
    return document(
        {"openapi": OPENAPI_VERSION, "info": INFO},
        {
            ("paths",): sections.get(V3_PATHS, {}),
            ("components", "schemas"): sections.get(V3_SCHEMAS, {}),
        },
    )


def aggregate_files(versions: list[tuple[str, dict[str, Entries]]]) -> dict[str, str]:
    """The v3 aggregate and the Swagger document from each served group-version's (name, entries), merged as
    kube-apiserver merges them into /openapi/v2: every path and schema once."""
    merged: dict[str, Entries] = {}
    for origin, sections in versions:
        for section, members in sections.items():
            merge(merged, section, members, origin)
    swagger = document(
        {
            "swagger": "2.0",
            "info": INFO,
            "securityDefinitions": SECURITY_DEFINITIONS,
            "security": [{"BearerToken": []}],
        },
        {("paths",): merged.get(V2_PATHS, {}), ("definitions",): merged.get(V2_DEFINITIONS, {})},
    )
    return {AGGREGATE: v3_text(merged), SWAGGER: swagger}
