"""Typed object literals of mutation expressions (``Object{spec: Object.spec{replicas: 3}}``,
``JSONPatch{op: "add", path: "/x", value: 1}``) for an evaluator that has none.

cel-rust parses a message literal but refuses to evaluate it ("Found struct Object, feature not enabled!"),
and it knows no ``Object`` or ``JSONPatch`` type anyway. So a mutation expression is rewritten, on its
tokens (string literals are single tokens and stay untouched), before it is compiled: each literal
``T{f1: e1, f2: e2}`` becomes the map ``{"@type": "T", "f1": e1, "f2": e2}`` (CEL's grammar, cel-spec
langdef.md "Syntax": ``"."? IDENT ("." IDENT)* "{" FieldInits? ","? "}"`` is the only place where ``{``
follows a name, so the rewrite is exact). Field selection and ``has()`` behave on the map as on the message;
what differs is that an unset field of a map is an error rather than the field's zero value, and that field
names are not checked against the schema when the policy is written (kube's type checker does that; here
the schema validation of the mutated object catches a wrong field). The tag lets the evaluation check that
an apply configuration is an ``Object`` and a patch a list of ``JSONPatch``, and is removed from the
result (:func:`untagged`). Optional field initializers (``?field: value``) are refused."""

from __future__ import annotations

from typing import Any, Final

from apiserver.schema.cellibs import TYPE
from apiserver.schema.celparse import CelParseError, tokens

OBJECT: Final = "Object"
JSONPATCH: Final = "JSONPatch"
_RESERVED: Final = frozenset({"in", "true", "false", "null"})


def rewritten(source: str) -> str:
    """``source`` with its message literals as tagged maps (``source`` itself when it has none); raises
    CelParseError on an optional field initializer."""
    found = tokens(source)
    if not any(text == "{" and i and _is_name(found[i - 1]) for i, (_, text) in enumerate(found)):
        return source
    out: list[str] = []
    stack: list[bool] = []
    """One entry per open bracket: whether it is a message literal's brace."""
    field_next = False
    for index, (kind, text) in enumerate(found[:-1]):
        if field_next:
            field_next = False
            if text == "?":
                raise CelParseError("optional field initializers are not supported")
            if kind == "ident" and found[index + 1][1] == ":":
                out.append(f'"{text}"')
                continue
        if text == "{" and out and _is_name(found[index - 1]):
            name = _take_name(out)
            out.append(f'{{"{TYPE}": "{name}"')
            if found[index + 1][1] != "}":
                out.append(",")
            stack.append(True)
            field_next = True
            continue
        if text in ("{", "(", "["):
            stack.append(False)
        elif text in ("}", ")", "]") and stack:
            stack.pop()
        elif text == "," and stack and stack[-1]:
            field_next = True
        out.append(text)
    return " ".join(out)


def _is_name(token: tuple[str, str]) -> bool:
    return token[0] == "ident" and token[1] not in _RESERVED


def _take_name(out: list[str]) -> str:
    """Pops the literal's (qualified) type name off the end of ``out``."""
    parts = [out.pop()]
    while len(out) >= 2 and out[-1] == "." and out[-2].isidentifier() and out[-2] not in _RESERVED:
        out.pop()
        parts.append(out.pop())
    if out and out[-1] == ".":  # a leading dot: the name is fully qualified
        out.pop()
    return ".".join(reversed(parts))


def type_of(value: Any) -> str:
    """The literal type a value was made as ("" for any other value)."""
    tag = value.get(TYPE) if isinstance(value, dict) else None
    return tag if isinstance(tag, str) else ""


def untagged(value: Any) -> Any:
    """``value`` without the tags of ``Object`` and ``JSONPatch`` literals (a copy where it had any)."""
    if isinstance(value, dict):
        tag = value.get(TYPE)
        return {
            key: untagged(item)
            for key, item in value.items()
            if not (key == TYPE and isinstance(tag, str) and _is_literal_type(tag))
        }
    if isinstance(value, list):
        return [untagged(item) for item in value]
    return value


def _is_literal_type(tag: str) -> bool:
    return tag in (OBJECT, JSONPATCH) or tag.startswith(OBJECT + ".")


def type_mismatches(value: Any, path: tuple[str, ...] = ()) -> list[str]:
    """kube's ObjectVal.CheckTypeNamesMatchFieldPathNames: below a literal of type T, a literal under
    field f must be of type T.f (``Object.spec{selector: Object.spec.wrong{}}`` is a mismatch); maps and
    lists in between are transparent. ``path`` is the name the value should have (its own at the root)."""
    found: list[str] = []
    tag = type_of(value)
    if tag and _is_literal_type(tag):
        expected = ".".join(path) if path else tag
        if tag != expected:
            found.append(
                f'unexpected type name "{tag}", expected "{expected}", which matches field name path '
                "from root Object type"
            )
        for key, item in value.items():
            if key != TYPE:
                found.extend(type_mismatches(item, (*(path or (tag,)), key)))
    elif isinstance(value, dict):
        for item in value.values():
            found.extend(type_mismatches(item, path))
    elif isinstance(value, list):
        for item in value:
            found.extend(type_mismatches(item, path))
    return found
