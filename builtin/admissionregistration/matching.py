"""Whether a webhook (or an in-process hook with the same attributes) is called for a write, past its
rules: ``namespaceSelector`` on the namespace's labels (the object's own for a Namespace; cluster-scoped
objects always match), ``objectSelector`` on the new or the old object's labels, and ``matchConditions``, CEL
expressions over ``object``, ``oldObject`` and ``request`` that must all be true (kube's
webhook/predicates and matchconditions packages)."""

from __future__ import annotations

from typing import Any

import cel

from apiserver.admission.interface import Attributes
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.registry.context import ServerContext
from apiserver.schema.cel import compile_rule
from apiserver.schema.celerrors import error_text
from apiserver.schema.cellibs import LIBRARIES, ROOTS
from builtin.rbac.aggregation import selector_requirements


def _labels(obj: Object | None) -> dict[str, str]:
    labels = ((obj or {}).get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def _selects(selector: Any, labels: dict[str, str]) -> bool:
    if not selector:  # absent or {}: everything (the common case, asked on every write)
        return True
    requirements = selector_requirements(selector if selector is not None else {})
    return requirements is not None and all(r.matches(labels) for r in requirements)


def object_selected(hook: dict[str, Any], attributes: Attributes) -> bool:
    selector = hook.get("objectSelector")
    return _selects(selector, _labels(attributes.obj)) or (
        attributes.old is not None and _selects(selector, _labels(attributes.old))
    )


async def namespace_selected(
    hook: dict[str, Any], attributes: Attributes, context: ServerContext
) -> bool:
    selector = hook.get("namespaceSelector")
    if not selector or selector == {}:
        return True
    resource = attributes.resource
    if (resource.group, resource.plural) == ("", "namespaces"):
        return _selects(selector, _labels(attributes.obj or attributes.old))
    if not attributes.namespace:
        return True
    try:
        namespace, _ = await context.store("", "namespaces").get_rendered(
            None, attributes.namespace
        )
    except errors.APIError:
        namespace = None
    return _selects(selector, _labels(namespace))


class ConditionError(Exception):
    """A match condition failed to evaluate; the webhook's failurePolicy decides."""


def conditions_match(
    hook: dict[str, Any], obj: Object | None, old: Object | None, request: dict[str, Any]
) -> bool:
    """All of the hook's matchConditions are true (none: true); raises ConditionError."""
    conditions = hook.get("matchConditions") or []
    if not conditions:
        return True
    context = cel.Context()
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
