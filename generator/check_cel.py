"""Whether an ``x-kubernetes-validations`` rule compiles, judged and worded as kube judges it when a CRD is
written (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/compilation.go): the rule must parse and
name only declared variables (``self``, ``oldSelf``) and functions, then its message expression likewise.
kube reports a failure as ``field.Invalid`` of the whole rule, which apimachinery renders as the JSON of
the Go struct (``{"Rule":"...","Message":"",...}``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["compile_problems"]

_GO_ESCAPES: Final = {c: f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"}


def compile_problems(rule: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(the key of ``rule`` at fault, kube's message) for the rule or, when it compiles, its message
    expression; [] when both compile."""
    # Imported only for a schema with rules: the CEL library takes half a second to import, more than
    # checking a kind without rules (an added kind's run pays for it otherwise).
    from apiserver.schema.cel import compile_failure

    for key, prefix in (("rule", ""), ("messageExpression", "messageExpression ")):
        source = str(rule.get(key) or "").strip()
        failure = compile_failure(source) if source else None
        if failure is not None:  # kube compiles the message expression only once the rule compiles
            return [
                (key, f"Invalid value: {go_rule_json(rule)}: {prefix}compilation failed: {failure}")
            ]
    return []


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
