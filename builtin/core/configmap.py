"""core/v1 ConfigMap (kube's pkg/registry/core/configmap): the schema says the fields; the keys, the total
size of ``data`` and ``binaryData`` and immutability are the strategy's rules, as kube's ValidateConfigMap and
ValidateConfigMapUpdate have them (pkg/apis/core/validation/validation.go)."""

from __future__ import annotations

from itertools import chain

from apiserver.machinery.objects import Object
from apiserver.registry.strategy import Strategy
from apiserver.schema import Cause
from apiserver.schema.causes import invalid
from builtin.core.datasize import binary_bytes, data_too_large, text_bytes
from builtin.core.immutable import immutable_data, invalid_keys

DATA_FIELDS = ("data", "binaryData")


class ConfigMapStrategy(Strategy):
    """At most 1 MiB of data, ``data`` and ``binaryData`` together. kube reports it on the whole object
    (``field.NewPath("")``): the cause has no field and the message reads ``ConfigMap "x" is invalid: :
    Too long: may not be more than 1048576 bytes``. A key may be in only one of the two maps. An immutable
    ConfigMap's data and ``immutable`` never change."""

    def validate(self, obj: Object) -> list[Cause]:
        return _validate(obj)

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return immutable_data(obj, old, DATA_FIELDS) + _validate(obj)


def _validate(obj: Object) -> list[Cause]:
    causes = invalid_keys(obj, "data") + invalid_keys(obj, "binaryData")
    text, binary = obj.get("data") or {}, obj.get("binaryData") or {}
    causes.extend(
        invalid(f"binaryData[{key}]", key, "duplicate of key present in data")
        for key in binary
        if key in text
    )
    sizes = chain(text_bytes(text), binary_bytes(binary))
    return causes + data_too_large("", sizes)
