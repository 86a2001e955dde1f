"""Object metadata the server owns: uid, timestamps, generation, generated names."""

from __future__ import annotations

import functools
import os
import secrets
import time
from typing import Any

# kube's generateName alphabet (k8s.io/apimachinery/pkg/util/rand): no vowels, no confusable characters.
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_SUFFIX_LENGTH = 5
_MAX_GENERATED_PREFIX = 63 - _SUFFIX_LENGTH
"""kube cuts a generateName to 58 characters whatever the kind's name rule (k8s.io/apiserver/pkg/storage/names/
generate.go, MaxGeneratedNameLength = maxNameLength 63 - randomLength 5): a generated name fits a DNS label."""


def now_rfc3339() -> str:
    return _rfc3339(int(time.time()))


@functools.lru_cache(maxsize=1)
def _rfc3339(second: int) -> str:
    """Formatted once per second: every write stamps the time, often more than once."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))


def new_uid() -> str:
    """A random (version 4) UUID in its text form, as kube's uuid.NewUUID: the 122 random bits of
    ``uuid.uuid4()`` formatted from their hex digits, without building a UUID object per write."""
    digits = os.urandom(16).hex()
    variant = _VARIANT[int(digits[16], 16) & 3]
    return f"{digits[:8]}-{digits[8:12]}-4{digits[13:16]}-{variant}{digits[17:20]}-{digits[20:]}"


_VARIANT = "89ab"
"""RFC 4122's variant: the first hex digit of the fourth group is 10xx in binary."""


def generate_name(prefix: str) -> str:
    """prefix (cut to 58 characters) + 5 random characters, as kube's SimpleNameGenerator."""
    prefix = prefix[:_MAX_GENERATED_PREFIX]
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(_SUFFIX_LENGTH))


def spec_of(obj: dict[str, Any]) -> dict[str, Any]:
    """Everything but metadata and status: what moves generation when it changes."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}
