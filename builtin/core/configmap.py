"""core/v1 ConfigMap (kube's pkg/registry/core/configmap): the schema says the fields; the total size of
``data`` and ``binaryData`` is the strategy's rule, as kube's ValidateConfigMap has it."""

from __future__ import annotations

from itertools import chain

from apiserver.machinery.objects import Object
from apiserver.registry.strategy import Strategy
from apiserver.schema import Cause
from builtin.core.datasize import binary_bytes, data_too_large, text_bytes


class ConfigMapStrategy(Strategy):
    """At most 1 MiB of data, ``data`` and ``binaryData`` together. kube reports it on the whole object
    (``field.NewPath("")``): the cause has no field and the message reads ``ConfigMap "x" is invalid: :
    Too long: may not be more than 1048576 bytes`` (pkg/apis/core/validation/validation.go)."""

    def validate(self, obj: Object) -> list[Cause]:
        return _validate(obj)

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return _validate(obj)


def _validate(obj: Object) -> list[Cause]:
    sizes = chain(text_bytes(obj.get("data")), binary_bytes(obj.get("binaryData")))
    return data_too_large("", sizes)
