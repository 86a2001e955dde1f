"""EtcdStorage: the storage contract over an etcd v3 cluster, the store kube-apiserver itself uses.

It talks gRPC through aetcd's generated stubs (``aetcd.rpc``) rather than aetcd's helpers, because the
helpers have no ``limit``/``revision``/``count`` on reads and swallow watch progress notifications
(see research/etcd-clients-and-sqlite.md). Every call is asyncio-native, so nothing blocks the loop.

Mapping onto etcd:

- create is ``txn(create_revision == 0 → put)``; update and conditional delete are
  ``txn(mod_revision == expected → put/delete, else range)``, so a failed precondition costs no second
  round trip; a write's revision is its response header's revision.
- list is one Range with ``limit``, ``revision`` and ``range_end``; ``count`` gives ``remaining``.
- watch is one gRPC watch stream per Watch, with ``prev_kv`` unless the consumer keeps the values
  itself; when the stream breaks (an etcd restart, a lost connection) it re-watches from the last
  revision it delivered, so a consumer sees no gap and no duplicate.
- Keys: the interface's ``/registry/...`` keys are stored with ``/registry`` replaced by ``prefix``
  (kube-apiserver's ``--etcd-prefix``); values are the bytes given, so ``etcdctl get --prefix
  /registry/`` shows the objects' JSON. Two servers sharing a cluster need prefixes neither of which
  starts with the other.

etcd counts revisions from 1 (an empty store is at revision 1), so the first write gets revision 2.
"""

from __future__ import annotations

import asyncio
import builtins
import enum
import logging
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from typing import Any, Final
from urllib.parse import urlsplit

import grpc
import grpc.aio
from aetcd import rpc

from apiserver.storage.etcd_members import HASLEADER, LEADERLESS, Member, Members
from apiserver.storage.interface import (
    CompactedError,
    EventType,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    ListResult,
    RevisionConflictError,
    StorageError,
    StorageEvent,
    StorageTimeoutError,
    StorageUnavailableError,
    ValueTooLargeError,
    check_value_size,
)

log = logging.getLogger(__name__)

DEFAULT_PREFIX: Final = "/registry"
"""The leading segment of every key the interface passes, and etcd's default key prefix."""

REQUEST_TIMEOUT: Final = 15.0
"""Seconds a call may wait, including for etcd to come back: rides out a restart, fails an outage."""

READ_ATTEMPT: Final = 1.0
"""Seconds the first attempt of a point read may take on one member before it is retried on another
(each retry of the same read doubles it); well under /readyz's 2 s."""

LIST_ATTEMPT: Final = 5.0
"""The same for a read of a range, which may return 10k objects (2-3 s on a busy machine). A member that
hangs is noticed by the probe sooner, which abandons the call and so retries it elsewhere."""

WRITE_ATTEMPT: Final = 5.0
"""Seconds a write may wait on one member. A write that has reached etcd is never retried (it may yet be
applied), so this only bounds how long a caller waits on a member that does not answer."""

_RETRY_PAUSE: Final = (0.05, 0.5)
"""First and longest pause before trying every member again once each has failed a call."""

_COMPACTED: Final = "required revision has been compacted"
_FUTURE: Final = "required revision is a future revision"

CHANNEL_OPTIONS: Final[tuple[tuple[str, str | int], ...]] = (
    # A 10k-object list is ~10 MB; gRPC's default 4 MiB receive limit fails it (kube sets MaxInt32).
    ("grpc.max_receive_message_length", 2**31 - 1),
    # gRPC's reconnect backoff grows to 2 minutes by default; an API server wants etcd back sooner.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2_000),
    # Detect a dead etcd under an idle watch stream (kube: 30 s / 10 s); etcd rejects pings more
    # often than every 5 s and pings without an open stream.
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 0),
    # gRPC stops pinging after two pings with no data sent in between (its default), so a watch stream
    # on a quiet prefix went unchecked: ping at every interval for as long as a stream is open.
    ("grpc.http2.max_pings_without_data", 0),
)

COMPACT_TIMEOUT: Final = 120.0
"""Seconds a physical compaction may take: etcd deletes history in batches, ~1k revisions each."""


