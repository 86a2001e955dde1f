"""The OpenAPI documents of one group's CustomResourceDefinitions, built by the generator's own emitters
(generator/openapi.py, openapi_v2.py), so that a CRD posted at run time publishes what the same CRD generated
from a definition file does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator.naming import openapi_path_key

if TYPE_CHECKING:
    from generator.definition import Definition

__all__ = ["group_documents"]


def group_documents(
    definitions: list[Definition],
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """(/openapi/v3 documents by path, the Swagger 2.0 part for /openapi/v2) of one group's CRDs; both
    empty for none."""
    if not definitions:
        return {}, {}
    # the generator's planner and emitters, imported by the first CRD served: a server without one yet (a
    # test fixture's first start, `apiforge serve`) starts without them
    from generator.openapi import group_version_document
    from generator.openapi_v2 import swagger_document
    from generator.plan import build_plan

    v3: dict[str, dict[str, Any]] = {}
    for group in build_plan(definitions).groups:
        for version in group.versions:
            if any(kind.version.served for kind in version.kinds):
                v3[openapi_path_key(group.group, version.name)] = group_version_document(
                    version, validate=False
                )
    return v3, swagger_document(list(v3.values())) if v3 else {}
