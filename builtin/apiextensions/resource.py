"""The ResourceType a CustomResourceDefinition serves, built from its checked Definition as the generated
REST bindings are (generator/templates/rest.py.j2): the same schema drives pruning, defaulting, validation
and CEL, so a kind posted at run time answers as the generated one does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import ResourceType, VersionType
from apiserver.schema import Cause, apply_defaults, validate
from generator.definition import Definition, Version
from generator.plan import build_plan

__all__ = ["resource_type"]


def _defaulter(defaults: dict[str, Any] | None) -> Callable[[Object], None] | None:
    if defaults is None:
        return None
    return lambda obj: apply_defaults(obj, defaults)


def _validator(schema: dict[str, Any]) -> Callable[[Object], list[Cause]]:
    return lambda obj: validate(obj, schema)


def _version_type(version: Version, defaults: dict[str, Any] | None, smp: bool) -> VersionType:
    return VersionType(
        name=version.name,
        served=version.served,
        storage=version.storage,
        schema=version.schema,
        deprecated=version.deprecated,
        deprecation_warning=version.deprecation_warning,
        status_subresource=version.status_subresource,
        scale=version.scale_subresource,
        printer_columns=version.printer_columns,
        selectable_fields=version.selectable_fields,
        strategic_merge_patch=smp,
        defaulter=_defaulter(defaults),
        validator=_validator(version.schema),
    )


def resource_type(definition: Definition) -> ResourceType:
    """The served resource of a checked CRD Definition (conversion strategy None: the apiVersion is
    rewritten, each version's schema prunes what it does not declare)."""
    (group,) = build_plan([definition]).groups
    versions = tuple(
        _version_type(
            version,
            group.kind(definition, version.name).defaults_schema,
            group.kind(definition, version.name).strategic_merge_patch,
        )
        for version in definition.versions
    )
    return ResourceType(
        group=definition.group,
        kind=definition.kind,
        plural=definition.plural,
        singular=definition.singular,
        list_kind=definition.list_kind,
        namespaced=definition.namespaced,
        short_names=definition.short_names,
        categories=definition.categories,
        versions=versions,
    )