def _connection_lost(error: grpc.aio.AioRpcError) -> bool:
    """Whether a watch stream failed because the connection or the member went away (so a
    re-watch will do), rather than because etcd refused the watch."""
    code = error.code()
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
        return True  # a local cancel surfaces as asyncio.CancelledError, never as this
    # RST_STREAM: the member reset the stream; "Internal error from Core": gRPC's word for a write
    # on a stream whose connection had already failed (the stream never started)
    details = error.details() or ""
    return code == grpc.StatusCode.INTERNAL and (
        "RST_STREAM" in details or "Internal error from Core" in details
    )


_WATCH_BACKOFF: Final = (0.05, 0.5)
"""First and longest pause between re-watch attempts after a broken watch stream."""

WATCH_START_TIMEOUT: Final = 2.0
"""Seconds a watch stream may take to send its first request before it is opened elsewhere."""

_WATCH_QUEUE: Final = 64
"""Watch responses buffered per watcher; beyond it the stream stops reading and etcd holds them."""


class EtcdUnavailableError(StorageUnavailableError):
    """No member took the call (none reachable, or none with a leader): nothing was applied."""


# -------------------------------------------------------------------------------------------- keys


def _prefix_end(prefix: bytes) -> bytes:
    """etcd's range_end for "every key starting with ``prefix``" (``b"\\0"``: every key at all)."""
    stem = prefix.rstrip(b"\xff")
    if not stem:
        return b"\0"
    return stem[:-1] + bytes([stem[-1] + 1])


