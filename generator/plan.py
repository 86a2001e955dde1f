"""Stage 3 of the compiler: the IR. Everything the emitters need is computed here, once, from the definitions.

The IR is ``Plan → GroupPlan → VersionPlan → KindPlan``: plain frozen dataclasses, sorted, so that emitting from
the same definitions always yields the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from generator.definition import Definition, Version
from generator.naming import api_path_prefix, group_package
from generator.plan_conversion import Direction, directions
from generator.plan_protobuf import ProtoMessage, ProtoModule, hoist, protobuf_plan


@dataclass(frozen=True)
class KindPlan:
    """One kind in one version: the definition, the version, and the Python names emitted for it."""

    definition: Definition
    version: Version
    ident: str  # snake_case of the kind: cron_tab
    constant: str  # UPPER_CASE of the kind: CRON_TAB
    defaults_schema: (
        dict[str, Any] | None
    )  # the schema cut down to the branches that carry defaults
    to_hub: Direction  # the declared renames version → hub (none for the hub itself)
    from_hub: Direction
    strategic_merge_patch: (
        bool  # kube serves SMP for its compiled types, never for custom resources
    )
    to_hub_hook: tuple[str, str] | None  # (module, function)
    from_hub_hook: tuple[str, str] | None
    protobuf: (
        ProtoMessage | None
    )  # the kind's message, when its definition declares protobuf numbers

    @property
    def is_hub(self) -> bool:
        """The storage version is the hub, unless the objects are another resource's (``storedAs``)."""
        return self.version.storage and self.definition.server.stored_as is None

    @property
    def prunes(self) -> bool:
        """Converts by kube's strategy None between versions whose schemas differ: each direction prunes
        to its target's schema (identical schemas have nothing to prune)."""
        hub = self.definition.storage_version
        return (
            not self.is_hub and self.version.conversion.prune and self.version.schema != hub.schema
        )

    @property
    def hub_package(self) -> str:
        """The hub version's package beside this one (its schemas prune what a toHub hook returns); none
        when the hub is another resource's storage version, in another group."""
        return "" if self.definition.server.stored_as else self.definition.storage_version.name

    @property
    def hub_api_version(self) -> str:
        if self.definition.server.stored_as is not None:
            return self.definition.server.stored_as.api_version
        hub = self.definition.storage_version.name
        return f"{self.definition.group}/{hub}" if self.definition.group else hub

    @property
    def api_version(self) -> str:
        group = self.definition.group
        return f"{group}/{self.version.name}" if group else self.version.name


@dataclass(frozen=True)
class VersionPlan:
    """One group-version: every kind served or stored in it."""

    group: str
    name: str
    package: str  # stable_example_com.v1
    kinds: tuple[KindPlan, ...]

    @property
    def api_prefix(self) -> str:
        return api_path_prefix(self.group, self.name)

    @property
    def has_protobuf(self) -> bool:
        return any(kind.protobuf is not None for kind in self.kinds)

    @property
    def protobuf_module(self) -> ProtoModule:
        """The messages of the group-version's protobuf module, each shape once."""
        return hoist((kind.constant, kind.protobuf) for kind in self.kinds if kind.protobuf)


@dataclass(frozen=True)
class GroupPlan:
    """One API group with its versions and its resources' hub (storage) versions."""

    group: str
    package: str
    definitions: tuple[Definition, ...]
    versions: tuple[VersionPlan, ...]

    def kind(self, definition: Definition, version: str) -> KindPlan:
        for plan in self.versions:
            if plan.name == version:
                for kind in plan.kinds:
                    if kind.definition is definition:
                        return kind
        raise KeyError((definition.kind, version))

    @property
    def server_modules(self) -> tuple[str, ...]:
        """The modules of the classes and functions the group's definitions name (strategies, admission,
        controllers, authenticators, subresource handlers, printer cells, a conversion webhook's client)."""
        references = [
            reference
            for d in self.definitions
            for reference in (
                d.server.strategy,
                *d.server.admission,
                *d.server.controllers,
                *d.server.authenticators,
                *(sub.handler for sub in d.server.create_subresources),
                *(column.cell for version in d.versions for column in version.printer_columns),
                *(hook.function for hook in d.server.admission_hooks),
                *([HOOKS_FACTORY] if d.server.admission_hooks else []),
                *([WEBHOOK_CONVERTER] if d.conversion_webhook is not None else []),
            )
            if reference
        ]
        return tuple(sorted({reference.partition(":")[0] for reference in references}))


HOOKS_FACTORY = "builtin.admissionregistration.hooks:python_hook"
"""What makes an admission plugin of a definition's in-process hook (``admissionHooks``)."""
WEBHOOK_CONVERTER = "builtin.apiextensions.conversion:webhook_converter"
"""What converts a CRD's versions by calling its conversion webhook (``conversion.strategy: Webhook``)."""


@dataclass(frozen=True)
class Plan:
    groups: tuple[GroupPlan, ...]


def snake(name: str) -> str:
    """CronTab → cron_tab, ConfigMap → config_map, HTTPRoute → http_route."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def defaults_only(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The part of ``schema`` that leads to a ``default``; None when nothing below declares one.

    The generated defaulter walks only this, so a kind without defaults costs nothing on writes.
    """
    out: dict[str, Any] = {}
    if "default" in schema:
        out["default"] = schema["default"]
    for key in ("items", "additionalProperties"):
        sub = schema.get(key)
        if isinstance(sub, Mapping):
            cut = defaults_only(sub)
            if cut is not None:
                out[key] = cut
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        cut_properties = {}
        for field, sub in properties.items():
            cut = defaults_only(sub)
            if cut is not None:
                cut_properties[field] = cut
        if cut_properties:
            out["properties"] = cut_properties
    if not out:
        return None
    if "type" in schema:
        out["type"] = schema["type"]
    return out


def _hook(reference: str) -> tuple[str, str] | None:
    if not reference:
        return None
    module, _, function = reference.partition(":")
    return module, function


def _kind_plan(definition: Definition, version: Version) -> KindPlan:
    ident = snake(definition.kind)
    to_hub, from_hub = (
        (Direction((), ()), Direction((), ()))
        if version.storage
        else directions(definition, version)
    )
    return KindPlan(
        definition=definition,
        version=version,
        ident=ident,
        constant=ident.upper(),
        defaults_schema=defaults_only(version.schema),
        to_hub=to_hub,
        from_hub=from_hub,
        strategic_merge_patch=not definition.custom_resource,
        to_hub_hook=_hook(version.conversion.to_hub_hook),
        from_hub_hook=_hook(version.conversion.from_hub_hook),
        protobuf=protobuf_plan(definition, version)[0],  # checked: no problems are left
    )


def build_plan(definitions: list[Definition]) -> Plan:
    by_group: dict[str, list[Definition]] = {}
    for definition in definitions:
        by_group.setdefault(definition.group, []).append(definition)
    groups = []
    for group in sorted(by_group):
        members = sorted(by_group[group], key=lambda d: d.plural)
        package = group_package(group)
        version_names = sorted({v.name for d in members for v in d.versions})
        versions = []
        for name in version_names:
            kinds = tuple(_kind_plan(d, v) for d in members for v in d.versions if v.name == name)
            versions.append(VersionPlan(group, name, f"{package}.{name}", kinds))
        groups.append(GroupPlan(group, package, tuple(members), tuple(versions)))
    return Plan(tuple(groups))
