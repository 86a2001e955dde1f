"""The type checking of a ValidatingAdmissionPolicy reported in its status (kube's type-checking
controller, status.typeChecking.expressionWarnings): each validation's, message expression's, variable's,
match condition's and audit annotation's references to ``object.<field>...`` and ``oldObject.<field>...``
are checked against the schema of every kind its matchConstraints name exactly (kube skips wildcards
too), and calls of functions this server does not evaluate are named. Warnings do not stop the policy:
evaluating it reports the error on the writes it concerns."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from apiserver.machinery.scheme import ResourceType, VersionType
from apiserver.schema.cel import compile_rule, unsupported_functions
from builtin.admissionregistration.authz import FUNCTIONS as AUTHORIZER
from builtin.wants import WantsStores

_REFERENCE = re.compile(r"\b(?:object|oldObject)((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
_ALWAYS = ("apiVersion", "kind", "metadata")


def _expressions(spec: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for i, v in enumerate(spec.get("validations") or ()):
        yield f"spec.validations[{i}].expression", str(v.get("expression", ""))
        if v.get("messageExpression"):
            yield f"spec.validations[{i}].messageExpression", str(v["messageExpression"])
    for i, v in enumerate(spec.get("variables") or ()):
        yield f"spec.variables[{i}].expression", str(v.get("expression", ""))
    for i, c in enumerate(spec.get("matchConditions") or ()):
        yield f"spec.matchConditions[{i}].expression", str(c.get("expression", ""))
    for i, a in enumerate(spec.get("auditAnnotations") or ()):
        yield f"spec.auditAnnotations[{i}].valueExpression", str(a.get("valueExpression", ""))


def _kinds(spec: dict[str, Any], context: WantsStores) -> list[tuple[ResourceType, VersionType]]:
    """The kinds and versions the policy's rules name without wildcards."""
    found: list[tuple[ResourceType, VersionType]] = []
    for rule in (spec.get("matchConstraints") or {}).get("resourceRules") or ():
        groups, versions = rule.get("apiGroups") or [], rule.get("apiVersions") or []
        for store in context.stores.values():
            resource = store.resource
            if resource.group not in groups or resource.plural not in (rule.get("resources") or []):
                continue
            found.extend((resource, v) for v in resource.served_versions if v.name in versions)
    return found


def _undefined(schema: dict[str, Any], steps: list[str]) -> int | None:
    """The index of the first step the schema does not define (None: all defined, or unknown fields)."""
    node = schema
    for index, step in enumerate(steps):
        if index == 0 and step in _ALWAYS:
            return None
        if node.get("x-kubernetes-preserve-unknown-fields") or node.get("additionalProperties"):
            return None
        properties = node.get("properties")
        if not isinstance(properties, dict) or step not in properties:
            return index
        node = properties[step]
    return None


def _field_warnings(source: str, kinds: list[tuple[ResourceType, VersionType]]) -> list[str]:
    found = []
    for resource, version in kinds:
        for match in _REFERENCE.finditer(source):
            steps = match.group(1)[1:].split(".")
            missing = _undefined(version.schema, steps)
            if missing is None:
                continue
            column = match.start(1) + sum(len(s) + 1 for s in steps[:missing])
            found.append(
                f"{resource.api_version(version.name)}, Kind={resource.kind}: ERROR: <input>:1:"
                f"{column + 1}: undefined field '{steps[missing]}'\n | {source}\n | "
                f"{'.' * column}^"
            )
            break
    return found


def type_warnings(policy: dict[str, Any], context: WantsStores) -> list[dict[str, str]]:
    spec = policy.get("spec") or {}
    kinds = _kinds(spec, context)
    warnings: list[dict[str, str]] = []
    for field_ref, source in _expressions(spec):
        try:
            program = compile_rule(source)
        except ValueError:
            continue  # refused on write; an older stored policy fails at evaluation
        messages = _field_warnings(source, kinds)
        missing = [f for f in unsupported_functions(program) if f not in AUTHORIZER]
        if missing:
            messages.append(f"undeclared reference to {', '.join(missing)} (not provided)")
        warnings.extend({"fieldRef": field_ref, "warning": m} for m in messages)
    return warnings
