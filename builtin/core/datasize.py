"""The total data size kube allows a ConfigMap or a Secret (core.MaxSecretSize, 1 MiB), shared by both kinds'
strategies: kube's ValidateConfigMap and ValidateSecret sum the decoded bytes of every value."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from typing import Final

from apiserver.schema import Cause
from apiserver.schema.causes import too_long

MAX_SECRET_SIZE: Final = 1024 * 1024
"""k8s.io/kubernetes pkg/apis/core/types.go MaxSecretSize, the limit of both kinds' data."""


def text_bytes(values: object) -> Iterable[int]:
    """The UTF-8 length of each string value of a ``map[string]string`` (ConfigMap ``data``)."""
    if isinstance(values, dict):
        for value in values.values():
            if isinstance(value, str):
                yield len(value.encode())


def binary_bytes(values: object) -> Iterable[int]:
    """The decoded length of each base64 value of a ``map[string][]byte`` (``binaryData``, Secret ``data``);
    a value that is not base64 was refused by the schema already and counts as its text."""
    if isinstance(values, dict):
        for value in values.values():
            if isinstance(value, str):
                try:
                    yield len(base64.b64decode(value, validate=True))
                except (binascii.Error, ValueError):
                    yield len(value)


def data_too_large(field: str, sizes: Iterable[int]) -> list[Cause]:
    """kube's ``field.TooLong(path, value, MaxSecretSize)`` when the values total more than 1 MiB (the
    value is never printed: it may be a megabyte)."""
    return [too_long(field, MAX_SECRET_SIZE)] if sum(sizes) > MAX_SECRET_SIZE else []
