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

from dataclasses import dataclass
from typing import Any, Final

from apiserver.fieldmanager import compile_types
from apiserver.fieldmanager.typed import merge_objects
from apiserver.fieldmanager.typeinfo import LEAF, TypeNode
from apiserver.machinery.objects import Object
from apiserver.patch.jsonpatch import PatchError, apply_json_patch
from builtin.admissionregistration.celenv import called, compile_expression
from builtin.admissionregistration.celliterals import (
    JSONPATCH,
    OBJECT,
    rewritten,
    type_mismatches,
    type_of,
    untagged,
)
from builtin.admissionregistration.compiled import (
    Bound,
    CompiledPolicy,
    EvaluationError,
    Expression,
)
from builtin.admissionregistration.cost import OutOfBudget, cost_of, total
from builtin.admissionregistration.mutatingstrategy import PATCH_TYPES
from builtin.admissionregistration.projection import WHOLE, needed_fields

JSONPATCH_LIBRARY: Final = "jsonpatch"
"""The variable the ``jsonpatch.escapeKey`` method is called on (kube's JSONPatch library)."""


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
        return self.policy.bind(self.policy.project({**variables, JSONPATCH_LIBRARY: {}}))

    def bound(self, variables: dict[str, Any]) -> int:
        """A bound of what one evaluation for one params costs (the variables once), to decide whether
        to evaluate off the event loop."""
        expressions = (*self.policy.expressions(), *(m.expression for m in self.mutations))
        return total((e.cost for e in expressions), self.policy.project(variables))

    def run(
        self, obj: Object, variables: dict[str, Any], all_params: list[Object | None],
        schema: dict[str, Any],
    ) -> tuple[Object | None, list[str]]:  # fmt: skip
        """The object after the mutations for each params whose match conditions hold (None when there
        were none), and every error (a match condition's too: the binding is then skipped for those
        params)."""
        ran = False
        failures: list[str] = []
        for params in all_params:
            try:
                if not self.policy.matches(
                    self.bind({**variables, "object": obj, "params": params})
                ):
                    continue
            except (EvaluationError, OutOfBudget) as error:
                failures.append(str(error))
                continue
            obj, found = self.mutate(obj, {**variables, "params": params}, schema)
            failures.extend(found)
            ran = True
        return (obj if ran else None), failures

    def mutate(
        self, obj: Object, variables: dict[str, Any], schema: dict[str, Any]
    ) -> tuple[Object, list[str]]:
        """``obj`` (in the version the policy sees) with the mutations applied, and the errors of those
        that could not be (an expression that failed, made the wrong type or ran out of budget, a patch
        that does not apply): as kube's dispatcher, a failed mutation leaves the object as it was and
        the next one runs. Match conditions are the caller's, on the object before any mutation."""
        failures: list[str] = []
        for mutation in self.mutations:
            try:
                result = mutation.expression.evaluate(self.bind({**variables, "object": obj}))
                obj = _applied(mutation, result, obj, schema)
            except (EvaluationError, OutOfBudget) as error:
                failures.append(str(error))
        return obj, failures


def _applied(mutation: Mutation, result: Any, obj: Object, schema: dict[str, Any]) -> Object:
    """kube's patch.applyConfigPatcher / jsonPatcher, in their words."""
    if mutation.patch_type == "ApplyConfiguration":
        if type_of(result) != OBJECT:
            raise EvaluationError(
                "unsupported return type from ApplyConfiguration expression: "
                f"{type_of(result) or _cel_type(result)}"
            )
        _check_type_names(result)
        applied = untagged(result)
        root = compile_types(schema)
        undeclared = undeclared_paths(applied, root, "")
        if undeclared:
            raise EvaluationError(
                "error applying patch: failed to convert patch object to typed object: "
                f"{undeclared[0]}: field not declared in schema"
            )
        atomics = atomic_paths(applied, root, "")
        if atomics:
            raise EvaluationError(
                "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, "
                f"maps or structs: {', '.join(atomics)}"
            )
        return merge_objects(obj, applied, root)
    if not isinstance(result, list):
        raise EvaluationError("type mismatch: JSONPatchType.expression should evaluate to array")
    for op in result:
        if type_of(op) != JSONPATCH:
            raise EvaluationError(
                "type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch"
            )
        _check_type_names(op.get("value"))
    try:
        patched = apply_json_patch(obj, untagged(result))
    except PatchError as error:
        if error.message.endswith(" failed: test failed"):
            return obj  # kube: a failed test operation leaves the object unpatched, without error
        raise EvaluationError(f"JSONPath: {error.message}") from None
    if not isinstance(patched, dict):
        raise EvaluationError("JSONPath: the patched document is not an object")
    return patched


def _check_type_names(value: Any) -> None:
    mismatches = type_mismatches(value)
    if mismatches:
        raise EvaluationError("type mismatch: " + "\n".join(mismatches))


def _cel_type(value: Any) -> str:
    return {
        dict: "map",
        list: "list",
        str: "string",
        bool: "bool",
        int: "int",
        float: "double",
    }.get(type(value), "null_type" if value is None else type(value).__name__)


def undeclared_paths(value: Any, node: TypeNode, path: str) -> list[str]:
    """The fields of an apply configuration its schema does not declare (where it takes no others):
    structured-merge-diff cannot type them (kube's ObjectToTyped fails)."""
    found: list[str] = []
    if isinstance(value, dict) and node.how(value) != LEAF:
        for key, item in value.items():
            child, declared = node.field(key)
            if not declared and node.elem is None and not (path == "" and key in _TYPE_META):
                found.append(f"{path}.{key}")
            else:
                found.extend(undeclared_paths(item, child, f"{path}.{key}"))
    elif isinstance(value, list) and node.item is not None:
        for index, item in enumerate(value):
            found.extend(undeclared_paths(item, node.item_type(), f"{path}[{index}]"))
    return found


_TYPE_META: Final = ("apiVersion", "kind")


def atomic_paths(value: Any, node: TypeNode, path: str) -> list[str]:
    """kube's findAtomics: the paths (SMD's ``.field[index]`` form) in an apply configuration where it
    sets an atomic list, map or struct, which would replace what it does not mention. Only declared
    fields are followed, as SMD's FindField does."""
    found: list[str] = []
    if isinstance(value, dict):
        if node.how(value) == LEAF and (node.fields or node.elem is not None):
            found.append(path)
        for key, item in value.items():
            child, declared = node.field(key)
            if declared:
                found.extend(atomic_paths(item, child, f"{path}.{key}"))
    elif isinstance(value, list):
        if node.how(value) == LEAF and node.item is not None:
            found.append(path)
        item_type = node.item_type()
        for index, item in enumerate(value):
            found.extend(atomic_paths(item, item_type, f"{path}[{index}]"))
    return found


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
    programs = [e.program for _, e in (*variables, *conditions)]
    programs.extend(m.expression.program for m in mutations)
    return CompiledMutatingPolicy(
        CompiledPolicy(
            name=policy["metadata"]["name"],
            spec=spec,
            validations=(),
            variables=variables,
            conditions=conditions,
            annotations=(),
            needed=needed,
            functions=called(programs),
        ),
        mutations,
    )
