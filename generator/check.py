"""Stage 2 of the compiler: everything that must hold of the loaded definitions before a plan is built.

Names are valid (DNS-1123, UpperCamelCase kinds, Kubernetes version names); each resource has exactly one
storage version and at least one served one; no two definitions claim a kind, a plural or a short name of one
group; schemas are structural, with valid defaults (``check_schema``); printer columns, scale paths and
selectable fields name fields that exist with a fitting type (``check_fields``); conversion is total
(``check_conversion``). All problems are reported together, each at the line the user wrote.
"""

from __future__ import annotations

import re

from generator.check_across import check_across
from generator.check_conversion import HOOK_REFERENCE, check_conversion
from generator.check_fields import check_field_references
from generator.check_protobuf import check_protobuf
from generator.check_schema import check_schema
from generator.definition import Definition, DefinitionError, DefinitionErrors, JsonPath, Version
from generator.findings import Findings, Locator
from generator.naming import component_name
from generator.openapi_types import TYPE_NAME, TYPE_PATH, is_qualified, locate, published_types

__all__ = [
    "DNS1123_LABEL",
    "DNS1123_SUBDOMAIN",
    "KIND_NAME",
    "VERSION_NAME",
    "Locator",
    "check_definitions",
    "each_has_problems",
    "group_problem",
    "kind_problem",
]

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
KIND_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*$")
VERSION_NAME = re.compile(r"^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$")
MAX_DEPRECATION_WARNING = 256


def group_problem(group: str) -> str:
    """What is wrong with an API group name ("" is the core group), or ""."""
    if group and not (DNS1123_SUBDOMAIN.match(group) and len(group) <= 253):
        return (
            f'group "{group}" is not a DNS-1123 subdomain (lowercase letters, digits, "-" and ".", '
            "e.g. stable.example.com)"
        )
    if group and "." not in group:
        return f'group "{group}" needs at least one dot (e.g. {group}.example.com); "core" is the core group'
    return ""


def kind_problem(kind: str, key: str = "kind") -> str:
    """What is wrong with a kind (or listKind) name, or ""."""
    if KIND_NAME.match(kind):
        return ""
    return f'{key} "{kind}" must be UpperCamelCase: a capital letter, then letters and digits (e.g. CronTab)'


def _check_names(d: Definition, found: Findings) -> None:
    for path, problem in (
        (("group",), group_problem(d.group)),
        (("kind",), kind_problem(d.kind)),
        (("listKind",), kind_problem(d.list_kind, "listKind")),
    ):
        if problem:
            found.add(d, path, problem)
    if d.kind == d.list_kind:
        found.add(d, ("listKind",), f'listKind must differ from kind "{d.kind}"')
    for key, value in (("plural", d.plural), ("singular", d.singular)):
        if not (DNS1123_LABEL.match(value) and len(value) <= 63):
            found.add(
                d,
                (key,),
                f'{key} "{value}" must be a lowercase DNS-1123 label (letters, digits and "-", at most 63)',
            )
    for key, values in (("shortNames", d.short_names), ("categories", d.categories)):
        seen: set[str] = set()
        for index, value in enumerate(values):
            if not (DNS1123_LABEL.match(value) and len(value) <= 63):
                found.add(d, (key, index), f'"{value}" must be a lowercase DNS-1123 label')
            elif value in seen:
                found.add(d, (key, index), f'"{value}" is listed twice')
            seen.add(value)


def _check_versions(d: Definition, found: Findings) -> None:
    storage = [v for v in d.versions if v.storage]
    if not storage:
        found.add(
            d,
            ("versions",),
            "exactly one version must have storage: true (it is the hub); none has",
        )
    for extra in storage[1:]:
        found.add(
            d,
            ("versions", extra.name, "storage"),
            f"exactly one version may be stored; {storage[0].name} already is",
        )
    if not any(v.served for v in d.versions):
        found.add(d, ("versions",), "at least one version must be served")
    for version in d.versions:
        here = ("versions", version.name)
        if not VERSION_NAME.match(version.name):
            found.add(
                d,
                here,
                f'version "{version.name}" is not a Kubernetes version name; expected v<N>, v<N>alpha<M> or '
                "v<N>beta<M> (e.g. v1, v1beta1, v2alpha3)",
            )
        if version.deprecation_warning and not version.deprecated:
            found.add(d, (*here, "deprecationWarning"), "may only be set when deprecated is true")
        if len(version.deprecation_warning) > MAX_DEPRECATION_WARNING:
            found.add(
                d,
                (*here, "deprecationWarning"),
                f"must be at most {MAX_DEPRECATION_WARNING} characters",
            )
        check_schema(version.schema, found.reporter(d, (*here, "schema")))
        _check_cells(d, version, found)
        check_field_references(version, found.reporter(d, here), builtin=d.server.builtin)
        check_protobuf(d, version, found.reporter(d, here))


def _check_cells(d: Definition, version: Version, found: Findings) -> None:
    """Columns computed by a function name it well, and only built-in kinds (kube's own printers) place the
    name column themselves: a CRD's table always starts with it."""
    for index, column in enumerate(version.printer_columns):
        here: JsonPath = ("versions", version.name, "printerColumns", index)
        if column.cell and not HOOK_REFERENCE.match(column.cell):
            found.add(
                d, (*here, "cell"), f'"{column.cell}" must be a "package.module:name" reference'
            )
        if column.format == "name" and not d.server.builtin:
            found.add(
                d, (*here, "format"), 'only a builtin kind may declare a column of format "name"'
            )


