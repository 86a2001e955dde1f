"""Loading of a compact definition's ``admissionHooks``: in-process admission hooks with a webhook's
attributes. Each entry is checked here (keys, types, choices) and completed as the runtime takes it: the
rules default to every version of the definition's own resource for the listed operations, and the defaults
are kube's webhook defaults (failurePolicy Fail, timeoutSeconds 10, reinvocationPolicy Never)."""

from __future__ import annotations

import json
from typing import Any

from generator.definition import AdmissionHook, JsonPath
from generator.load_reader import DocumentReader

__all__ = ["HOOK_KEYS", "read_admission_hooks"]

HOOK_KEYS = (
    "name",
    "type",
    "function",
    "operations",
    "failurePolicy",
    "timeoutSeconds",
    "namespaceSelector",
    "objectSelector",
    "matchConditions",
    "reinvocationPolicy",
)
OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT", "*")
_CONDITION_KEYS = ("name", "expression")


def read_admission_hooks(
    reader: DocumentReader, value: Any, group: str, plural: str
) -> tuple[AdmissionHook, ...]:
    path: JsonPath = ("admissionHooks",)
    entries = reader.sequence(value, path) if value is not None else None
    hooks = []
    for index, entry in enumerate(entries or ()):
        here = (*path, index)
        fields = reader.mapping(entry, here, HOOK_KEYS, ("name", "type", "function"))
        if fields is None:
            continue
        hook = _settings(reader, fields, here, group, plural)
        if hook is not None:
            hooks.append(
                AdmissionHook(
                    hook["name"], str(fields["function"]), json.dumps(hook, sort_keys=True)
                )
            )
    return tuple(hooks)


def _settings(
    reader: DocumentReader, fields: dict[str, Any], here: JsonPath, group: str, plural: str
) -> dict[str, Any] | None:
    errors = len(reader.errors)
    kind = reader.choice(fields.get("type"), (*here, "type"), ("Validating", "Mutating"))
    name = reader.opt_string(fields, "name", here)
    reader.opt_string(fields, "function", here)
    operations = reader.opt_strings(fields, "operations", here) or ("*",)
    for i, operation in enumerate(operations):
        reader.choice(operation, (*here, "operations", i), OPERATIONS)
    failure = reader.choice(
        fields.get("failurePolicy", "Fail"), (*here, "failurePolicy"), ("Fail", "Ignore")
    )
    timeout = reader.opt_int(fields, "timeoutSeconds", here, 10)
    if not 1 <= timeout <= 30:
        reader.error((*here, "timeoutSeconds"), f"must be between 1 and 30 seconds, got {timeout}")
    reinvocation = reader.choice(
        fields.get("reinvocationPolicy", "Never"),
        (*here, "reinvocationPolicy"),
        ("Never", "IfNeeded"),
    )
    if "reinvocationPolicy" in fields and kind == "Validating":
        reader.error((*here, "reinvocationPolicy"), "only a Mutating hook is reinvoked")
    selectors: dict[str, Any] = {
        key: reader.mapping(fields[key], (*here, key))
        for key in ("namespaceSelector", "objectSelector")
        if key in fields
    }
    conditions = []
    for i, condition in enumerate(
        reader.sequence(fields.get("matchConditions", []), (*here, "matchConditions")) or ()
    ):
        checked = reader.mapping(
            condition, (*here, "matchConditions", i), _CONDITION_KEYS, _CONDITION_KEYS
        )
        if checked is not None:
            conditions.append({k: str(checked[k]) for k in _CONDITION_KEYS})
    if len(reader.errors) > errors:
        return None
    return {
        "name": name,
        "type": kind,
        "rules": [
            {
                "operations": list(operations),
                "apiGroups": [group],
                "apiVersions": ["*"],
                "resources": [plural],
                "scope": "*",
            }
        ],
        "failurePolicy": failure,
        "timeoutSeconds": timeout,
        "reinvocationPolicy": reinvocation,
        "matchConditions": conditions,
        **selectors,
    }
