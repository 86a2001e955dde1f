"""Label and field selectors, parsed once per request and matched against internal objects.

Label selector grammar is k8s.io/apimachinery/pkg/labels: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`,
`a`, `!a`, `a>1`, `a<1`, joined by commas. As there, an empty value is a value: `a=` and `a==` select the
label with the empty value, and `a in ()` is `a in ("")` (selector.go parseExactValue / parseValues). Field selectors (k8s.io/apimachinery/pkg/fields) support `=`, `==`, `!=` on
`metadata.name`, `metadata.namespace` and the selectable fields a definition declares.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from apiserver.machinery.errors import bad_request
from apiserver.machinery.gojson import go_quote
from apiserver.machinery.names import is_label_value, is_qualified_name

_REQUIREMENT = re.compile(
    r"\s*(?P<neg>!)?\s*(?P<key>[A-Za-z0-9_./-]+)\s*"
    r"(?:(?P<op>==|=|!=|>|<)\s*(?P<value>[A-Za-z0-9_.-]*)|\s+(?P<setop>in|notin)\s*\((?P<values>[^)]*)\))?\s*"
)


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # "=", "!=", "in", "notin", "exists", "!", "gt", "lt"
    values: frozenset[str]

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "exists":
            return present
        if self.operator == "!":
            return not present
        if self.operator in ("gt", "lt"):
            return present and _compares(
                labels[self.key], self.operator, int(next(iter(self.values)))
            )
        if self.operator in ("=", "in"):
            return present and labels[self.key] in self.values
        return not present or labels[self.key] not in self.values  # "!=", "notin"


def _compares(label: str, operator: str, bound: int) -> bool:
    """kube's Gt/Lt: a label that is not an integer matches neither."""
    try:
        value = int(label)
    except ValueError:
        return False
    return value > bound if operator == "gt" else value < bound


def _split_top_level(text: str) -> Iterable[str]:
    depth = 0
    start = 0
    for position, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            yield text[start:position]
            start = position + 1
    yield text[start:]


def _check_requirement(match: re.Match[str]) -> None:
    """kube's NewRequirement (k8s.io/apimachinery/pkg/labels/selector.go): the key a qualified name, a Gt or
    Lt value an int64, every value (in sorted order, as the parser's set lists them) a label value; its
    errors, aggregated, are the 400's ``unable to parse requirement: ...``."""
    key = match.group("key")
    found: list[str] = []
    if key_errors := is_qualified_name(key):
        found.append(f"key: Invalid value: {go_quote(key)}: {'; '.join(key_errors)}")
    if match.group("setop"):
        values = sorted({v.strip() for v in match.group("values").split(",")})
    elif match.group("op"):
        values = [match.group("value")]
    else:
        values = []
    if match.group("op") in (">", "<") and not re.fullmatch(r"[+-]?[0-9]+", values[0]):
        found.append(
            f"values[0]: Invalid value: {go_quote(values[0])}: for 'Gt', 'Lt' operators, the value "
            "must be an integer"
        )
    for index, value in enumerate(values):
        if value_errors := is_label_value(value):
            found.append(
                f"values[{index}][{key}]: Invalid value: {go_quote(value)}: {'; '.join(value_errors)}"
            )
    if found:
        joined = found[0] if len(found) == 1 else "[" + ", ".join(found) + "]"
        raise bad_request(f"unable to parse requirement: {joined}")


