"""core/v1 Secret (kube's pkg/registry/core/secret, validated as kube's ValidateSecret and
ValidateSecretUpdate in pkg/apis/core/validation/validation.go)."""

from __future__ import annotations

import base64

from apiserver.machinery.objects import Object
from apiserver.registry.strategy import Strategy
from apiserver.schema import Cause
from apiserver.schema.causes import invalid
from builtin.core.datasize import binary_bytes, data_too_large
from builtin.core.immutable import immutable_data, invalid_keys
from builtin.core.secrettypes import type_causes


class SecretStrategy(Strategy):
    """`stringData` is write-only: merged into `data` (base64) and dropped, as kube's secret strategy does.
    The merged `data` may hold at most 1 MiB (decoded), reported on `data` as kube's ValidateSecret does
    (``field.TooLong(dataPath, "", core.MaxSecretSize)``); its keys are config keys and its type's
    required keys are there. The type never changes, and an immutable Secret's data never does."""

    def default(self, obj: Object) -> None:
        """kube's Convert_v1_Secret_To_core_Secret, run as the body is decoded: ``stringData`` merged into
        ``data`` before field ownership is recorded, so the writer owns those keys of ``data``."""
        _merge_string_data(obj)

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        if not obj.get(
            "type"
        ):  # kube's ValidateSecretUpdate keeps the stored type when none is sent
            obj["type"] = old.get("type")

    def validate(self, obj: Object) -> list[Cause]:
        causes = invalid_keys(obj, "data") + data_too_large("data", binary_bytes(obj.get("data")))
        return causes + type_causes(obj)

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        causes = []
        if obj.get("type") != old.get("type"):
            # ValidateImmutableField: field.Invalid(path, newVal, "field is immutable")
            causes.append(invalid("type", obj.get("type"), "field is immutable"))
        return causes + immutable_data(obj, old, ("data",)) + self.validate(obj)


def _merge_string_data(obj: Object) -> None:
    """A ``stringData`` of strings merged into a ``data`` map; any other is left for validation to refuse."""
    string_data, data = obj.get("stringData"), obj.get("data")
    if not isinstance(string_data, dict) or not isinstance(data, dict | None):
        return
    if not all(isinstance(value, str) for value in string_data.values()):
        return
    del obj["stringData"]
    if string_data:
        merged = obj["data"] = data if data is not None else {}
        for key, value in string_data.items():
            merged[key] = base64.b64encode(value.encode()).decode()
