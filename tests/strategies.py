"""Hypothesis strategies derived from CRD-style OpenAPI schemas: objects that satisfy a version's schema."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

_PRINTABLE = st.characters(min_codepoint=32, max_codepoint=126)
_NAME = st.from_regex(r"[a-z][a-z0-9-]{0,20}[a-z0-9]", fullmatch=True)
_JSON_SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**31), 2**31), st.text(max_size=8)
)
_JSON = st.recursive(
    _JSON_SCALAR,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if schema.get("x-kubernetes-int-or-string"):
        return st.one_of(st.integers(0, 1000), st.text(min_size=1, max_size=8))
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        if not properties:
            additional = schema.get("additionalProperties")
            values = from_schema(additional) if isinstance(additional, dict) else _JSON
            return st.dictionaries(st.text(min_size=1, max_size=8), values, max_size=3)
        required = set(schema.get("required") or [])
        return st.fixed_dictionaries(
            {name: from_schema(sub) for name, sub in properties.items() if name in required},
            optional={
                name: from_schema(sub) for name, sub in properties.items() if name not in required
            },
        )
    if kind == "array":
        items = schema.get("items") or {}
        return st.lists(from_schema(items), min_size=schema.get("minItems", 0), max_size=3)
    if kind == "integer":
        return st.integers(schema.get("minimum", -(2**31)), schema.get("maximum", 2**31))
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False, width=32)
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        if schema.get("format") == "date-time":
            return st.sampled_from(["2026-01-01T00:00:00Z", "2024-02-29T12:30:00Z"])
        if "pattern" in schema:
            # printable ASCII: Go's RE2 (which Kubernetes validates with) has ASCII-only \s and \d classes
            return st.from_regex(schema["pattern"], fullmatch=True, alphabet=_PRINTABLE)
        return st.text(
            _PRINTABLE,
            min_size=schema.get("minLength", 0),
            max_size=min(schema.get("maxLength", 12), 12),
        )
    return _JSON


def resource_objects(
    api_version: str, kind: str, schema: dict[str, Any]
) -> st.SearchStrategy[dict[str, Any]]:
    """Whole objects of one kind and version: type meta, a named metadata, and schema-valid fields."""
    fields = {
        k: v
        for k, v in (schema.get("properties") or {}).items()
        if k not in ("apiVersion", "kind", "metadata")
    }
    required = [name for name in schema.get("required") or [] if name in fields]
    body = from_schema({"type": "object", "properties": fields, "required": required})
    return st.builds(
        lambda name, content: {
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {"name": name},
            **content,
        },
        _NAME,
        body,
    )