class _Keys:
    """Maps the interface's keys (``/registry/...``) to etcd keys (``prefix`` + the rest) and back.

    The map keeps order (UTF-8 byte order is code point order), so ranges and ``start_key`` carry
    over; keys outside ``/registry`` have no place in etcd and are refused.
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix.encode()
        self.end = _prefix_end(self.prefix)
        # a key no interface key maps to (UTF-8 never contains 0xff): reads of "nothing" use it
        self.nowhere = self.prefix + b"\xff"

    def encode(self, key: str) -> bytes:
        if not key.startswith(DEFAULT_PREFIX):
            raise ValueError(f"storage keys start with {DEFAULT_PREFIX!r}, not {key!r}")
        return self.prefix + key[len(DEFAULT_PREFIX) :].encode()

    def decode(self, key: bytes) -> str:
        return DEFAULT_PREFIX + key[len(self.prefix) :].decode()

    def span(self, prefix: str, start_key: str | None) -> tuple[bytes, bytes] | None:
        """The etcd range ``[key, range_end)`` of the keys under ``prefix`` from ``start_key``
        (inclusive), or None when no key can be in it."""
        if prefix.startswith(DEFAULT_PREFIX):
            low = self.encode(prefix)
            end = _prefix_end(low)
        elif DEFAULT_PREFIX.startswith(prefix):  # "" or "/reg": every key this store has
            low, end = self.prefix, self.end
        else:
            return None
        if start_key is not None and start_key > prefix:
            if start_key.startswith(DEFAULT_PREFIX):
                low = max(low, self.encode(start_key))
            elif start_key > DEFAULT_PREFIX:  # after every key that starts with /registry
                return None
        if end != b"\0" and low >= end:
            return None
        return low, end

    def key_value(self, kv: Any, key: str | None = None) -> KeyValue:
        """Our KeyValue of an etcd ``mvccpb.KeyValue`` (``key`` saves decoding when known)."""
        return KeyValue(
            key if key is not None else self.decode(kv.key),
            kv.value,
            kv.create_revision,
            kv.mod_revision,
        )


# ------------------------------------------------------------------------------------- connecting


def _target(endpoint: str) -> str:
    """The gRPC target of one endpoint (``host:port``, re-resolved by gRPC's DNS resolver)."""
    host, port = _host_port(endpoint)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _host_port(endpoint: str) -> tuple[str, int]:
    """``http://host:port`` (or bare ``host:port``) → (host, port); etcd's client port by default."""
    parts = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
    if parts.scheme != "http":
        raise ValueError(f"etcd endpoint {endpoint!r}: only http:// is supported (no TLS yet)")
    if not parts.hostname:
        raise ValueError(f"etcd endpoint {endpoint!r} has no host")
    return parts.hostname, parts.port or 2379


def _unavailable(error: grpc.aio.AioRpcError) -> str:
    """Why a member could not serve a call, in etcd's words when etcd said it ("etcdserver: no
    leader"); gRPC's own words name addresses, so those become a plain statement."""
    details = error.details() or ""
    if details.startswith("etcdserver: "):
        return f"etcd: {details}"
    if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
        return "etcd: no answer in time"
    return "etcd: no connection to any member"


def _failure(error: grpc.aio.AioRpcError) -> StorageError:
    """The StorageError for a failed call that has no more specific meaning. Messages name no
    endpoint: they reach API clients, who have no business knowing where etcd runs."""
    code, details = error.code(), error.details() or ""
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return EtcdUnavailableError(_unavailable(error))
    if "request is too large" in details:
        return ValueTooLargeError(details)  # a server started with a lower --max-request-bytes
    return StorageError(f"etcd: {code.name}: {details}")


# ------------------------------------------------------------------------------------------ store


class EtcdStorage:
    """The storage contract over an etcd v3 cluster (3.4 or later).

    ``endpoints`` are client URLs (``http://127.0.0.1:2379``); ``prefix`` replaces the leading
    ``/registry`` of every key, as kube-apiserver's ``--etcd-prefix`` does.
    """

    def __init__(
        self,
        endpoints: list[str],
        prefix: str = DEFAULT_PREFIX,
        *,
        request_timeout: float = REQUEST_TIMEOUT,
    ) -> None:
        if not endpoints:
            raise ValueError("the etcd storage backend needs at least one endpoint")
        for endpoint in endpoints:
            _host_port(endpoint)  # refuse a bad URL now, not at start()
        self.endpoints = list(endpoints)
        self._keys = _Keys(prefix)
        self._timeout = request_timeout
        self._members: Members | None = None
        self._watches: set[EtcdWatch] = set()

    # -- lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Open a channel per member and check that etcd answers (within the request timeout)."""
        self._members = Members(
            [(endpoint, _target(endpoint)) for endpoint in self.endpoints], CHANNEL_OPTIONS
        )
        try:
            await self._members.open()
            await self.current_revision()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """End every watch (their consumers' loops finish), then close the channels."""
        for watch in list(self._watches):
            await watch.close()
        members, self._members = self._members, None
        if members is not None:
            await members.close()
            await _grpc_settled()

    # -- reads -------------------------------------------------------------------------------------

    async def current_revision(self) -> int:
        """The header revision of a count-only read of one absent key: a linearizable, tiny read."""
        response = await self._call(
            "Range", rpc.RangeRequest(key=self._keys.nowhere, count_only=True)
        )
        return int(response.header.revision)

    async def get(self, key: str) -> KeyValue | None:
        response = await self._call("Range", rpc.RangeRequest(key=self._keys.encode(key)))
        return self._keys.key_value(response.kvs[0], key) if response.kvs else None

    async def list(
        self, prefix: str, *, limit: int = 0, start_key: str | None = None, revision: int = 0
    ) -> ListResult:
        span = self._keys.span(prefix, start_key)
        if span is None:  # still one read: the revision must be checked and the header read
            request = rpc.RangeRequest(key=self._keys.nowhere, count_only=True, revision=revision)
        else:
            low, end = span
            request = rpc.RangeRequest(
                key=low, range_end=end, limit=max(limit, 0), revision=revision
            )
        response = await self._call(
            "Range", request, revision=revision, attempt=LIST_ATTEMPT if span else READ_ATTEMPT
        )
        items = [self._keys.key_value(kv) for kv in response.kvs]
        return ListResult(
            items=items,
            revision=revision or int(response.header.revision),
            remaining=int(response.count) - len(items) if span is not None else 0,
        )

    # -- writes ------------------------------------------------------------------------------------

    async def create(self, key: str, value: bytes) -> KeyValue:
        check_value_size(key, value)  # etcd would refuse it too, after the round trip
        name = self._keys.encode(key)
        response = await self._call(
            "Txn",
            rpc.TxnRequest(
                compare=[_compare(name, rpc.Compare.CREATE, create_revision=0)],
                success=[rpc.RequestOp(request_put=rpc.PutRequest(key=name, value=value))],
            ),
        )
        if not response.succeeded:
            raise KeyExistsError(key)
        revision = int(response.header.revision)
        return KeyValue(key, value, revision, revision)

    async def update(
        self, key: str, value: bytes, expected_revision: int, *, create_revision: int = 0
    ) -> KeyValue:
        check_value_size(key, value)
        name = self._keys.encode(key)
        if expected_revision <= 0:  # mod_revision == 0 is true of an absent key: never ask etcd
            raise await self._precondition_failure(key, expected_revision)
        put = rpc.RequestOp(request_put=rpc.PutRequest(key=name, value=value))
        if create_revision > 0:  # known: the put alone
            response = await self._guarded(name, expected_revision, put)
            if not response.succeeded:
                raise self._conflict(key, expected_revision, response)
            return KeyValue(key, value, create_revision, int(response.header.revision))
        # The put, then a keys-only read of the result for its create_revision: cheaper than the
        # put's prev_kv, which would send the whole old value back.
        response = await self._guarded(
            name,
            expected_revision,
            put,
            rpc.RequestOp(request_range=rpc.RangeRequest(key=name, keys_only=True)),
        )
        if not response.succeeded:
            raise self._conflict(key, expected_revision, response)
        stored = response.responses[1].response_range.kvs[0]
        return KeyValue(key, value, int(stored.create_revision), int(stored.mod_revision))

    async def delete(self, key: str, expected_revision: int | None = None) -> KeyValue:
        name = self._keys.encode(key)
        delete = rpc.DeleteRangeRequest(key=name, prev_kv=True)
        if expected_revision is None:
            response = await self._call("DeleteRange", delete)
            if not response.deleted:  # deleting nothing takes no revision in etcd
                raise KeyNotFoundError(key)
            previous, revision = response.prev_kvs[0], response.header.revision
        else:
            if expected_revision <= 0:
                raise await self._precondition_failure(key, expected_revision)
            op = rpc.RequestOp(request_delete_range=delete)
            txn = await self._guarded(name, expected_revision, op)
            if not txn.succeeded:
                raise self._conflict(key, expected_revision, txn)
            previous = txn.responses[0].response_delete_range.prev_kvs[0]
            revision = txn.header.revision
        return KeyValue(key, previous.value, int(previous.create_revision), int(revision))

    # -- watch and compaction ----------------------------------------------------------------------

    def watch(self, prefix: str, after_revision: int, *, with_prev: bool = True) -> EtcdWatch:
        watch = EtcdWatch(self, prefix, after_revision, with_prev)
        self._watches.add(watch)
        return watch

    async def compact(self, revision: int) -> None:
        """Physical compaction: returns once etcd has dropped the history, as kube's compactor asks.

        etcd refuses a revision at or below the last compaction; the contract makes that a no-op.
        """
        if revision <= 0:
            return
        try:
            await self._rpc(
                "Compact",
                rpc.CompactionRequest(revision=revision, physical=True),
                max(COMPACT_TIMEOUT, self._timeout),
            )
        except grpc.aio.AioRpcError as error:
            if _COMPACTED in (error.details() or ""):
                return
            raise await self._translate(error, revision) from error

    # -- helpers -----------------------------------------------------------------------------------

    async def _rpc(
        self,
        method: str,
        request: Any,
        timeout: float | None = None,
        *,
        attempt: float = READ_ATTEMPT,
    ) -> Any:
        """One unary KV call, tried on member after member until one answers or ``timeout`` (the
        request timeout) passes, as clientv3's retry interceptor does: a read is retried after any
        transient failure; a write only when it provably never reached etcd (no connection, or a
        member refused it for want of a leader). A write that reached etcd and got no answer may
        still be applied, so it fails as a StorageTimeoutError. Each attempt has its own deadline,
        short for reads: a member that hangs costs a read about a second, not the whole timeout."""
        members = self._members
        if members is None:
            raise StorageError("storage is not open")
        call: Callable[..., Any]
        write = method != "Range"
        loop = asyncio.get_running_loop()
        budget = timeout or self._timeout
        deadline = loop.time() + budget
        if write:
            attempt = min(WRITE_ATTEMPT, budget)
        pause, longest = _RETRY_PAUSE
        tried: set[Member] = set()
        last: StorageError = EtcdUnavailableError(f"etcd: no member answered in {budget:g}s")
        while (left := deadline - loop.time()) > 0:
            if write and not members.has_leader.is_set():
                # The leader just left rotation: a follower would take the write and hold it until
                # etcd's own timeout (whether it commits is then unknown); wait for the election.
                with suppress(TimeoutError):
                    await asyncio.wait_for(members.has_leader.wait(), left)
                continue
            member = members.for_call(tried)
            if member is None:  # every member failed this call once: pause, then try them all again
                tried.clear()
                await asyncio.sleep(min(pause, left))
                pause = min(pause * 2, longest)
                continue
            tried.add(member)
            call = getattr(member.kv, method)
            try:
                return await _attempt(
                    member, call(request, timeout=min(attempt, left), metadata=HASLEADER)
                )
            except _Abandoned:
                if write:
                    raise _timeout(method, "its member left rotation") from None
                last = StorageTimeoutError("etcd: the member left rotation during the call")
            except grpc.aio.AioRpcError as error:
                outcome = _classify(error)
                if outcome is _Outcome.FINAL:
                    raise
                if outcome is _Outcome.REFUSED:
                    members.down(member, f"{error.code().name}: {error.details()}")
                    last = _failure(error)
                    continue
                if outcome is _Outcome.SILENT:
                    members.suspect(member)
                    attempt *= 2
                if write:
                    raise _timeout(method, f"{error.code().name}: {error.details()}") from error
                last = StorageTimeoutError(_unavailable(error))
        raise last

    async def _call(
        self, method: str, request: Any, *, revision: int = 0, attempt: float = READ_ATTEMPT
    ) -> Any:
        """``_rpc``, with its failures as StorageErrors (``revision``: the one a read asked for)."""
        try:
            return await self._rpc(method, request, attempt=attempt)
        except grpc.aio.AioRpcError as error:
            raise await self._translate(error, revision) from error

    async def _translate(self, error: grpc.aio.AioRpcError, revision: int) -> StorageError:
        details = error.details() or ""
        if _COMPACTED in details:
            return CompactedError(revision, await self._compact_revision(revision))
        if _FUTURE in details:
            return FutureRevisionError(revision, await self.current_revision())
        return _failure(error)

    async def _guarded(self, name: bytes, expected_revision: int, *ops: Any) -> Any:
        """``ops`` if ``name`` is at ``expected_revision``, else a read of ``name``; one txn."""
        return await self._call(
            "Txn",
            rpc.TxnRequest(
                compare=[_compare(name, rpc.Compare.MOD, mod_revision=expected_revision)],
                success=list(ops),
                failure=[rpc.RequestOp(request_range=rpc.RangeRequest(key=name))],
            ),
        )

    def _conflict(self, key: str, expected_revision: int, txn: Any) -> StorageError:
        kvs = txn.responses[0].response_range.kvs
        if not kvs:
            return KeyNotFoundError(key)
        return RevisionConflictError(key, expected_revision, self._keys.key_value(kvs[0], key))

    async def _precondition_failure(self, key: str, expected_revision: int) -> StorageError:
        current = await self.get(key)
        if current is None:
            return KeyNotFoundError(key)
        return RevisionConflictError(key, expected_revision, current)

    async def _compact_revision(self, requested: int) -> int:
        """etcd's compaction revision, which only a watch reveals: a watch from revision 1 is
        cancelled at once with it. Used on the rare CompactedError path; ``requested + 1`` (the
        least it can be) if etcd does not say in time."""
        if self._members is None:
            return requested + 1
        stub = self._members.for_watch().watch
        call = stub.Watch(timeout=self._timeout, wait_for_ready=True, metadata=HASLEADER)
        create = rpc.WatchCreateRequest(key=self._keys.nowhere, start_revision=1)
        try:
            await call.write(rpc.WatchRequest(create_request=create))
            while (response := await call.read()) is not grpc.aio.EOF:
                if response.compact_revision:
                    return int(response.compact_revision)
        except grpc.aio.AioRpcError:
            pass
        finally:
            call.cancel()
        return requested + 1


async def _started(call: Any, request: Any) -> None:
    """Write a stream's first request. gRPC's ``write`` waits for the call's headers to be sent and
    never returns when the call fails before that (a member down when the stream was opened), nor
    when the call is cancelled, and raises InvalidStateError on a call that has already failed:
    both become the call's failure as an AioRpcError, which the reader handles."""
    try:
        await asyncio.wait_for(call.write(request), WATCH_START_TIMEOUT)
    except TimeoutError:
        call.cancel()
        code, details = grpc.StatusCode.UNAVAILABLE, "the watch stream did not start in time"
    except asyncio.InvalidStateError:  # the call had already failed: its own status says why
        code, details = await call.code(), await call.details()
    else:
        return
    raise grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details=details)