def _named_types(
    d: Definition, found: Findings, key: str, pairs: tuple[tuple[str, str], ...], what: str
) -> list[str]:
    """The paths of ``openapiTypes`` or ``goTypes`` (``what``: OpenAPI, Go) whose entries are well formed;
    the others are reported (a builtin kind's only: a CRD's Go types are not kube's)."""
    example = {"OpenAPI": "ServicePort", "Go": "ServiceType"}[what]
    valid = []
    for path, name in pairs:
        here: JsonPath = (key, path)
        if not d.server.builtin:
            found.add(d, here, f"only a builtin kind may name {what} types")
        if not TYPE_NAME.match(name):
            found.add(d, here, f'"{name}" is not a type name such as {example}')
        if not TYPE_PATH.match(path):
            found.add(d, here, f'"{path}" is not a field path such as spec.ports[]')
            continue
        valid.append(path)
    return valid


def _check_openapi_types(d: Definition, found: Findings) -> None:
    """Each named OpenAPI type is an object field of every version, named as a Go type, of a built-in kind
    (a CRD's schema is published inline, as apiextensions publishes it); a type kube publishes itself
    (MicroTime, ObjectReference) may name any field, whose schema kube's then replaces."""
    names = dict(d.server.openapi_types)
    for path in _named_types(d, found, "openapiTypes", d.server.openapi_types, "OpenAPI"):
        name = names[path]
        for version in d.versions:
            node = locate(version.schema, path)
            if node is not None and _kube_publishes(d, version.name, name):
                continue
            if node is None or node.get("type") != "object" or "properties" not in node:
                found.add(
                    d,
                    ("openapiTypes", path),
                    f"{path} is no object with properties in version {version.name}",
                )


def _check_go_types(d: Definition, found: Findings) -> None:
    """Each named Go type (a named string type: ServiceType) is a string field of every version."""
    for path in _named_types(d, found, "goTypes", d.server.go_types, "Go"):
        for version in d.versions:
            node = locate(version.schema, path)
            if node is None or node.get("type") != "string":
                found.add(d, ("goTypes", path), f"{path} is no string in version {version.name}")


def _kube_publishes(d: Definition, version: str, name: str) -> bool:
    """Whether a type a definition names is one kube publishes itself, by its qualified name or by the
    kind's package (JSONSchemaProps of apiextensions)."""
    qualified = name if is_qualified(name) else component_name(d.group, version, name, True)
    return qualified in published_types()


VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


def _check_server_parts(d: Definition, found: Findings) -> None:
    """Well-formed class references (resolved when the generated server imports them) and known verbs."""
    parts = d.server
    references: list[tuple[JsonPath, str]] = (
        [(("strategy",), parts.strategy)] if parts.strategy else []
    )
    for key, values in (
        ("admission", parts.admission),
        ("controllers", parts.controllers),
        ("authenticators", parts.authenticators),
    ):
        references += [((key, i), value) for i, value in enumerate(values)]
    for sub in parts.create_subresources:
        here: JsonPath = ("createSubresources", sub.name)
        references.append(((*here, "handler"), sub.handler))
        if sub.name in ("status", "scale") or not DNS1123_LABEL.match(sub.name):
            found.add(d, here, f'"{sub.name}" cannot name a subresource answered by a handler')
        if not sub.version:
            found.add(d, (*here, "apiVersion"), 'expected "group/version" (or "version" for core)')
    for path, reference in references:
        if not HOOK_REFERENCE.match(reference):
            found.add(d, path, f'"{reference}" must be a "package.module:Name" reference')
    _check_openapi_types(d, found)
    _check_go_types(d, found)
    for index, verb in enumerate(parts.verbs):
        if verb not in VERBS:
            found.add(
                d, ("verbs", index), f'"{verb}" is not a verb; expected one of {", ".join(VERBS)}'
            )


def _check_one(definition: Definition, found: Findings) -> None:
    _check_names(definition, found)
    _check_server_parts(definition, found)
    if definition.versions:
        _check_versions(definition, found)
        if sum(v.storage for v in definition.versions) == 1:
            check_conversion(
                definition, found.locate.format(definition) == "crd", found.reporter(definition)
            )


def each_has_problems(definitions: list[Definition], locate: Locator) -> bool:
    """Whether some definition alone has a problem (the build cache checks a file's definitions so, and the
    checks between definitions over all of them: ``check_across``)."""
    found = Findings(locate)
    for definition in definitions:
        _check_one(definition, found)
    return bool(found.errors)


def check_definitions(definitions: list[Definition], locate: Locator) -> None:
    """Raise DefinitionErrors listing every problem of every definition (in file and line order; see
    DefinitionError.order). Generated and posted CRDs alike: a CRD's versions convert as kube's strategy
    None does (the apiVersion changes, the target's schema prunes), so their conversion need not be total."""
    found = Findings(locate)
    for definition in definitions:
        _check_one(definition, found)
    check_across(definitions, found)
    if found.errors:
        raise DefinitionErrors(sorted(found.errors, key=DefinitionError.order))
