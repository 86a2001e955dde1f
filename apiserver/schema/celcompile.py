"""Whether an ``x-kubernetes-validations`` rule compiles, judged and worded as kube judges it when a CRD is
written (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/compilation.go): the rule must parse, name
only declared variables (``self``, ``oldSelf``) and functions, and evaluate to a bool; then its message
expression likewise, to a string. kube reports a failure as ``field.Invalid`` of the whole rule, which
apimachinery renders as the JSON of the Go struct (``{"Rule":"...","Message":"",...}``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from apiserver.schema.celcost import DeclType, result_kind
from apiserver.schema.celparse import CelParseError, parse

__all__ = ["compile_problem", "go_rule_json"]

_GO_ESCAPES: Final = {c: f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"}
_RESULTS: Final = (("rule", "bool", ""), ("messageExpression", "string", "messageExpression "))
"""Each expression of a rule: its key, the type it must have, the prefix of its compile error."""
_UNTYPED: Final = frozenset({"dyn", "optional"})
"""Result kinds the estimator does not know precisely: not refused."""


def compile_problem(rule: Mapping[str, Any], self_type: DeclType | None) -> tuple[str, str] | None:
    """(the key of ``rule`` at fault, kube's message) for the rule or, when it compiles, its message
    expression; None when both compile. ``self_type``: the type of the node's values."""
    # Imported here: the CEL library takes half a second to import, and only schemas with rules need it.
    from apiserver.schema.cel import compile_failure

    for key, wanted, prefix in _RESULTS:
        source = str(rule.get(key) or "").strip()
        if not source:
            continue
        failure = compile_failure(source)
        if failure is not None:  # kube compiles the message expression only once the rule compiles
            return (
                key,
                f"Invalid value: {go_rule_json(rule)}: {prefix}compilation failed: {failure}",
            )
        kind = _kind(source, self_type, key == "rule" and rule.get("optionalOldSelf") is True)
        if kind not in (wanted, *_UNTYPED):
            what = "cel expression" if key == "rule" else "messageExpression"
            return key, f"Invalid value: {go_rule_json(rule)}: {what} must evaluate to a {wanted}"
    return None


def _kind(source: str, self_type: DeclType | None, optional_old_self: bool) -> str:
    if self_type is None:
        return "dyn"
    try:
        return result_kind(parse(source), self_type, optional_old_self=optional_old_self)
    except CelParseError:
        return "dyn"


def go_rule_json(rule: Mapping[str, Any]) -> str:
    """encoding/json of apiextensions' internal ValidationRule: Go field names, pointers as null, and
    Go's escaping of ``<``, ``>`` and ``&``."""
    reason, optional = rule.get("reason"), rule.get("optionalOldSelf")
    value = {
        "Rule": str(rule.get("rule") or ""),
        "Message": str(rule.get("message") or ""),
        "MessageExpression": str(rule.get("messageExpression") or ""),
        "Reason": None if reason is None else str(reason),
        "FieldPath": str(rule.get("fieldPath") or ""),
        "OptionalOldSelf": optional if isinstance(optional, bool) else None,
    }
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for character, escaped in _GO_ESCAPES.items():
        text = text.replace(character, escaped)
    return text
