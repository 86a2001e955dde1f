"""The CEL environment of admission expressions (match conditions, policy validations, variables, audit
annotations, message expressions): the Kubernetes libraries the schema rules have, plus the authorizer
library and (for mutating policies) the JSONPatch library's ``escapeKey``.

A context is made per thread and per set of library functions a policy calls, with only those registered:
cel-rust rebuilds its environment, every registered function included, on the first evaluation after a
variable changes (~0.1 µs per function: ~6.5 µs with all 58 registered, on every write), so a policy that
calls none pays nothing for them. Its variables are replaced for each evaluation, except a value whose JSON is
the one bound last under that name (the same params, namespace or projected object as the previous write's):
converting it again would cost microseconds per string, comparing the JSON costs nanoseconds."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

import orjson

from apiserver.schema.cel import compile_rule
from apiserver.schema.cellibs import LIBRARIES, ROOTS
from apiserver.schema.celrefs import undeclared
from apiserver.schema.celruntime import evaluator
from builtin.admissionregistration.authz import FUNCTIONS as AUTHORIZER


def escape_key(_library: Any, key: str) -> str:
    """kube's JSONPatch library ``jsonpatch.escapeKey`` (mutating policies): RFC 6901's escaping of a
    path key (``~`` first)."""
    return key.replace("~", "~0").replace("/", "~1")


FUNCTIONS: Final = {**LIBRARIES, **AUTHORIZER, "escapeKey": escape_key}
_PER_THREAD = threading.local()


class _Slot:
    """A context and the JSON of the value bound last under each name (absent: not known)."""

    __slots__ = ("bound", "context")

    def __init__(self, functions: frozenset[str]) -> None:
        self.context = evaluator().Context()
        for name in functions:
            self.context.add_function(name, FUNCTIONS[name])
        for name, root in ROOTS.items():
            self.context.add_variable(name, root)
        self.bound: dict[str, bytes] = {}

    def bind(self, name: str, value: Any) -> None:
        try:  # JSON tells 1, 1.0 and true apart, as CEL does (Python's == does not)
            text: bytes | None = orjson.dumps(value)
        except TypeError:  # not JSON (an optional, an integer over 64 bits): bound every time
            text = None
        if text is not None and self.bound.get(name) == text:
            return
        self.bound.pop(name, None)
        self.context.add_variable(name, value)
        if text is not None:
            self.bound[name] = text


def called(programs: Iterable[Any]) -> frozenset[str]:
    """The library functions ``programs`` call (by name: a standard function of the same name is called
    through it too, as it always was)."""
    return frozenset(name for p in programs for name in p.functions() if name in FUNCTIONS)


def admission_context(functions: frozenset[str], variables: dict[str, Any]) -> _Slot:
    """The thread's context with ``functions`` registered and ``variables`` bound. Only those: a variable
    the caller's expressions do not read may keep an earlier evaluation's value (binding costs
    microseconds per value)."""
    slots: dict[frozenset[str], _Slot] | None = getattr(_PER_THREAD, "slots", None)
    if slots is None:
        slots = _PER_THREAD.slots = {}
    slot = slots.get(functions)
    if slot is None:
        slot = slots[functions] = _Slot(functions)
    for name, value in variables.items():
        slot.bind(name, value)
    return slot


def compile_expression(text: str) -> Any:
    """The program of an admission expression; raises ValueError with the CEL parser's message."""
    return compile_rule(text)


ADMISSION_VARIABLES: Final = ("object", "oldObject", "request", "namespaceObject", "authorizer")
"""What every policy expression may name (k8s.io/apiserver/pkg/admission/plugin/cel/compile.go); ``params``
only when the policy has a paramKind, ``variables`` only where the policy's variables are in scope."""
WEBHOOK_VARIABLES: Final = ("object", "oldObject", "request", "authorizer")
"""What a webhook's match conditions may name (they have no params, namespace object or variables)."""


@dataclass(frozen=True)
class Environment:
    """The names one admission expression may use: variables, and the fields of ``variables`` (the
    policy's variables declared so far)."""

    variables: tuple[str, ...] = ADMISSION_VARIABLES
    fields: tuple[str, ...] | None = None

    def compile_failure(self, text: str) -> str | None:
        """Why ``text`` does not compile (None: it does): the parser's message, or the names it uses that
        kube's environment does not declare, in cel-go's words (kube type-checks every expression when
        the policy or configuration is written)."""
        try:
            compile_expression(text)
        except ValueError as error:
            return str(error)
        declared = self.variables if self.fields is None else (*self.variables, "variables")
        fields = None if self.fields is None else {"variables": self.fields}
        return undeclared(text, declared, FUNCTIONS, fields)


def policy_environment(spec: dict[str, Any], upto: int | None = None) -> Environment:
    """The environment of a policy's validations, message expressions and audit annotations: ``params``
    with a paramKind, and the policy's variables when it has any (for a variable's own expression, those
    declared before it, ``upto``: kube refuses an expression naming a later one)."""
    names = [str(v.get("name", "")) for v in spec.get("variables") or () if isinstance(v, dict)]
    if not names:
        return match_environment(spec)
    return Environment(match_environment(spec).variables, tuple(names[:upto]))


def match_environment(spec: dict[str, Any]) -> Environment:
    """The environment of a policy's match conditions: ``params`` with a paramKind, no variables."""
    return Environment(
        (*ADMISSION_VARIABLES, "params") if spec.get("paramKind") else ADMISSION_VARIABLES
    )
