"""Pruning of fields a CRD schema does not declare, as kube-apiserver prunes custom resources.

A port of apiextensions-apiserver pkg/apiserver/schema/pruning/algorithm.go (``PruneWithOptions``) with
the unknown-field paths of schema/options.go. Those paths are what kube reports for
``fieldValidation=Strict`` (``strict decoding error: unknown field "spec.foo"``) and ``Warn``
(``unknown field "spec.foo"``): object members are joined with ``.``, map values too
(``spec.labels.foo.bar``), array items get ``[i]`` (``spec.containers[0].bogus``); the list is sorted.

Kept, and not walked into: ``apiVersion``, ``kind`` and ``metadata`` at the root and in embedded resources
(``x-kubernetes-embedded-resource``), whose metadata has its own rules. Under
``x-kubernetes-preserve-unknown-fields`` unknown members stay, but declared properties are still pruned.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from apiserver.schema.structural import Schema, compile_schema

__all__ = ["prune"]

_META_FIELDS: Final = frozenset({"apiVersion", "kind", "metadata"})


def prune(obj: Any, schema: Mapping[str, Any] | Schema) -> list[str]:
    """Remove, in place, every field of ``obj`` that ``schema`` does not declare; return their paths."""
    s = compile_schema(schema)
    pruned: list[str] = []
    if isinstance(obj, dict):
        if s.preserve_unknown_fields:
            _skip_prune(obj, s, "", True, pruned)
        else:
            _prune_object(obj, s, "", True, pruned)
    elif isinstance(obj, list):
        _prune(obj, s, "", pruned)
    if len(pruned) > 1:
        pruned.sort()
    return pruned


def _key(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _prune(x: Any, s: Schema | None, path: str, pruned: list[str]) -> None:
    if s is not None and s.preserve_unknown_fields:
        _skip_prune(x, s, path, s.embedded_resource, pruned)
    elif isinstance(x, dict):
        if s is None:
            pruned.extend(_key(path, k) for k in x)
            x.clear()
        else:
            _prune_object(x, s, path, s.embedded_resource, pruned)
    elif isinstance(x, list):
        items = s.items if s is not None else None
        for i, value in enumerate(x):
            if isinstance(value, dict | list):
                _prune(value, items, f"{path}[{i}]", pruned)


def _prune_object(
    x: dict[str, Any], s: Schema, path: str, keep_meta: bool, pruned: list[str]
) -> None:
    props = s.properties
    additional = s.additional_properties
    # additionalProperties of any kind (even false, which CRDs reject) keeps the member and prunes it
    # with its schema; without a schema everything inside is pruned.
    has_additional = s.additional_properties_allowed is not None
    doomed = []
    for key, value in x.items():
        if keep_meta and key in _META_FIELDS:
            continue
        prop = props.get(key)
        if prop is not None:
            if isinstance(value, dict | list):
                _prune(value, prop, _key(path, key), pruned)
        elif has_additional:
            if isinstance(value, dict | list):
                _prune(value, additional, _key(path, key), pruned)
        else:
            doomed.append(key)
    for key in doomed:
        pruned.append(_key(path, key))
        del x[key]


def _skip_prune(x: Any, s: Schema, path: str, keep_meta: bool, pruned: list[str]) -> None:
    # Unknown members stay; declared ones are pruned by their own schemas.
    if isinstance(x, dict):
        has_additional = s.additional_properties_allowed is not None
        if not s.properties and not has_additional:
            return
        for key, value in x.items():
            if keep_meta and key in _META_FIELDS:
                continue
            if not isinstance(value, dict | list):
                continue
            prop = s.properties.get(key)
            if prop is not None:
                _prune(value, prop, _key(path, key), pruned)
            elif has_additional:
                _prune(value, s.additional_properties, _key(path, key), pruned)
    elif isinstance(x, list) and s.items is not None:
        for i, value in enumerate(x):
            if isinstance(value, dict | list):
                _skip_prune(value, s.items, f"{path}[{i}]", s.items.embedded_resource, pruned)
