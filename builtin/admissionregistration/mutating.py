"""The MutatingAdmissionPolicy admission plugin (kube's k8s.io/apiserver/pkg/admission/plugin/policy/
mutating): in the mutating phase, every binding (in name order) whose policy's matchConstraints and own
matchResources select a write, and whose policy's match conditions hold, applies the policy's mutations to
the object, once for each of its params; the schema validates the result afterwards, as it does a
webhook's. A policy whose reinvocationPolicy is IfNeeded runs once more when a later binding changed the
object after it. A configuration or evaluation error (a policy that does not compile, missing params, an
expression that fails or makes the wrong type, a patch that does not apply) refuses the write under
failurePolicy Fail and skips the binding under Ignore.

Policies and bindings are followed, matched and given their params as the validating plugin does
(policy.py); the kinds have no status."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from apiserver.admission.interface import Attributes, Operation
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.registry.offload import run_heavy
from builtin.admissionregistration.authz import Asking
from builtin.admissionregistration.cost import HEAVY_COST
from builtin.admissionregistration.equivalents import Matched
from builtin.admissionregistration.mutation import (
    CompiledMutatingPolicy,
    compile_mutating_policy,
)
from builtin.admissionregistration.policy import (
    ConfigurationError,
    PolicyServer,
    ValidatingPolicies,
    compiled_once,
)
from builtin.wants import WantsParts


class MutatingPolicies(ValidatingPolicies):
    plurals = ("mutatingadmissionpolicies", "mutatingadmissionpolicybindings")

    def __init__(self, context: PolicyServer) -> None:
        super().__init__(context)
        self.compiled_mutating: dict[tuple[str, str], CompiledMutatingPolicy | str] = {}
        """By (name, resourceVersion): the compiled policy, or why it does not compile."""

    def _policy_changed(self, policy: Object) -> None:
        self._forget_rules(policy)  # no status to write

    def compiled_mutating_policy(self, policy: Object) -> CompiledMutatingPolicy | str:
        return compiled_once(self.compiled_mutating, policy, compile_mutating_policy)

    def handles(self, operation: Operation) -> bool:
        # kube: mutating policies may not match DELETE
        return bool(self.bindings.objects) and operation in (Operation.CREATE, Operation.UPDATE)

    async def validate(self, attributes: Attributes) -> None:
        """Nothing: a mutating policy only mutates (the inherited validation is the validating kind's)."""

    async def admit(self, attributes: Attributes) -> None:
        failures: list[PolicyError] = []
        ran: list[tuple[str, bytes]] = []
        for binding_name in sorted(self.bindings.objects):
            if await self._admit_one(binding_name, attributes, failures):
                ran.append((binding_name, _snapshot(attributes.obj)))
        for binding_name, seen in ran:
            if seen != _snapshot(attributes.obj) and self._reinvoked(binding_name):
                await self._admit_one(binding_name, attributes, failures)
        if failures:
            raise _refusal(attributes, failures)

    def _reinvoked(self, binding_name: str) -> bool:
        binding = self.bindings.objects.get(binding_name) or {}
        policy = self.policies.objects.get(str((binding.get("spec") or {}).get("policyName")))
        return ((policy or {}).get("spec") or {}).get("reinvocationPolicy") == "IfNeeded"

    async def _admit_one(
        self, binding_name: str, attributes: Attributes, failures: list[PolicyError]
    ) -> bool:
        """Apply the binding's policy if it selects the write (the object changes in place); whether it
        ran. What fails under failurePolicy Fail is added to ``failures``; under Ignore it is dropped."""
        binding = self.bindings.objects.get(binding_name)
        spec = (binding or {}).get("spec") or {}
        policy = self.policies.objects.get(str(spec.get("policyName")))
        if binding is None or policy is None or attributes.obj is None:
            return False
        policy_name = policy["metadata"]["name"]
        fails_closed = (policy.get("spec") or {}).get("failurePolicy", "Fail") != "Ignore"
        try:
            matched = await self._selected(policy, binding, attributes)
        except ConfigurationError as error:
            if fails_closed:  # kube's PolicyError of a policy (no binding) or of a binding
                denier = (
                    f"policy '{policy_name}' with binding '{error.binding}'"
                    if error.binding is not None
                    else f'policy "{policy_name}"'
                )
                failures.append(PolicyError(f"{denier} denied request: {error}", ""))
            return False
        if matched is None:
            return False
        found: list[tuple[str, str]] = []
        mutated = await self._mutated(policy, binding, attributes, matched, found)
        if fails_closed:
            prefix = f"policy '{policy_name}' with binding '{binding_name}' denied request: "
            failures.extend(PolicyError(prefix + message, reason) for message, reason in found)
        if mutated is None:
            return False
        result = matched.back(mutated, attributes.resource, attributes.version)
        attributes.obj.clear()
        attributes.obj.update(result)
        return True

    async def _mutated(
        self, policy: Object, binding: Object, attributes: Attributes, matched: Matched,
        failures: list[tuple[str, str]],
    ) -> Object | None:  # fmt: skip
        """The object (in the matched resource and version) after the policy's mutations for each of
        the binding's params, or None when none ran; what failed is added to ``failures`` (message and Status reason, as
        kube's dispatcher reports them: Invalid for evaluation errors, none for configuration)."""
        compiled = self.compiled_mutating_policy(policy)
        if isinstance(compiled, str):
            failures.append((compiled, "Invalid"))
            return None
        try:
            all_params = await self._params(policy, binding, attributes)
        except ConfigurationError as error:
            failures.append((str(error), ""))
            return None
        resource, written = attributes.resource, attributes.version
        obj = matched.view(attributes.obj, resource, written)
        old = matched.view(attributes.old, resource, written)
        assert obj is not None  # a CREATE or UPDATE
        variables = await self.admission_variables(
            compiled.policy.needed, attributes, matched, obj, old
        )
        asking = Asking(self.context.authorizer, attributes.user)
        arguments = (compiled, obj, variables, all_params, matched.version.schema, asking)
        first = all_params[0] if all_params else None
        if compiled.bound({**variables, "params": first}) * len(all_params) > HEAVY_COST:
            mutated, found = await run_heavy(_run, *arguments)
        else:
            mutated, found = _run(*arguments)
        failures.extend((message, "Invalid") for message in found)
        return mutated


@dataclass(frozen=True, slots=True)
class PolicyError:
    """kube's generic.PolicyError: the message names the policy and binding."""

    message: str
    reason: str


def _refusal(attributes: Attributes, failures: list[PolicyError]) -> errors.APIError:
    """kube's policy dispatcher: admission.NewForbidden with the first failure's message (in place of
    NewForbidden's) and reason, every failure a cause; the code stays 403."""
    resource = attributes.resource
    name = attributes.name or str(((attributes.obj or {}).get("metadata") or {}).get("name", ""))
    error = errors.forbidden(
        resource.plural, resource.group, name, "admission request denied by policy"
    )
    error.message = failures[0].message
    error.reason = failures[0].reason or error.reason
    error.causes = [errors.StatusCause("", failure.message) for failure in failures]
    return error


def _run(
    compiled: CompiledMutatingPolicy, obj: Object, variables: dict[str, Any],
    all_params: list[Object | None], schema: dict[str, Any], asking: Asking,
) -> tuple[Object | None, list[str]]:  # fmt: skip
    """The evaluation, on whichever thread it runs (the authorizer checks ask for the write's user)."""
    with asking:
        return compiled.run(obj, variables, all_params, schema)


def _snapshot(obj: Object | None) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)


def mutating_policies(context: WantsParts) -> MutatingPolicies:
    """The server's one MutatingAdmissionPolicy plugin (admission plugin and both kinds' controller)."""
    return context.part(MutatingPolicies)