def parse_label_selector(text: str) -> tuple[Requirement, ...]:
    if not text.strip():
        return ()
    requirements = []
    for part in _split_top_level(text):
        match = _REQUIREMENT.fullmatch(part)
        if match is None or (match.group("neg") and (match.group("op") or match.group("setop"))):
            raise bad_request(
                f"unable to parse requirement: {part.strip()!r}: invalid label selector"
            )
        key = match.group("key")
        _check_requirement(match)
        if match.group("neg"):
            requirements.append(Requirement(key, "!", frozenset()))
        elif match.group("op") in (">", "<"):
            operator = "gt" if match.group("op") == ">" else "lt"
            requirements.append(Requirement(key, operator, frozenset([match.group("value")])))
        elif match.group("op"):
            operator = "!=" if match.group("op") == "!=" else "="
            requirements.append(Requirement(key, operator, frozenset([match.group("value")])))
        elif match.group("setop"):
            values = frozenset(v.strip() for v in match.group("values").split(","))
            requirements.append(Requirement(key, match.group("setop"), values))
        else:
            requirements.append(Requirement(key, "exists", frozenset()))
    return tuple(requirements)


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """One term of a field selector; the field's value is the first non-empty of ``paths`` in the stored
    object (one path, unless the kind's strategy derives the field, as kube's GetAttrs derives an Event's
    ``source``)."""

    paths: tuple[tuple[str, ...], ...]
    equal: bool
    value: str


_FIELD_TERM = re.compile(r"\s*([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*?)\s*")


def field_selector_terms(text: str) -> list[tuple[str, str, str]]:
    """The (field, operator, value) terms of a field selector; 400 for a term that is not one."""
    terms = []
    for part in text.split(","):
        if not part.strip():
            continue  # kube's fields.parseSelector skips empty terms (kr8s sends a trailing comma)
        match = _FIELD_TERM.fullmatch(part)
        if match is None:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        field, operator, value = match.groups()
        terms.append((field, operator, value))
    return terms


def parse_field_selector(
    text: str,
    allowed: Iterable[str],
    *,
    meta_only: bool = False,
    labels: Mapping[str, tuple[str, ...]] | None = None,
) -> tuple[FieldRequirement, ...]:
    """Parse a field selector, refusing fields the resource does not make selectable with kube's 400:
    ``meta_only``, a built-in kind without a field label conversion (no field of its own to select by), in the words of
    DefaultMetaV1FieldSelectorConversion (k8s.io/apimachinery/pkg/runtime/conversion.go); others in
    those of their conversion function (pkg/apis/core/v1/conversion.go, apiextensions' crConverter):
    ``field label not supported``. ``labels`` are the fields a strategy selects on beyond ``allowed``,
    each with the stored fields that give its value (kube's field label conversion, as events.k8s.io's
    ``regarding.name`` selects the stored ``involvedObject.name``)."""
    if not text.strip():
        return ()
    labels = labels or {}
    allowed_fields = set(allowed) | set(labels)
    requirements = []
    for field, operator, value in field_selector_terms(text):
        if field not in allowed_fields and meta_only:
            raise bad_request(
                f'{go_quote(field)} is not a known field selector: only "metadata.name", '
                '"metadata.namespace"'
            )
        if field not in allowed_fields:
            raise bad_request(f"field label not supported: {field}")
        paths = tuple(tuple(path.split(".")) for path in labels.get(field, (field,)))
        requirements.append(FieldRequirement(paths, operator != "!=", value))
    return tuple(requirements)


def _field_text(obj: Any, path: tuple[str, ...]) -> str:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    if obj is None:
        return ""
    if isinstance(obj, bool):
        return "true" if obj else "false"
    return str(obj)


def _first_text(obj: Any, paths: tuple[tuple[str, ...], ...]) -> str:
    """The first non-empty value among ``paths`` (nearly always just one)."""
    for path in paths:
        if text := _field_text(obj, path):
            return text
    return ""


def matcher(
    labels: tuple[Requirement, ...], fields: tuple[FieldRequirement, ...]
) -> Callable[[dict[str, Any]], bool] | None:
    """A predicate over internal objects, or None when nothing is selected on (the common, free case)."""
    if not labels and not fields:
        return None

    def matches(obj: dict[str, Any]) -> bool:
        metadata = obj.get("metadata") or {}
        object_labels = metadata.get("labels") or {}
        if not all(requirement.matches(object_labels) for requirement in labels):
            return False
        return all(
            (_first_text(obj, requirement.paths) == requirement.value) == requirement.equal
            for requirement in fields
        )

    return matches
