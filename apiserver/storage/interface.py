"""The storage contract every backend honours: a revisioned key-value store modelled on etcd v3.

Revisions are global, start at 1 for the first write and increase by exactly one per write (create, update or
delete). An object's ``resourceVersion`` is the ``mod_revision`` of its key, rendered as a string. Keys are
``/registry/...`` paths; values are the JSON bytes of the storage version of an object.
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Final, Protocol


@dataclass(frozen=True, slots=True)
class KeyValue:
    """One stored key at one revision."""

    key: str
    value: bytes
    create_revision: int
    mod_revision: int


class EventType(enum.Enum):
    """What happened to a key: a PUT (created when ``prev`` is None, else modified) or a DELETE."""

    PUT = "PUT"
    DELETE = "DELETE"


@dataclass(frozen=True, slots=True)
class StorageEvent:
    """One change. For DELETE, ``kv.value`` is the last value and ``kv.mod_revision`` the deletion revision."""

    type: EventType
    kv: KeyValue
    prev: KeyValue | None

    @property
    def revision(self) -> int:
        return self.kv.mod_revision


@dataclass(frozen=True, slots=True)
class ListResult:
    """One page of a range read taken at ``revision``; ``remaining`` counts keys after this page."""

    items: list[KeyValue]
    revision: int
    remaining: int

    @property
    def more(self) -> bool:
        return self.remaining > 0


class StorageError(Exception):
    """Base of every storage failure; the registry maps each subclass to a Kubernetes Status."""


class KeyExistsError(StorageError):
    def __init__(self, key: str) -> None:
        super().__init__(f"key exists: {key}")
        self.key = key


class KeyNotFoundError(StorageError):
    def __init__(self, key: str) -> None:
        super().__init__(f"key not found: {key}")
        self.key = key


class RevisionConflictError(StorageError):
    """The key's current mod_revision is not the expected one; ``current`` is what is stored now."""

    def __init__(self, key: str, expected: int, current: KeyValue) -> None:
        super().__init__(
            f"revision conflict on {key}: expected {expected}, found {current.mod_revision}"
        )
        self.key = key
        self.expected = expected
        self.current = current


class CompactedError(StorageError):
    """The requested revision is older than the oldest revision the store still has history for."""

    def __init__(self, requested: int, compact_revision: int) -> None:
        super().__init__(f"revision {requested} is compacted (oldest kept: {compact_revision})")
        self.requested = requested
        self.compact_revision = compact_revision


class FutureRevisionError(StorageError):
    """The requested revision is newer than the store's current revision."""

    def __init__(self, requested: int, current: int) -> None:
        super().__init__(f"revision {requested} is in the future (current: {current})")
        self.requested = requested
        self.current = current


class StorageUnavailableError(StorageError):
    """The backend cannot be reached now (503 for the client; retrying later may succeed)."""


class StorageTimeoutError(StorageUnavailableError):
    """The backend did not answer in time after the request reached it: a write may still be applied
    (kube answers a 504 Timeout, "may still be processing the request", never "not processed")."""


class ValueTooLargeError(StorageError):
    """The backend refuses a value this large (413 for the client)."""


MAX_REQUEST_BYTES: Final = 1536 * 1024
"""etcd's default ``--max-request-bytes`` (1.5 MiB, https://etcd.io/docs/v3.5/dev-guide/limit/): every backend
refuses what etcd would, so that an object storable on SQLite or in memory is storable on etcd too."""
_REQUEST_OVERHEAD: Final = (
    512  # the transaction's framing around the key (compared, put) and the value
)
REQUEST_TOO_LARGE: Final = "etcdserver: request is too large"
"""etcd's own words (rpctypes.ErrRequestTooLarge), which kube-apiserver passes to the client as the message."""


def check_value_size(key: str, value: bytes) -> None:
    """Raise :class:`ValueTooLargeError` for a write etcd would refuse as larger than its request limit;
    checked before anything is written, on every backend, on the final stored bytes."""
    if len(value) + 2 * len(key.encode()) + _REQUEST_OVERHEAD > MAX_REQUEST_BYTES:
        raise ValueTooLargeError(REQUEST_TOO_LARGE)


class Watch(Protocol):
    """A stream of the changes under a prefix; iterate it, and ``close()`` it when done."""

    def __aiter__(self) -> AsyncIterator[StorageEvent]: ...

    async def close(self) -> None: ...


class Storage(Protocol):
    """The backend contract. Every method is a coroutine that never blocks the event loop."""

    async def start(self) -> None:
        """Open files/connections; called once before any other method."""

    async def close(self) -> None:
        """Flush and release everything; pending watches end."""

    async def current_revision(self) -> int:
        """The revision of the latest write (0 for an empty store)."""

    async def get(self, key: str) -> KeyValue | None:
        """The current value of ``key``, or None."""

    async def list(
        self, prefix: str, *, limit: int = 0, start_key: str | None = None, revision: int = 0
    ) -> ListResult:
        """Keys under ``prefix`` in key order, at ``revision`` (0 = latest), from ``start_key`` (inclusive).

        ``limit`` 0 means no limit. Raises CompactedError / FutureRevisionError for revisions out of range.
        """

    async def create(self, key: str, value: bytes) -> KeyValue:
        """Store a new key; raises KeyExistsError when present. Returns the stored KeyValue."""

    async def update(
        self, key: str, value: bytes, expected_revision: int, *, create_revision: int = 0
    ) -> KeyValue:
        """Replace ``key`` if its mod_revision is ``expected_revision``.

        ``create_revision``: the key's, from a read at ``expected_revision`` (0 when unknown). The write
        succeeds only while the key is at that revision, so it is still the key's: a backend that would
        have to read it back (etcd) can take it from here.

        Raises KeyNotFoundError when absent and RevisionConflictError when the revision differs.
        """

    async def delete(self, key: str, expected_revision: int | None = None) -> KeyValue:
        """Delete ``key`` (only if at ``expected_revision`` when given); returns the deleted value with
        ``mod_revision`` set to the deletion revision. Raises KeyNotFoundError / RevisionConflictError."""

    def watch(self, prefix: str, after_revision: int, *, with_prev: bool = True) -> Watch:
        """Every change under ``prefix`` with revision > ``after_revision``, in revision order, then live ones.

        Iterating raises CompactedError when ``after_revision`` < the compacted revision.

        ``with_prev=False`` allows the backend to leave out ``prev``, and for a DELETE the last value too
        (``kv.value`` empty, ``kv.create_revision`` 0): for a consumer that holds every key's value itself,
        as the watch cache does. etcd then need not read and send every previous value (about 55 µs of
        etcd CPU and 25 of the server's per update per watch, measured with bench/engine_bench.py).
        """

    async def compact(self, revision: int) -> None:
        """Drop history older than ``revision``; later reads/watches before it raise CompactedError."""
