"""The rules of MutatingAdmissionPolicy and its binding that their schema cannot say (kube's
ValidateMutatingAdmissionPolicy / ValidateMutatingAdmissionPolicyBinding, in its words): a policy has
mutations, each with the expression its patchType needs, compiling (object literals included,
celliterals.py), a reinvocationPolicy, and the matching and variables every policy needs; a binding names
its policy and names its params by exactly one of name or selector."""

from __future__ import annotations

from typing import Any, ClassVar, Final

from apiserver.machinery.objects import Object
from apiserver.registry.strategy import Strategy
from apiserver.schema import Cause, causes
from apiserver.schema.celparse import CelParseError
from builtin.admissionregistration.celenv import compile_expression
from builtin.admissionregistration.celliterals import rewritten
from builtin.admissionregistration.policystrategy import param_ref_causes, shared_causes

PATCH_TYPES: Final = {"ApplyConfiguration": "applyConfiguration", "JSONPatch": "jsonPatch"}
"""Each patchType and the member holding its expression."""


def mutation_causes(index: int, mutation: dict[str, Any]) -> list[Cause]:
    path = f"spec.mutations[{index}]"
    patch_type = mutation.get("patchType")
    member = PATCH_TYPES.get(str(patch_type))
    if member is None:
        return [causes.not_supported(f"{path}.patchType", patch_type, tuple(PATCH_TYPES))]
    found = [
        causes.forbidden(f"{path}.{other}", f"must be omitted when patchType is {patch_type}")
        for other in PATCH_TYPES.values()
        if other != member and mutation.get(other) is not None
    ]
    text = str((mutation.get(member) or {}).get("expression") or "")
    if not text:
        return [*found, causes.required(f"{path}.{member}.expression")]
    try:
        compile_expression(rewritten(text))
    except (CelParseError, ValueError) as error:
        found.append(
            causes.invalid(f"{path}.{member}.expression", text, f"compilation failed: {error}")
        )
    return found


def policy_causes(obj: Object) -> list[Cause]:
    spec = obj.get("spec") or {}
    found = shared_causes(spec)
    mutations = spec.get("mutations") or []
    if not mutations:
        found.append(causes.required("spec.mutations", "mutations must contain at least one item"))
    for index, mutation in enumerate(mutations):
        found.extend(mutation_causes(index, mutation))
    policy = spec.get("reinvocationPolicy")
    if policy is None:
        found.append(causes.required("spec.reinvocationPolicy"))
    return found


def binding_causes(obj: Object) -> list[Cause]:
    spec = obj.get("spec") or {}
    found = [] if spec.get("policyName") else [causes.required("spec.policyName")]
    return [*found, *param_ref_causes(spec.get("paramRef"))]


class MutatingPolicyStrategy(Strategy):
    # kube's strategies set generation 1 on create and bump it when the spec (the webhooks) changes
    sets_generation: ClassVar[bool | None] = True

    def validate(self, obj: Object) -> list[Cause]:
        return policy_causes(obj)

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return policy_causes(obj)


class MutatingBindingStrategy(Strategy):
    # kube's strategies set generation 1 on create and bump it when the spec (the webhooks) changes
    sets_generation: ClassVar[bool | None] = True

    def validate(self, obj: Object) -> list[Cause]:
        return binding_causes(obj)

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return binding_causes(obj)
