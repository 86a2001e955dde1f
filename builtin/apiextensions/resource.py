"""The ResourceType a CustomResourceDefinition serves, built from its checked Definition as the generated
REST bindings are (generator/templates/rest.py.j2): the same schema drives pruning, defaulting, validation
and CEL, so a kind posted at run time answers as the generated one does."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from apiserver.machinery.convert import deep_copy
from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import ResourceType, VersionType
from apiserver.schema import Cause, apply_defaults, prune, validate

if TYPE_CHECKING:
    from generator.definition import Definition, Version

__all__ = ["resource_type"]


def _defaulter(defaults: dict[str, Any] | None) -> Callable[[Object], None] | None:
    if defaults is None:
        return None
    return lambda obj: apply_defaults(obj, defaults)


def _validator(schema: dict[str, Any]) -> Callable[[Object], list[Cause]]:
    return lambda obj: validate(obj, schema)


def _pruned_to(api_version: str, schema: dict[str, Any]) -> Callable[[Object], Object]:
    """kube's conversion strategy None into one version: the apiVersion changes, and that version's schema
    prunes what it does not declare (schemaCoercingConverter, apiextensions-apiserver
    pkg/apiserver/customresource_handler.go)."""

    def convert(obj: Object) -> Object:
        out = deep_copy(obj)
        out["apiVersion"] = api_version
        prune(out, schema)
        return out

    return convert


def _converting(definition: Definition, version: Version, served: VersionType) -> VersionType:
    """``served`` converting to and from the storage version by strategy None when their schemas differ
    (the identity otherwise: nothing to prune, or a webhook converts)."""
    hub = definition.storage_version
    if version.storage or not version.conversion.prune or version.schema == hub.schema:
        return served
    group = f"{definition.group}/" if definition.group else ""
    return dataclasses.replace(
        served,
        to_internal=_pruned_to(f"{group}{hub.name}", hub.schema),
        from_internal=_pruned_to(f"{group}{version.name}", version.schema),
    )


def _version_type(
    definition: Definition, version: Version, defaults: dict[str, Any] | None, smp: bool
) -> VersionType:
    served = VersionType(
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
    return _converting(definition, version, served)


def resource_type(definition: Definition) -> ResourceType:
    """The served resource of a checked CRD Definition (conversion strategy None: the apiVersion is
    rewritten, each version's schema prunes what it does not declare)."""
    # the generator's planner, imported by the first CRD served
    from generator.plan import build_plan

    (group,) = build_plan([definition]).groups
    versions = tuple(
        _version_type(
            definition,
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
