"""A webhook's ``matchConditions``: CEL expressions over ``object``, ``oldObject`` and ``request`` that must
all be true for it to be called (kube's admission/plugin/webhook/matchconditions)."""

from __future__ import annotations

from typing import Any

from apiserver.machinery.objects import Object
from apiserver.schema.cel import compile_rule
from apiserver.schema.celerrors import error_text
from apiserver.schema.cellibs import LIBRARIES, ROOTS
from apiserver.schema.celruntime import evaluator


class ConditionError(Exception):
    """A match condition failed to evaluate; the webhook's failurePolicy decides."""


def conditions_match(
    hook: dict[str, Any], obj: Object | None, old: Object | None, request: dict[str, Any]
) -> bool:
    """All of the hook's matchConditions are true (none: true); raises ConditionError."""
    conditions = hook.get("matchConditions") or []
    if not conditions:
        return True
    context = evaluator().Context()
    context.add_variable("object", obj)
    context.add_variable("oldObject", old)
    context.add_variable("request", request)
    for name, root in ROOTS.items():
        context.add_variable(name, root)
    for condition in conditions:
        name = condition.get("name", "")
        try:
            program = compile_rule(str(condition.get("expression", "")))
            for function in program.functions():  # the libraries kube's match conditions have
                if function in LIBRARIES:
                    context.add_function(function, LIBRARIES[function])
            result = program.execute(context)
        except Exception as error:  # cel-rust raises several kinds; each is the condition's failure
            raise ConditionError(
                f"expression '{name}' resulted in error: {error_text(error)}"
            ) from None
        if result is not True:
            if result is False:
                return False
            raise ConditionError(f"expression '{name}' resulted in error: no such overload")
    return True
