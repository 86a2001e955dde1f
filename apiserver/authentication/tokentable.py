"""Values kept by secret token (a token file's users, the users of tokens already accepted), looked up in
constant time: by a SHA-256 digest of the token, so that the dict's probe leaks nothing about the token a
client sent, then compared with ``hmac.compare_digest``, whose time does not depend on where the bytes
differ."""

from __future__ import annotations

import hashlib
import hmac
from typing import Generic, TypeVar

V = TypeVar("V")


class TokenTable(Generic[V]):
    """A table of tokens; with a ``limit``, it starts afresh once it holds that many (a memo that clients
    cannot grow without bound)."""

    def __init__(self, limit: int = 0) -> None:
        self.limit = limit
        self._entries: dict[bytes, tuple[bytes, V]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, token: str) -> V | None:
        encoded = token.encode()
        found = self._entries.get(hashlib.sha256(encoded).digest())
        if found is None or not hmac.compare_digest(found[0], encoded):
            return None
        return found[1]

    def put(self, token: str, value: V) -> None:
        if self.limit and len(self._entries) >= self.limit:
            self._entries.clear()
        encoded = token.encode()
        self._entries[hashlib.sha256(encoded).digest()] = (encoded, value)