class _Abandoned(Exception):
    """The call's member left rotation while the call was in flight, and the call was cancelled."""


async def _attempt(member: Member, call: Any) -> Any:
    """Await one unary ``call`` on ``member``, which ``Members.down`` may abandon meanwhile."""
    member.calls.add(call)
    try:
        return await call
    except asyncio.CancelledError:
        if call not in member.abandoned:
            raise  # our own task is being cancelled
        raise _Abandoned from None
    finally:
        member.calls.discard(call)
        member.abandoned.discard(call)


class _Outcome(enum.Enum):
    """What a failed attempt says about the member and the call."""

    FINAL = "etcd answered: no other member would answer otherwise"
    REFUSED = "the call never reached etcd, or etcd refused it before doing anything"
    SILENT = "the member did not answer within the attempt's deadline"
    BROKEN = "the member answered with a transient failure, or the connection broke"


_NEVER_SENT: Final = ("failed to connect to all addresses", LEADERLESS)
"""gRPC's words when no connection exists (nothing was sent: clientv3's "there is no address
available"), and etcd's when a member without a leader refuses a ``hasleader`` call up front."""


def _classify(error: grpc.aio.AioRpcError) -> _Outcome:
    code, details = error.code(), error.details() or ""
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return _Outcome.SILENT
    if code == grpc.StatusCode.UNAVAILABLE:
        if any(words in details for words in _NEVER_SENT):
            return _Outcome.REFUSED
        return _Outcome.BROKEN  # e.g. "etcdserver: leader changed", "request timed out", a reset
    if code == grpc.StatusCode.CANCELLED or _connection_lost(error):
        return _Outcome.BROKEN
    return _Outcome.FINAL


