"""Object metadata the server owns: uid, timestamps, generation, generated names."""

from __future__ import annotations

import functools
import secrets
import time
import uuid
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
    return str(uuid.uuid4())


def generate_name(prefix: str) -> str:
    """prefix (cut to 58 characters) + 5 random characters, as kube's SimpleNameGenerator."""
    prefix = prefix[:_MAX_GENERATED_PREFIX]
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(_SUFFIX_LENGTH))


def spec_of(obj: dict[str, Any]) -> dict[str, Any]:
    """Everything but metadata and status: what moves generation when it changes."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}
