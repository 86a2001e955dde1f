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
_MAX_NAME_LENGTH = 253


def now_rfc3339() -> str:
    return _rfc3339(int(time.time()))


@functools.lru_cache(maxsize=1)
def _rfc3339(second: int) -> str:
    """Formatted once per second: every write stamps the time, often more than once."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))


def new_uid() -> str:
    return str(uuid.uuid4())


def generate_name(prefix: str) -> str:
    """prefix + 5 random characters, the prefix cut so the whole stays a valid name (as kube does)."""
    prefix = prefix[: _MAX_NAME_LENGTH - _SUFFIX_LENGTH]
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(_SUFFIX_LENGTH))


def spec_of(obj: dict[str, Any]) -> dict[str, Any]:
    """Everything but metadata and status: what moves generation when it changes."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}