def _timeout(method: str, why: str) -> StorageTimeoutError:
    """A write that reached etcd and got no answer: it may still be applied. (Logged, never shown
    to clients: gRPC's words may name addresses.)"""
    return StorageTimeoutError(
        f"etcd gave no answer to a {method} ({why}); it may still be applied"
    )


_GRPC_STATUS_TASK: Final = "_AioCall._handle_status_once_received"
"""The task gRPC runs per streaming call to await the call's final status (grpcio 1.6x-1.8x)."""


async def _grpc_settled(patience: float = 0.2) -> None:
    """Let gRPC finish the streaming calls that closing cancelled, while their event loop runs.

    A cancelled call's last core operation completes a moment later on gRPC's poller thread; if
    the loop has closed by then (asyncio.run cancels gRPC's waiting task on the way out), gRPC calls
    into the closed loop and logs "Event loop is closed". Only gRPC's internal task shows when they
    are done, so this waits for those tasks while they keep finishing (calls other stores still
    hold open never do, so it stops after ``patience`` without progress). If a gRPC release renames
    the task, this waits for nothing, which costs only that log line.
    """
    current = asyncio.current_task()
    while True:
        pending = {
            task
            for task in asyncio.all_tasks()
            if task is not current
            and getattr(task.get_coro(), "__qualname__", "") == _GRPC_STATUS_TASK
        }
        if not pending:
            return
        done, _ = await asyncio.wait(pending, timeout=patience)
        if not done:
            return


