"""core/v1 Secret (kube's pkg/registry/core/secret)."""

from __future__ import annotations

import base64

from apiserver.machinery.objects import Object
from apiserver.registry.strategy import Strategy
from apiserver.schema import Cause
from builtin.core.datasize import binary_bytes, data_too_large


class SecretStrategy(Strategy):
    """`stringData` is write-only: merged into `data` (base64) and dropped, as kube's secret strategy does.
    The merged `data` may hold at most 1 MiB (decoded), reported on `data` as kube's ValidateSecret does
    (``field.TooLong(dataPath, "", core.MaxSecretSize)``)."""

    def prepare_for_create(self, obj: Object) -> None:
        _merge_string_data(obj)

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        _merge_string_data(obj)

    def validate(self, obj: Object) -> list[Cause]:
        return data_too_large("data", binary_bytes(obj.get("data")))

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return self.validate(obj)


def _merge_string_data(obj: Object) -> None:
    string_data = obj.pop("stringData", None)
    if string_data:
        data = obj.setdefault("data", {})
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
