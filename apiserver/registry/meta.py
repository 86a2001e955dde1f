"""Object metadata the server owns: uid, timestamps, generation, generated names."""

from __future__ import annotations

import functools
import os
import secrets
import time
from collections import deque
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
    ``uuid.uuid4()``, taken from a pool filled by one ``os.urandom`` call per ``_POOLED`` uids (a system
    call per write cost more than the rest of the uid), as Go's ``uuid.EnableRandPool`` does."""
    while True:
        try:
            return _pool.popleft()  # atomic: a thread that offloads a write may take one too
        except IndexError:
            _pool.extend(_formatted(os.urandom(16 * _POOLED).hex()))


_POOLED = 256
_pool: deque[str] = deque()
# a forked worker must not hand out its parent's uids
os.register_at_fork(after_in_child=_pool.clear)


def _formatted(digits: str) -> list[str]:
    """Every 32 hex digits of ``digits`` as a version 4 UUID's text: the version digit set, the variant's
    two bits fixed (RFC 4122: the first hex digit of the fourth group is 10xx in binary)."""
    return [
        f"{digits[i : i + 8]}-{digits[i + 8 : i + 12]}-4{digits[i + 13 : i + 16]}-"
        f"{_VARIANT[digits[i + 16]]}{digits[i + 17 : i + 20]}-{digits[i + 20 : i + 32]}"
        for i in range(0, len(digits), 32)
    ]


_VARIANT = {digit: "89ab"[int(digit, 16) & 3] for digit in "0123456789abcdef"}


def generate_name(prefix: str) -> str:
    """prefix (cut to 58 characters) + 5 random characters, as kube's SimpleNameGenerator."""
    prefix = prefix[:_MAX_GENERATED_PREFIX]
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(_SUFFIX_LENGTH))


def spec_of(obj: dict[str, Any]) -> dict[str, Any]:
    """Everything but metadata and status: what moves generation when it changes."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}