def _compare(name: bytes, target: Any, **value: int) -> Any:
    return rpc.Compare(key=name, target=target, result=rpc.Compare.EQUAL, **value)


# ------------------------------------------------------------------------------------------ watch


class _End:
    """Queued once the reader task has finished; the consumer then stops or raises its error."""


_END: Final = _End()


class EtcdWatch:
    """One etcd watch stream under a prefix; implements the ``Watch`` protocol.

    A reader task owns the gRPC stream and feeds a bounded queue; the consumer's ``__anext__`` only
    takes from it. When the stream breaks, the reader re-watches from the last revision it queued
    (or that a progress notification vouched for), after a growing pause, for as long as the watch
    is open: etcd restarts cost the consumer nothing.

    Compaction follows the contract, which is one stricter than etcd: history must cover
    ``after_revision`` itself (a delete at the compaction revision is gone). Asking etcd for
    ``start_revision = after_revision`` and dropping events at or before it gives exactly that.
    """

    def __init__(
        self, storage: EtcdStorage, prefix: str, after_revision: int, with_prev: bool = True
    ) -> None:
        self._storage = storage
        self._prefix = prefix
        self._with_prev = with_prev
        self._last = after_revision
        self._queue: asyncio.Queue[builtins.list[StorageEvent] | _End] = asyncio.Queue(_WATCH_QUEUE)
        self._events: deque[StorageEvent] = deque()
        self._reader: asyncio.Task[None] | None = None
        self._call: Any = None  # the current gRPC stream
        self._moving = ""  # why the members asked the stream to move: it then ends without a pause
        self._closed = False
        self._finished = False
        self._error: StorageError | None = None
        self._failures = 0

    def __aiter__(self) -> EtcdWatch:
        return self

    @property
    def ready(self) -> bool:
        """Whether the next event (or the end) can be taken without waiting: etcd sends the events of
        several writes in one response when they come quickly, and the watch cache publishes them in one
        batch."""
        return bool(self._events) or not self._queue.empty()

    async def __anext__(self) -> StorageEvent:
        while True:
            if self._closed:
                raise StopAsyncIteration
            if self._events:
                return self._events.popleft()
            if self._finished:
                if self._error is not None:
                    raise self._error
                raise StopAsyncIteration
            if self._reader is None:
                self._reader = asyncio.get_running_loop().create_task(self._read())
            item = await self._queue.get()
            if isinstance(item, _End):
                self._finished = True
            else:
                self._events.extend(item)

    async def close(self) -> None:
        """Cancel the stream and let the reader see it end. Cancelling the gRPC call rather than
        the reader task lets gRPC complete the pending read on this loop: an operation left pending
        when the loop closes makes gRPC's poller call into the closed loop later."""
        if self._closed:
            return
        self._closed = True
        self._storage._watches.discard(self)
        reader, self._reader = self._reader, None
        if reader is not None:
            if self._call is not None and not self._queue.full():  # the reader waits on gRPC
                self._call.cancel()
                await asyncio.wait([reader], timeout=1.0)
            if not reader.done():  # in a backoff pause or on a full queue
                reader.cancel()
                await asyncio.wait([reader])
        with suppress(asyncio.QueueFull):  # wake a consumer waiting on an empty queue
            self._queue.put_nowait(_END)

    async def _read(self) -> None:
        """Stream until closed or failed; re-watch after a connection failure."""
        try:
            while not self._closed:
                try:
                    await self._stream()
                    reason = "etcd ended the stream"
                except asyncio.CancelledError:
                    if self._closed:  # gRPC reports the call close() cancelled this way
                        return
                    if not self._moving:
                        raise
                    reason = self._moving
                except grpc.aio.AioRpcError as error:
                    if not _connection_lost(error):
                        raise _failure(error) from error
                    reason = f"{error.code().name}: {error.details()}"
                if self._closed:
                    return
                members = self._storage._members
                if self._moving and members is not None and members.any_healthy():
                    # to a member that answers: no reason to wait (with none, the move is an outage:
                    # it backs off below, or it would spin and flood the log)
                    log.info("etcd watch on %s moves (%s)", self._prefix, reason)
                    continue
                self._failures += 1
                first, longest = _WATCH_BACKOFF
                pause = min(longest, first * 2 ** min(self._failures - 1, 10))
                # the first failure is news; the retries of an outage would flood the log
                log.log(
                    logging.WARNING if self._failures == 1 else logging.DEBUG,
                    "etcd watch on %s broke (%s); re-watching after revision %d in %.2fs",
                    self._prefix,
                    reason,
                    self._last,
                    pause,
                )
                await asyncio.sleep(pause)
        except StorageError as error:
            self._error = error
        except Exception as error:  # a bug must end the watch visibly, not hang the consumer
            if self._closed:  # e.g. a write on the call close() cancelled
                return
            log.exception("etcd watch on %s failed", self._prefix)
            self._error = StorageError(f"etcd watch on {self._prefix!r} failed: {error!r}")
        if not self._closed:
            await self._queue.put(_END)

    async def _stream(self) -> None:
        """One watch stream from ``self._last``; returns when etcd ends it, raises when it breaks."""
        members = self._storage._members
        if members is None:
            raise StorageError("storage is not open")
        keys = self._storage._keys
        span = keys.span(self._prefix, None)
        low, end = span if span is not None else (keys.nowhere, b"")
        member = members.for_watch()
        self._moving = ""
        # hasleader: a member that loses the leader cancels the stream ("etcdserver: no leader")
        # instead of leaving it silent; no wait_for_ready: a member that is down fails the stream
        # at once, and the next attempt picks another.
        self._call = call = member.watch.Watch(metadata=HASLEADER)
        member.watches.add(self)
        try:
            await _started(
                call,
                rpc.WatchRequest(
                    create_request=rpc.WatchCreateRequest(
                        key=low,
                        range_end=end,
                        start_revision=max(self._last, 1),
                        prev_kv=self._with_prev,
                        # etcd's timed notifications (only ever sent to a caught-up watcher) let a
                        # re-watch on a quiet prefix start near the head, not behind a compaction.
                        # Requested ones are not used: etcd 3.4 may send them ahead of events.
                        progress_notify=True,
                    )
                ),
            )
            while (response := await call.read()) is not grpc.aio.EOF:
                await self._handle(response)
        except grpc.aio.AioRpcError as error:
            if _connection_lost(error) and not self._closed:
                member.watches.discard(self)  # this stream needs no move: it re-watches anyway
                members.down(member, f"watch stream: {error.code().name}: {error.details()}")
            raise
        finally:
            member.watches.discard(self)
            self._call = None
            call.cancel()

    def move(self, reason: str) -> None:
        """End the current stream so that the reader re-watches at once on another member."""
        if self._call is not None and not self._closed:
            self._moving = reason
            self._call.cancel()

    async def _handle(self, response: Any) -> None:
        if response.compact_revision:
            raise CompactedError(self._last, int(response.compact_revision))
        if response.canceled:
            raise StorageError(
                f"etcd cancelled the watch on {self._prefix!r}: {response.cancel_reason}"
            )
        if response.created:
            if self._failures:
                log.info("etcd watch on %s resumed after revision %d", self._prefix, self._last)
            self._failures = 0
            return
        if not response.events:  # a progress notification: every event up to it has been sent
            self._last = max(self._last, int(response.header.revision))
            return
        batch = [
            await self._event(event)
            for event in response.events
            if event.kv.mod_revision > self._last
        ]
        if batch:
            self._last = batch[-1].revision
            await self._queue.put(batch)

    async def _event(self, event: Any) -> StorageEvent:
        keys = self._storage._keys
        key = keys.decode(event.kv.key)
        previous = keys.key_value(event.prev_kv, key) if event.HasField("prev_kv") else None
        revision = int(event.kv.mod_revision)
        if not self._with_prev:  # the consumer knows the previous values
            if event.type == rpc.Event.DELETE:
                return StorageEvent(EventType.DELETE, KeyValue(key, b"", 0, revision), None)
            return StorageEvent(EventType.PUT, keys.key_value(event.kv, key), None)
        if event.type == rpc.Event.DELETE:
            if previous is not None:
                kv = KeyValue(key, previous.value, previous.create_revision, revision)
                return StorageEvent(EventType.DELETE, kv, previous)
        elif previous is not None or event.kv.create_revision == revision:
            return StorageEvent(EventType.PUT, keys.key_value(event.kv, key), previous)
        # etcd drops prev_kv when compaction overtakes a slow watcher; without it a delete has no
        # object and an update looks like a create, so the consumer must relist (as kube does).
        raise CompactedError(revision - 1, await self._storage._compact_revision(revision - 1))
