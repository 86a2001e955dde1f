"""The rules of ValidatingAdmissionPolicy and its binding that their schema cannot say (kube's
ValidateValidatingAdmissionPolicy / ValidateValidatingAdmissionPolicyBinding, in its words): a policy has
validations or audit annotations, matchConstraints with resourceRules, and expressions that compile; a
binding names its policy, has validation actions (not both Deny and Warn) and a paramRef with exactly one
of name or selector."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, ClassVar

from apiserver.machinery.objects import Object
from apiserver.registry.strategy import Strategy
from apiserver.schema import Cause, causes
from builtin.admissionregistration.celenv import (
    Environment,
    match_environment,
    policy_environment,
)

REASONS = ("Unauthorized", "Forbidden", "Invalid", "RequestEntityTooLarge")
ACTIONS = ("Audit", "Deny", "Warn")
_IDENTIFIER = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")


def _compiles(path: str, source: Any, environment: Environment) -> Iterator[Cause]:
    text = str(source or "")
    if not text:
        yield causes.required(path)
        return
    failure = environment.compile_failure(text)
    if failure is not None:
        yield causes.invalid(path, text, f"compilation failed: {failure}")


def shared_causes(spec: dict[str, Any]) -> list[Cause]:
    """What both kinds of policy require: matchConstraints with resourceRules, a complete paramKind,
    variables with CEL names, and variables and match conditions that compile."""
    found: list[Cause] = []
    match = spec.get("matchConstraints")
    if not match:
        found.append(causes.required("spec.matchConstraints"))
    elif not match.get("resourceRules"):
        found.append(causes.required("spec.matchConstraints.resourceRules"))
    kind = spec.get("paramKind")
    if kind is not None:
        for key in ("apiVersion", "kind"):
            if not kind.get(key):
                found.append(causes.required(f"spec.paramKind.{key}"))
    for i, v in enumerate(spec.get("variables") or ()):
        if not _IDENTIFIER.match(str(v.get("name", ""))):
            found.append(
                causes.invalid(
                    f"spec.variables[{i}].name", v.get("name"), "name is not a valid CEL identifier"
                )
            )
        before = policy_environment(spec, i)  # a variable sees those declared before it
        found.extend(_compiles(f"spec.variables[{i}].expression", v.get("expression"), before))
    for i, c in enumerate(spec.get("matchConditions") or ()):
        found.extend(
            _compiles(
                f"spec.matchConditions[{i}].expression",
                c.get("expression"),
                match_environment(spec),
            )
        )
    return found


def policy_causes(obj: Object) -> list[Cause]:
    spec = obj.get("spec") or {}
    found: list[Cause] = []
    if not spec.get("validations") and not spec.get("auditAnnotations"):
        found.append(
            causes.required(
                "spec.validations", "validations or auditAnnotations must contain at least one item"
            )
        )
    found.extend(shared_causes(spec))
    environment = policy_environment(spec)
    for i, v in enumerate(spec.get("validations") or ()):
        found.extend(
            _compiles(f"spec.validations[{i}].expression", v.get("expression"), environment)
        )
        if v.get("messageExpression"):
            found.extend(
                _compiles(
                    f"spec.validations[{i}].messageExpression", v["messageExpression"], environment
                )
            )
        if v.get("reason") and v["reason"] not in REASONS:
            found.append(
                causes.not_supported(f"spec.validations[{i}].reason", v["reason"], REASONS)
            )
    for i, a in enumerate(spec.get("auditAnnotations") or ()):
        found.extend(
            _compiles(
                f"spec.auditAnnotations[{i}].valueExpression", a.get("valueExpression"), environment
            )
        )
    return found


def binding_causes(obj: Object) -> list[Cause]:
    spec = obj.get("spec") or {}
    found: list[Cause] = []
    if not spec.get("policyName"):
        found.append(causes.required("spec.policyName"))
    actions = spec.get("validationActions") or []
    if not actions:
        found.append(
            causes.required("spec.validationActions", "at least one validation action is required")
        )
    for i, action in enumerate(actions):
        if action not in ACTIONS:
            found.append(causes.not_supported(f"spec.validationActions[{i}]", action, ACTIONS))
    if "Deny" in actions and "Warn" in actions:
        found.append(
            causes.invalid(
                "spec.validationActions",
                actions,
                "must not contain both Deny and Warn (repeating the same validation failure "
                "information in the API response and headers serves no purpose)",
            )
        )
    found.extend(param_ref_causes(spec.get("paramRef")))
    return found


def param_ref_causes(ref: Any) -> list[Cause]:
    """A binding's paramRef names its params by exactly one of name or selector, and says what a missing
    one does (kube's validateParamRef, for both kinds of policy binding)."""
    found: list[Cause] = []
    if ref is not None:
        if ref.get("name") and ref.get("selector") is not None:
            found.append(
                causes.forbidden("spec.paramRef.name", "name and selector are mutually exclusive")
            )
        elif not ref.get("name") and ref.get("selector") is None:
            found.append(
                causes.required("spec.paramRef", "one of name or selector must be specified")
            )
        if not ref.get("parameterNotFoundAction"):
            found.append(causes.required("spec.paramRef.parameterNotFoundAction"))
    return found


class PolicyStrategy(Strategy):
    # kube's strategies set generation 1 on create and bump it when the spec (the webhooks) changes
    sets_generation: ClassVar[bool | None] = True

    def prepare_for_create(self, obj: Object) -> None:
        """kube's PrepareForCreate resets the status to its empty struct, which is encoded: ``status: {}``."""
        obj["status"] = {}

    def validate(self, obj: Object) -> list[Cause]:
        return policy_causes(obj)

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return policy_causes(obj)


class BindingStrategy(Strategy):
    # kube's strategies set generation 1 on create and bump it when the spec (the webhooks) changes
    sets_generation: ClassVar[bool | None] = True

    def validate(self, obj: Object) -> list[Cause]:
        return binding_causes(obj)

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return binding_causes(obj)
