"""A MutatingAdmissionPolicy's expressions compiled once per version of the policy, and what applying its
mutations to one object gives (kube's k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch):

- ``ApplyConfiguration``: the expression makes an ``Object{...}`` apply configuration, merged into the
  object as server-side apply merges (structured-merge-diff: maps by key, list-type maps by their keys,
  sets by value, atomic lists and maps replaced; apiserver.fieldmanager.merge_objects with the schema of the
  version the policy sees);
- ``JSONPatch``: the expression makes a list of ``JSONPatch{op, path, from, value}``, applied as RFC 6902
  (``jsonpatch.escapeKey`` escapes ``~`` and ``/`` in a path key).

Mutations run in order, each seeing the object as the ones before left it (and the policy's variables
evaluated again on it). Object literals are rewritten into tagged maps first (celliterals.py); each
expression keeps kube's cost limits (cost.py), bounded before it runs."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Final

from apiserver.fieldmanager import compile_types
from apiserver.fieldmanager.typed import merge_objects
from apiserver.machinery.objects import Object
from apiserver.patch.jsonpatch import PatchError, apply_json_patch
from builtin.admissionregistration.celenv import admission_context, compile_expression
from builtin.admissionregistration.celliterals import (
    JSONPATCH,
    OBJECT,
    rewritten,
    type_of,
    untagged,
)
from builtin.admissionregistration.compiled import (
    Bound,
    CompiledPolicy,
    EvaluationError,
    Expression,
)
from builtin.admissionregistration.cost import cost_of
from builtin.admissionregistration.mutatingstrategy import PATCH_TYPES
from builtin.admissionregistration.projection import WHOLE, needed_fields

JSONPATCH_LIBRARY: Final = "jsonpatch"
"""The variable the ``jsonpatch.escapeKey`` method is called on (kube's JSONPatch library)."""


def escape_key(_library: Any, key: str) -> str:
    """kube's ``jsonpatch.escapeKey``: RFC 6901's escaping of a path key (``~`` first)."""
    return key.replace("~", "~0").replace("/", "~1")


_REGISTERED = threading.local()


def _with_library(context: Any) -> None:
    """The thread's admission context knows ``escapeKey`` (registered once per thread's context: that
    costs more than an evaluation)."""
    if getattr(_REGISTERED, "context", None) is not context:
        context.add_function("escapeKey", escape_key)
        _REGISTERED.context = context


@dataclass(frozen=True, slots=True)
class Mutation:
    patch_type: str
    expression: Expression


def _expression(source: Any) -> Expression:
    text = str(source or "")
    program_text = rewritten(text)
    return Expression(text, compile_expression(program_text), cost_of(program_text))


@dataclass(frozen=True, slots=True)
class CompiledMutatingPolicy:
    policy: CompiledPolicy
    """Its variables and match conditions, evaluated as a validating policy's are."""
    mutations: tuple[Mutation, ...]

    def bind(self, variables: dict[str, Any]) -> Bound:
        """The evaluation context (compiled.CompiledPolicy.bind) with the JSONPatch library."""
        _with_library(admission_context({}))
        return self.policy.bind({**variables, JSONPATCH_LIBRARY: {}})

    def mutate(self, obj: Object, variables: dict[str, Any], schema: dict[str, Any]) -> Object:
        """``obj`` (in the version the policy sees) with every mutation applied, a new object; raises
        EvaluationError (an expression failed, made the wrong type, or its patch does not apply) or
        OutOfBudget. Match conditions are the caller's, on the object before any mutation."""
        for mutation in self.mutations:
            bound = self.bind({**variables, "object": obj})
            result = mutation.expression.evaluate(bound)
            obj = _applied(mutation, result, obj, schema)
        return obj


def _applied(mutation: Mutation, result: Any, obj: Object, schema: dict[str, Any]) -> Object:
    source = mutation.expression.source
    if mutation.patch_type == "ApplyConfiguration":
        if type_of(result) != OBJECT:
            raise EvaluationError(
                f"expression '{source}' resulted in error: apply configuration must evaluate to "
                f"type Object"
            )
        return merge_objects(obj, untagged(result), compile_types(schema))
    if not isinstance(result, list) or any(type_of(op) != JSONPATCH for op in result):
        raise EvaluationError(
            f"expression '{source}' resulted in error: JSONPatch expression must evaluate to a "
            "list of JSONPatch"
        )
    try:
        patched = apply_json_patch(obj, untagged(result))
    except PatchError as error:
        raise EvaluationError(f"JSON Patch: {error}") from None
    if not isinstance(patched, dict):
        raise EvaluationError("JSON Patch: the patch does not leave an object")
    return patched


def compile_mutating_policy(policy: dict[str, Any]) -> CompiledMutatingPolicy:
    """Raises ValueError (the CEL parser's message) when an expression does not compile."""
    spec = policy.get("spec") or {}
    variables = tuple(
        (str(v.get("name")), _expression(v.get("expression"))) for v in spec.get("variables") or ()
    )
    conditions = tuple(
        (str(c.get("name")), _expression(c.get("expression")))
        for c in spec.get("matchConditions") or ()
    )
    mutations = tuple(
        Mutation(
            str(m.get("patchType")),
            _expression(
                (m.get(PATCH_TYPES.get(str(m.get("patchType")), "")) or {}).get("expression")
            ),
        )
        for m in spec.get("mutations") or ()
    )
    sources = [
        rewritten(e.source)
        for e in (*(e for _, e in (*variables, *conditions)), *(m.expression for m in mutations))
    ]
    needed = needed_fields(sources)
    needed[JSONPATCH_LIBRARY] = WHOLE
    return CompiledMutatingPolicy(
        CompiledPolicy(
            name=policy["metadata"]["name"],
            spec=spec,
            validations=(),
            variables=variables,
            conditions=conditions,
            annotations=(),
            needed=needed,
        ),
        mutations,
    )
