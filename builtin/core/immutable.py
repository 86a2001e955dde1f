"""What ConfigMaps and Secrets share on update (kube's ValidateConfigMapUpdate and ValidateSecretUpdate in
pkg/apis/core/validation/validation.go): once ``immutable`` is true, neither it nor the data may change, and
each refusal is ``field.Forbidden(path, "field is immutable when `immutable` is set")``."""

from __future__ import annotations

from collections.abc import Iterable

from apiserver.machinery.names import is_config_map_key
from apiserver.machinery.objects import Object
from apiserver.schema import Cause
from apiserver.schema.causes import forbidden, invalid

IMMUTABLE_DETAIL = "field is immutable when `immutable` is set"


def immutable_data(obj: Object, old: Object, data_fields: Iterable[str]) -> list[Cause]:
    """The refusals of an update of an object that was stored immutable: setting ``immutable`` back (or
    dropping it), and any change of the ``data_fields``."""
    if old.get("immutable") is not True:
        return []
    causes = []
    if obj.get("immutable") is not True:
        causes.append(forbidden("immutable", IMMUTABLE_DETAIL))
    causes.extend(
        forbidden(name, IMMUTABLE_DETAIL)
        for name in data_fields
        if (obj.get(name) or {}) != (old.get(name) or {})
    )
    return causes


def invalid_keys(obj: Object, field: str) -> list[Cause]:
    """``field.Invalid(path.Key(key), key, msg)`` for each key of ``obj[field]`` that IsConfigMapKey
    refuses: a key becomes a file name when the object is mounted as a volume."""
    values = obj.get(field)
    if not isinstance(values, dict):
        return []
    return [
        invalid(f"{field}[{key}]", key, message)
        for key in values
        for message in is_config_map_key(key)
    ]
