"""The generic registry: one Store per resource, doing for any kind what kube's generic registry Store does.

A Store returns *internal* objects (dicts in the hub version) and takes a write's object in the version it
was written in: every write, from a client or from the server itself, is pruned, defaulted, admitted and
validated here (``registry.admit``) before it is converted to the hub and stored. Endpoints only decode and
encode. Here live the semantics every kind shares: server-owned metadata, optimistic concurrency, the status
subresource split, generation, finalizers, paging, and the per-kind strategy's hooks.
"""

from __future__ import annotations

import base64
import binascii
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass

import orjson

from apiserver.admission.chain import AdmissionChain
from apiserver.admission.interface import Operation
from apiserver.encoding.goprint import go_printed
from apiserver.encoding.protobuf import Message
from apiserver.machinery import errors
from apiserver.machinery.convert import deep_copy
from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import ResourceType, VersionType
from apiserver.registry import codec
from apiserver.registry.admit import (
    Write,
    WriteOptions,
    admission_attributes,
    admit,
    admit_now,
    validate_admission,
)
from apiserver.registry.cacher import MISS, WatchCache
from apiserver.registry.deletion import DEFAULT_PROPAGATION, Propagation
from apiserver.registry.identity import identity_changes, uid_precondition_failed
from apiserver.registry.keys import key_prefix, object_key
from apiserver.registry.meta import generate_name, new_uid, now_rfc3339, spec_of
from apiserver.registry.metaview import metadata_view
from apiserver.registry.offload import is_heavy, run_heavy
from apiserver.registry.strategy import Finish, Strategy, finish_nothing, overrides
from apiserver.registry.versioning import converted, to_version
from apiserver.schema import Cause
from apiserver.storage.fanout import DEFAULT_WATCH_CAPACITY, PumpedStream, WatchStream
from apiserver.storage.interface import (
    CompactedError,
    EventType,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    RevisionConflictError,
    Storage,
    StorageEvent,
)

Predicate = Callable[[Object], bool]
UpdateFunction = Callable[[Object], Object]
"""Given the stored object in the write's version (its own copy), the object to store in that version."""

_GENERATE_NAME_ATTEMPTS = 8
DECODED_CAPACITY = 4096  # watched events whose decoded object is kept for the other watchers
WRITTEN_CAPACITY = 4096  # keys whose latest write by this server is kept as the next update's guess
CREATE_WRITES_CAPACITY = 1024  # the Writes of creates kept, one per namespace, version and dry run
# Events a watch takes (and writes) at once: a few hundred KiB per write, so one busy watcher's write
# does not hold the loop for long.
WATCH_BATCH = 256
# The metadata fields a client can never change once an object exists (kube ObjectMeta update validation).
_IMMUTABLE_METADATA = (
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
)


@dataclass(frozen=True, slots=True)
class ListOptions:
    predicate: Predicate | None = None
    limit: int = 0
    continue_token: str = ""
    revision: int = 0  # an exact revision to read at (resourceVersionMatch=Exact); 0 = latest
    any_version: bool = False  # resourceVersion=0: any state is fine, so the watch cache may answer


@dataclass(frozen=True, slots=True)
class ListPage:
    items: list[Object]
    revision: int
    continue_token: str
    remaining: int | None
    # the items as JSON of the storage version, when the watch cache had them ready (read-only, shared)
    encoded: list[bytes] | None = None


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: str  # ADDED, MODIFIED, DELETED
    object: Object
    revision: int


MAX_RESOURCE_VERSION = 2**64 - 1  # kube parses a resourceVersion as a uint64 (strconv.ParseUint)
MAX_REVISION = 2**63 - 1  # storage revisions are etcd's int64: anything above is beyond every store


def parse_resource_version(text: str) -> int:
    """A resourceVersion a client sent, as the revision it names: digits only, at most a uint64, as kube's
    ParseUint; one beyond any int64 revision is read as the largest (still in the future of every store)."""
    if not (text.isascii() and text.isdigit()) or len(text) > 20:
        raise errors.bad_request(f"invalid resource version: {text!r}")
    value = int(text)
    if value > MAX_RESOURCE_VERSION:
        raise errors.bad_request(f"invalid resource version: {text!r}")
    return min(value, MAX_REVISION)


def encode_continue(revision: int, start: str) -> str:
    token = orjson.dumps({"v": "meta.k8s.io/v1", "rv": revision, "start": start})
    return base64.urlsafe_b64encode(token).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    try:
        data = orjson.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        revision, start = int(data["rv"]), str(data["start"])
        if data.get("v") != "meta.k8s.io/v1" or not 0 < revision <= MAX_REVISION:
            raise ValueError(token)
    except (ValueError, KeyError, TypeError, binascii.Error) as error:
        raise errors.bad_request(f"invalid continue token: {error}") from None
    return revision, start


class Store:
    """create/get/list/update/delete/watch of one resource on top of the revisioned key-value storage."""

    def __init__(
        self,
        resource: ResourceType,
        storage: Storage,
        strategy: Strategy | None = None,
        cache: WatchCache | None = None,
        admission: AdmissionChain | None = None,
        go_type: Message | None = None,
        metadata_rule: Callable[[Object], list[Cause]] | None = None,
    ) -> None:
        """``go_type``: the Go struct a built-in kind's objects are stored as (fieldmanager.gotyped's
        ``stored_go_type``), which shapes what is stored and answered; None for custom resources.
        ``metadata_rule``: what the kind checks of its metadata beyond ObjectMeta's rules (``Write``)."""
        self.resource = resource
        self.codec = codec.Codec(resource)
        self._go_type = go_type
        self._metadata_rule = metadata_rule
        self.storage = storage
        self.strategy = strategy if strategy is not None else Strategy()
        self._begins_create = overrides(self.strategy, "begin_create")
        """Whether the strategy takes something outside the object on create (else no FinishFunc)."""
        self._begins_update = overrides(self.strategy, "begin_update")
        """Likewise on update."""
        self._prepares_create = overrides(self.strategy, "prepare_for_create")
        self._judges_create = overrides(self.strategy, "validate") or overrides(
            self.strategy, "canonicalize"
        )
        """Whether the strategy's Validate or Canonicalize do anything on create (else not called)."""
        self._defaults = self.strategy.default if overrides(self.strategy, "default") else None
        """The strategy's decode-time defaults of every write, when it has any."""
        self._create_writes: dict[tuple[str, str, bool], Write] = {}
        """The Write of a create by namespace, version and dry run: the same for every create there."""
        self.cache = cache
        self.admission = admission if admission is not None else AdmissionChain()
        self.terminating = False
        """Its CustomResourceDefinition is being deleted: creates are refused (kube's crdHandler, 405)."""
        self._decoded: dict[tuple[str, int], Object] = {}
        self._watches = 0
        """StoreWatches open: a lone watcher takes each event once, so its decoded object is not kept."""
        self._views: dict[tuple[str, int], Object] = {}
        """Metadata views of this store's own writes, made from the written objects, until the
        metadata-only watchers take them (``offer``)."""
        self._view_watches = 0
        """Metadata-only StoreWatches open (the garbage collector's informer): views are made for them."""
        self._last_change: tuple[StorageEvent, WatchEvent] | None = None
        """The watch event of the last storage event published, as every watcher without a selector
        sees it: the same storage event reaches each of them in turn."""
        # oldest write first, so that pruning what the cache has applied stops at the first it has not
        self._written: OrderedDict[str, KeyValue] = OrderedDict()

    def reshape(self, resource: ResourceType) -> None:
        """Serve the same stored objects as ``resource``'s new shape (an updated CustomResourceDefinition):
        what was decoded or rendered with the old one (its storage version, its schemas) is forgotten."""
        self.resource = resource
        self.codec = codec.Codec(resource)
        self._create_writes.clear()
        self._decoded.clear()
        self._views.clear()
        self._last_change = None
        if self.cache is not None:
            self.cache.forget_renders()

    @property
    def sets_generation(self) -> bool:
        """Whether ``metadata.generation`` is kept, as the strategy or kube's default for the kind says."""
        choice = self.strategy.sets_generation
        return (not self.resource.builtin) if choice is None else choice

    @property
    def delete_returns_object(self) -> bool:
        """Whether a finished DELETE answers the object (else a Status), as the strategy or kube's default
        for the kind (built-ins a Status, custom resources the object) says."""
        choice = self.strategy.delete_returns_object
        return (not self.resource.builtin) if choice is None else choice

    # -- errors ------------------------------------------------------------------------------------

    def _not_found(self, name: str) -> errors.APIError:
        return errors.not_found(self.resource.plural, self.resource.group, name)

    def _conflict(self, name: str, detail: str = errors.MODIFIED) -> errors.APIError:
        return errors.conflict(self.resource.plural, self.resource.group, name, detail)

    def _check_uid(self, name: str, precondition: str, metadata: Object) -> None:
        """409 when a uid precondition names another object than the stored one."""
        actual = str(metadata.get("uid") or "")
        if precondition and precondition != actual:
            raise self._conflict(name, uid_precondition_failed(precondition, actual))

    # -- reads -------------------------------------------------------------------------------------

    async def get(self, namespace: str | None, name: str) -> Object:
        obj, raw = await self.get_rendered(namespace, name)
        return (
            obj if raw is None else deep_copy(obj)
        )  # callers may change it; the cache's is shared

    async def get_rendered(self, namespace: str | None, name: str) -> tuple[Object, bytes | None]:
        """The object (read-only) and, when the watch cache answered, its JSON in the storage version: a
        GET in that version then sends those bytes without decoding or encoding anything."""
        key = object_key(self.resource, namespace, name)
        cached = await self.cache.get(key) if self.cache is not None else MISS
        if cached is not MISS and self.cache is not None:
            if cached is None:
                raise self._not_found(name)
            return await self.cache.rendered(cached, self.decode)
        kv = await self.storage.get(key)
        if kv is None:
            raise self._not_found(name)
        return self.codec.decode(kv), None

    def unchanged(
        self, namespace: str | None, name: str, rendered: bytes
    ) -> Callable[[], bool] | None:
        """A check that ``rendered`` (``get_rendered``'s JSON) is still the object's current JSON, as a
        consistent read would find it; None when the watch cache cannot vouch for that."""
        if self.cache is None:
            return None
        return self.cache.unchanged(object_key(self.resource, namespace, name), rendered)

    async def list(self, namespace: str | None, options: ListOptions) -> ListPage:
        prefix = key_prefix(self.resource, namespace if self.resource.namespaced else None)
        if self.cache is not None and not options.continue_token and not options.revision:
            cached = await self._list_cached(self.cache, prefix, options)
            if cached is not None:
                return cached
        revision = options.revision
        start_key = prefix
        if options.continue_token:
            revision, start = decode_continue(options.continue_token)
            start_key = prefix + start
        items: list[Object] = []
        last_key = ""
        remaining: int | None = 0
        try:
            while True:
                want = options.limit - len(items) if options.limit else 0
                page = await self.storage.list(
                    prefix, limit=want, start_key=start_key, revision=revision
                )
                revision = page.revision
                for kv in page.items:
                    obj = self.codec.decode(kv)
                    if options.predicate is None or options.predicate(obj):
                        items.append(obj)
                    last_key = kv.key
                remaining = page.remaining
                if not page.more or (options.limit and len(items) >= options.limit):
                    break
                start_key = last_key + "\x00"
        except CompactedError:
            # kube's etcd3 interpretListError: paging has its own message
            if not options.continue_token:
                raise errors.expired(
                    "The resourceVersion for the provided list is too old."
                ) from None
            raise errors.expired(
                "The provided continue parameter is too old to display a consistent list result. "
                "You can start a new list without the continue parameter, or use the continue token "
                "in this response to retrieve the remainder of the results."
            ) from None
        except FutureRevisionError as error:
            raise errors.too_large_resource_version(error.requested, error.current) from None
        token = ""
        if remaining:
            token = encode_continue(revision, last_key[len(prefix) :] + "\x00")
        return ListPage(items, revision, token, remaining if options.predicate is None else None)

    async def _list_cached(
        self, cache: WatchCache, prefix: str, options: ListOptions
    ) -> ListPage | None:
        """A list answered by the watch cache: any rv=0 list (like kube's cacher, ignoring limit), and a
        consistent list when the cache can vouch for freshness and the result fits in one page."""
        snapshot = await cache.list_rendered(
            prefix, self.decode, consistent=not options.any_version
        )
        if snapshot is MISS:
            return None
        entries, at = snapshot
        predicate = options.predicate
        if predicate is not None:
            entries = [entry for entry in entries if predicate(entry[1])]
        if options.limit and len(entries) > options.limit and not options.any_version:
            return None  # pagination needs a snapshot at one revision: storage keeps those
        objects = [entry[1] for entry in entries]
        return ListPage(objects, at, "", None, [entry[2] for entry in entries])

    def decode(self, kv: KeyValue) -> Object:
        return self.codec.decode(kv)

    # -- writes ------------------------------------------------------------------------------------

    def _write(
        self, namespace: str | None, name: str, operation: Operation, version: VersionType | None,
        subresource: str = "", dry_run: bool = False,
    ) -> Write:  # fmt: skip
        return Write(
            self.resource,
            version or self.resource.storage_version,
            (namespace or "") if self.resource.namespaced else "",
            name,
            operation,
            subresource,
            dry_run,
            self.strategy.name_rule,
            self._defaults,
            self._metadata_rule,
        )

    def _create_write(
        self, namespace: str | None, version: VersionType | None, dry_run: bool
    ) -> Write:
        """``_write`` of a create, made once per namespace, version and dry run (a Write is immutable; one
        made for another shape of the resource, by a create that began before a ``reshape``, is not used)."""
        wanted = version or self.resource.storage_version
        memo_key = ((namespace or "") if self.resource.namespaced else "", wanted.name, dry_run)
        write = self._create_writes.get(memo_key)
        if write is None or write.version is not wanted or write.resource is not self.resource:
            if len(self._create_writes) >= CREATE_WRITES_CAPACITY:
                self._create_writes.clear()
            write = self._create_writes[memo_key] = self._write(
                namespace, "", Operation.CREATE, version, dry_run=dry_run
            )
        return write

    async def create(
        self,
        namespace: str | None,
        obj: Object,
        *,
        dry_run: bool = False,
        version: VersionType | None = None,
        options: WriteOptions | None = None,
    ) -> Object:
        """Create ``obj``, written in ``version`` (the storage version when None)."""
        options = options if options is not None else WriteOptions()
        write = self._create_write(namespace, version, dry_run)
        admitted = admit_now(obj, write, self.admission, options)
        obj = (
            admitted
            if admitted is not None
            else await admit(obj, write, self.admission, options, heavy=options.heavy)
        )
        if not self.resource.persisted:
            return await self.strategy.answer(
                obj, admission_attributes(write, obj, None, options, [])
            )
        metadata = obj["metadata"]
        if self.resource.namespaced:
            assert namespace is not None
        for key in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds"):
            metadata.pop(key, None)
        metadata["uid"] = new_uid()
        metadata["creationTimestamp"] = now_rfc3339()
        metadata.pop("generation", None)
        if self.sets_generation:
            metadata["generation"] = 1
        if self.resource.storage_version.status_subresource:
            obj.pop(
                "status", None
            )  # kube: status cannot be set on create when the subresource is on
        if self._prepares_create:
            self.strategy.prepare_for_create(obj)
        generated = not metadata.get("name")
        if generated:
            metadata["name"] = generate_name(metadata.get("generateName", ""))
        finish = (
            await self.strategy.begin_create(obj, dry_run)
            if self._begins_create
            else finish_nothing
        )
        stored = False
        try:
            if self._judges_create:
                self._refuse_invalid(obj, self.strategy.validate(obj))
                self.strategy.canonicalize(obj)
            obj = self._go_printed(obj)
            validating = validate_admission(obj, None, write, self.admission, options)
            if validating is not None:
                await validating
            created = await self._store_new(namespace, obj, generated, dry_run)
            stored = not dry_run
            return created
        finally:
            if finish is not finish_nothing:
                await finish(stored)

    async def _store_new(
        self, namespace: str | None, obj: Object, generated: bool, dry_run: bool
    ) -> Object:
        """Store the admitted object under its name (a fresh one on each clash of a generated name)."""
        metadata = obj["metadata"]
        for attempt in range(_GENERATE_NAME_ATTEMPTS if generated else 1):
            if generated and attempt:
                metadata["name"] = generate_name(metadata.get("generateName", ""))
            name = metadata["name"]
            key = object_key(self.resource, namespace, name)
            if dry_run:
                if await self.storage.get(key) is not None:
                    raise errors.already_exists(self.resource.plural, self.resource.group, name)
                return obj
            try:
                kv = await self.storage.create(key, self.codec.encode(key, obj))
            except KeyExistsError:
                if generated:
                    continue
                raise errors.already_exists(
                    self.resource.plural, self.resource.group, name
                ) from None
            self._remember(kv)
            self._offer(kv, obj)
            return codec.as_stored(obj, kv)
        raise errors.already_exists(self.resource.plural, self.resource.group, metadata["name"])

    async def update(
        self,
        namespace: str | None,
        name: str,
        try_update: UpdateFunction,
        *,
        subresource: str = "",
        dry_run: bool = False,
        version: VersionType | None = None,
        options: WriteOptions | None = None,
        uid_precondition: str = "",
    ) -> Object:
        """Read-modify-write until it sticks (kube's GuaranteedUpdate).

        ``try_update`` gets the current object in ``version`` (the storage version when None) and returns the
        desired one in that version, which is admitted like any write. A resourceVersion in the result is a
        precondition: when it is not the current one the update fails with 409 Conflict; without one, a
        concurrent write simply makes the loop run ``try_update`` again on the newer object.
        ``uid_precondition`` (a PUT body's uid): the stored object must have it, or 409 Conflict.
        """
        key = object_key(self.resource, namespace, name)
        options = options if options is not None else WriteOptions()
        write = self._write(namespace, name, Operation.UPDATE, version, subresource, dry_run)
        # kube's cachedExistingObject: the first attempt starts from a guess (the watch cache's copy, or this
        # server's own last write when the cache has not seen it yet), saving a storage read; a stale guess
        # shows up as a revision conflict on write, which hands back the stored value for the next attempt
        kv, authoritative = self._latest_known(key), False
        while True:
            if kv is None and not authoritative:
                kv, authoritative = await self.storage.get(key), True
            if kv is None:
                raise self._not_found(name)
            try:
                current, updated, finish = await self._try(
                    kv, try_update, write, options, uid_precondition
                )
            except errors.APIError:
                if not authoritative:  # judged on a guess: only storage's value can say it fails
                    kv = None
                    continue
                raise
            if updated is None:
                if not authoritative:
                    kv = None  # likewise for "nothing changes"
                    continue
                return current  # a no-op write changes nothing and emits no event
            stored = False
            try:
                if dry_run:
                    if not authoritative:
                        kv = None  # and for what a dry run shows
                        continue
                    return updated
                result = await self._write_update(kv, updated)
                stored = True
                return result
            except RevisionConflictError as conflict:
                # Someone wrote in between: re-apply to what is stored now. A resourceVersion the client
                # sent is checked against it at the top of the loop (kube's GuaranteedUpdate).
                kv, authoritative = conflict.current, True
                continue
            except KeyNotFoundError:
                raise self._not_found(name) from None
            finally:
                if finish is not finish_nothing:
                    await finish(stored)

    async def _write_update(self, kv: KeyValue, updated: Object) -> Object:
        """Store ``updated`` over ``kv`` (the stored value it was made from), or delete the object when the
        update finished its deletion (its last finalizer gone). Raises RevisionConflictError when ``kv`` is
        no longer the stored value."""
        if self._finalized(updated):
            deleted = await self.storage.delete(kv.key, kv.mod_revision)
            self._written.pop(kv.key, None)
            # the answer is the update as made (its finalizers gone), at the revision it last had, as
            # kube answers the update that finished a deletion (k8s.io/apiserver registry/generic/
            # registry/store.go, Update's errEmptiedFinalizers path)
            gone = codec.as_stored(updated, deleted)
            await self.strategy.after_delete(gone)
            return gone
        stored = await self.storage.update(
            kv.key,
            self.codec.encode(kv.key, updated),
            kv.mod_revision,
            create_revision=kv.create_revision,
        )
        self._remember(stored)
        self._offer(stored, updated)
        return codec.as_stored(updated, stored)

    async def _try(
        self,
        kv: KeyValue,
        try_update: UpdateFunction,
        write: Write,
        options: WriteOptions,
        uid_precondition: str = "",
    ) -> tuple[Object, Object | None, Finish]:
        """(the stored object, the one to store instead, the strategy's FinishFunc for it), or None for the
        second when nothing changes. Raises the update function's or admission's APIError, and 409 when the
        resourceVersion precondition fails."""
        # a large stored object makes even a small patch's work large (registry.offload)
        heavy = options.heavy or is_heavy(len(kv.value))
        if uid_precondition:  # checked before the update function runs, as storage.Preconditions
            self._check_uid(write.name, uid_precondition, self.codec.decode(kv)["metadata"])
        if self.resource.converter is not None:
            current, old, proposed = await self._proposed_converted(kv, try_update, write)
        elif heavy:
            current, old, proposed = await run_heavy(self._proposed, kv, try_update, write)
        else:
            current, old, proposed = self._proposed(kv, try_update, write)

        def precondition(obj: Object) -> None:
            wanted_version = (obj.get("metadata") or {}).get("resourceVersion")
            if wanted_version and wanted_version != current["metadata"]["resourceVersion"]:
                raise self._conflict(write.name)

        desired = (
            None
            if heavy
            else admit_now(proposed, write, self.admission, options, old, precondition)
        )
        if desired is None:
            desired = await admit(
                proposed, write, self.admission, options, old, heavy, precondition
            )
        updated = self._go_printed(self._prepare_update(current, desired, write.subresource))
        if updated == current:
            return current, None, finish_nothing
        validating = validate_admission(updated, current, write, self.admission, options)
        if validating is not None:
            await validating
        if not self._begins_update:
            return current, updated, finish_nothing
        return current, updated, await self.strategy.begin_update(updated, current, write.dry_run)

    def _proposed(
        self, kv: KeyValue, try_update: UpdateFunction, write: Write
    ) -> tuple[Object, Object, Object]:
        """The stored object, its copy in the write's version, and what the update function makes of it."""
        current = self.codec.decode(kv)
        # the update function gets its own copy: decoding the bytes again beats deep_copy
        old = to_version(self.codec.decode(kv), self.resource, write.version)
        return current, old, try_update(old)

    async def _proposed_converted(
        self, kv: KeyValue, try_update: UpdateFunction, write: Write
    ) -> tuple[Object, Object, Object]:
        """``_proposed`` for a resource whose converter is awaited (a conversion webhook): the stored object
        reaches the update function in the write's version, or the webhook's error is raised before any
        write."""
        current = self.codec.decode(kv)
        (old,) = await converted([self.codec.decode(kv)], self.resource, write.version)
        old = to_version(old, self.resource, write.version)
        return current, old, try_update(old)

    def _latest_known(self, key: str) -> KeyValue | None:
        """The newest value of ``key`` known without asking storage (possibly stale, possibly None)."""
        cached = self.cache.objects.get(key) if self.cache is not None else None
        written = self._written.get(key)
        if written is None:
            return cached
        if cached is not None and cached.mod_revision >= written.mod_revision:
            del self._written[key]  # the cache has caught up with it
            return cached
        return written

    def _remember(self, kv: KeyValue) -> None:
        """Keep this server's latest write of a key: a controller often writes an object again right away,
        before the watch cache has seen the first write (on etcd it arrives a round trip later). Writes
        the cache has applied are dropped from the oldest end, so this holds about a round trip's worth
        of writes and costs O(1) per write however far the cache lags (a scan of the whole memo on every
        write cost a fifth of a create's CPU on etcd, where the cache lags by thousands under load)."""
        written = self._written
        if self.cache is not None and kv.mod_revision <= self.cache.revision:
            # the cache has it already (it applies an in-process storage's writes as they are made)
            written.pop(kv.key, None)
        else:
            written[kv.key] = kv
            written.move_to_end(kv.key)
        if written and self.cache is not None:
            seen = self.cache.revision
            while written:
                key, oldest = next(iter(written.items()))
                if oldest.mod_revision > seen:
                    break
                del written[key]
        if len(written) > WRITTEN_CAPACITY:  # the cache is not following (restarting)
            written.popitem(last=False)

    def _go_printed(self, obj: Object) -> Object:
        """A built-in kind's object as kube stores and answers it: through its Go struct (encoding.goprint),
        so that a non-omitempty field left out is printed at its zero value, as kube's answer shows it."""
        return obj if self._go_type is None else go_printed(obj, self._go_type)

    def _refuse_invalid(self, obj: Object, causes: Sequence[Cause]) -> None:
        """422 Invalid for what the strategy's Validate or ValidateUpdate found (kube's BeforeCreate and
        BeforeUpdate), named after the object. Its causes are kube's field.Errors: one without a field is on
        the whole object (``field.NewPath("")``)."""
        if causes:
            raise errors.invalid(
                self.resource.kind,
                self.resource.group,
                str(obj["metadata"].get("name", "")),
                [errors.StatusCause(c.reason, c.message, c.field) for c in causes],
                empty_paths=True,
            )

    def _prepare_update(self, current: Object, desired: Object, subresource: str) -> Object:
        has_status = self.resource.storage_version.status_subresource
        if subresource == "status":
            updated = deep_copy(current)
            if "status" in desired:
                updated["status"] = desired["status"]
            else:
                updated.pop("status", None)
            managed = (desired.get("metadata") or {}).get("managedFields")
            if managed is not None:  # the status writer's ownership, recorded by the field manager
                updated["metadata"]["managedFields"] = managed
            elif "managedFields" in updated["metadata"]:
                del updated["metadata"]["managedFields"]
            return updated
        updated = desired
        if has_status:
            if "status" in current:
                updated["status"] = current["status"]
            else:
                updated.pop("status", None)
        metadata = updated.setdefault("metadata", {})
        old_metadata = current["metadata"]
        self._refuse_invalid(updated, identity_changes(metadata, old_metadata))
        for field in _IMMUTABLE_METADATA:
            if field in old_metadata:
                metadata[field] = old_metadata[field]
            else:
                metadata.pop(field, None)
        metadata["resourceVersion"] = old_metadata["resourceVersion"]
        if subresource:  # one of the strategy's update_subresources (status and scale are not here)
            self.strategy.prepare_for_subresource_update(subresource, updated, current)
        else:
            self.strategy.prepare_for_update(updated, current)
        self._refuse_invalid(updated, self.strategy.validate_update(updated, current))
        self.strategy.canonicalize(updated)
        if old_metadata.get("deletionTimestamp"):
            new_finalizers = [
                f
                for f in metadata.get("finalizers") or []
                if f not in (old_metadata.get("finalizers") or [])
            ]
            if new_finalizers:
                raise errors.invalid(
                    self.resource.kind,
                    self.resource.group,
                    metadata["name"],
                    [
                        errors.StatusCause(
                            "FieldValueForbidden",
                            "Forbidden: no new finalizers can be added if the object is being deleted",
                            "metadata.finalizers",
                        )
                    ],
                )
        changed = (
            spec_of(updated) != spec_of(current)
            if has_status
            else {k: v for k, v in updated.items() if k != "metadata"}
            != {k: v for k, v in current.items() if k != "metadata"}
        )
        if changed and self.sets_generation:
            metadata["generation"] = int(old_metadata.get("generation", 1)) + 1
        return updated

    def _finalized(self, obj: Object) -> bool:
        metadata = obj.get("metadata") or {}
        if not metadata.get("deletionTimestamp") or metadata.get("finalizers"):
            return False
        return not self.strategy.finalized_later(obj)

    async def delete(
        self,
        namespace: str | None,
        name: str,
        *,
        uid_precondition: str = "",
        version_precondition: str = "",
        dry_run: bool = False,
        options: WriteOptions | None = None,
        propagation: Propagation = DEFAULT_PROPAGATION,
    ) -> tuple[Object, bool]:
        """Delete now, or mark for deletion while finalizers remain; returns (object, deleted now).
        ``propagation`` (the request's policy) may add or remove the garbage collector's finalizers first,
        as kube's store does on every delete, including one of an object already being deleted."""
        key = object_key(self.resource, namespace, name)
        options = options if options is not None else WriteOptions()
        write = self._write(namespace, name, Operation.DELETE, None, dry_run=dry_run)
        while True:
            kv = await self.storage.get(key)
            if kv is None:
                raise self._not_found(name)
            current = self.codec.decode(kv)
            validating = validate_admission(None, current, write, self.admission, options)
            if validating is not None:
                await validating
            metadata = current["metadata"]
            self._check_uid(name, uid_precondition, metadata)
            if version_precondition and version_precondition != metadata["resourceVersion"]:
                raise self._conflict(
                    name,
                    "Precondition failed: ResourceVersion in precondition: "
                    f"{version_precondition}, ResourceVersion in object meta: "
                    f"{metadata['resourceVersion']}",
                )
            finalizers = list(metadata.get("finalizers") or [])
            changed = propagation.finalizers(finalizers, self.strategy.garbage_collection_policy)
            finalized_later = self.strategy.finalized_later(current)
            if changed is not None or finalizers or finalized_later:
                if metadata.get("deletionTimestamp") and changed is None:
                    return current, False
                marked = deep_copy(current)
                if changed is not None:
                    if changed:
                        marked["metadata"]["finalizers"] = changed
                    else:
                        marked["metadata"].pop("finalizers", None)
                if (finalizers if changed is None else changed) or finalized_later:
                    # kube's markAsDeleting: the first delete sets the timestamp, later ones keep it; a
                    # kind that finalizes itself (kube's own Delete of namespaces and CRDs) sets no grace
                    if not metadata.get("deletionTimestamp"):
                        marked["metadata"]["deletionTimestamp"] = now_rfc3339()
                        if not finalized_later:
                            marked["metadata"]["deletionGracePeriodSeconds"] = 0
                        self.strategy.prepare_for_deletion(marked)
                    if dry_run:
                        return marked, False
                    try:
                        stored = await self.storage.update(
                            key,
                            self.codec.encode(key, marked),
                            kv.mod_revision,
                            create_revision=kv.create_revision,
                        )
                    except (RevisionConflictError, KeyNotFoundError):
                        continue
                    self._remember(stored)
                    self._offer(stored, marked)
                    return codec.as_stored(marked, stored), False
                # this delete's policy took away the only finalizers (a GC one): it goes now
            if dry_run:
                return current, True
            try:
                deleted = await self.storage.delete(key, kv.mod_revision)
            except (RevisionConflictError, KeyNotFoundError):
                continue
            self._written.pop(key, None)
            self._offer(deleted, current)  # a deletion's event carries the value deleted
            gone = self.codec.decode(deleted)
            await self.strategy.after_delete(gone)
            return gone, True

    # -- watch -------------------------------------------------------------------------------------

    def open_watch(
        self,
        namespace: str | None,
        after_revision: int,
        predicate: Predicate | None,
        *,
        metadata_only: bool = False,
    ) -> StoreWatch:
        """Changes after ``after_revision``, taken in batches; see StoreWatch. ``metadata_only``: each
        event's object is its ``metadata_view`` (kube's metadata informers), with no selector."""
        if metadata_only and predicate is not None:
            raise ValueError("a metadata-only watch has no selector")
        prefix = key_prefix(self.resource, namespace if self.resource.namespaced else None)
        source = (
            self.cache.watch(prefix, after_revision)
            if self.cache is not None
            else self.storage.watch(prefix, after_revision)
        )
        if not isinstance(source, WatchStream):
            source = PumpedStream(source, prefix, after_revision, DEFAULT_WATCH_CAPACITY)
        return StoreWatch(self, source, predicate, after_revision, metadata_only=metadata_only)

    async def watch(
        self,
        namespace: str | None,
        after_revision: int,
        predicate: Predicate | None,
        *,
        metadata_only: bool = False,
    ) -> AsyncGenerator[WatchEvent, None]:
        """Changes after ``after_revision`` one at a time; raises APIError 410 Expired when history no
        longer covers it."""
        changes = self.open_watch(namespace, after_revision, predicate, metadata_only=metadata_only)
        try:
            while (batch := await changes.batch(WATCH_BATCH)) is not None:
                for event in batch:
                    yield event
        finally:
            await changes.close()

    def shared_decode(self, kv: KeyValue) -> Object:
        """The decoded object of a watched key-value, shared by every watcher of the same event: decoding
        once instead of once per watcher is what makes fan-out to many watchers affordable. Callers treat
        it as read-only."""
        memo_key = (kv.key, kv.mod_revision)
        obj = self._decoded.get(memo_key)
        if obj is None:
            obj = self.codec.decode(kv)
            # kept only for other watchers: an object kept alive for nobody is what Python's collector
            # scans (most kinds have one watcher, the garbage collector's informer)
            if self._watches > 1:
                if len(self._decoded) >= DECODED_CAPACITY:
                    self._decoded.clear()
                self._decoded[memo_key] = obj
        return obj

    def shared_change(self, event: StorageEvent) -> WatchEvent:
        """The watch event of ``event`` for a watcher without a selector, made once for all of them."""
        last = self._last_change
        if last is not None and last[0] is event:
            return last[1]
        change = _watch_event(event, self.shared_decode(event.kv))
        self._last_change = (event, change)
        return change

    def _offer(self, kv: KeyValue, obj: Object) -> None:
        """Keep the metadata view of a write this store just made (``kv`` holds ``obj`` encoded, or the
        deleted value ``obj`` was decoded from) for its metadata-only watchers: made from the object at
        hand, the view spares them decoding the stored bytes again. Only when the codec vouches that
        reading ``kv`` back prunes nothing: the view is then the one the decoded value would give."""
        if not self._view_watches or not self.codec.unpruned(kv):
            return
        views = self._views
        if len(views) >= DECODED_CAPACITY:  # views of events nobody took (a watch that ended)
            views.clear()
        views[(kv.key, kv.mod_revision)] = metadata_view(obj, str(kv.mod_revision))

    def view_change(self, event: StorageEvent) -> WatchEvent:
        """The watch event of ``event`` for a metadata-only watcher: the view this store made when it
        wrote the value (taken for good when one such watcher follows the store), else one made from the
        value decoded (a write of another replica, a replay, a value the codec cannot vouch for)."""
        kv = event.kv
        memo_key = (kv.key, kv.mod_revision)
        views = self._views
        view = views.pop(memo_key, None) if self._view_watches == 1 else views.get(memo_key)
        if view is None:
            view = metadata_view(self.shared_decode(kv), str(kv.mod_revision))
        return _watch_event(event, view)

    async def current_revision(self) -> int:
        return await self.storage.current_revision()


def _watch_event(event: StorageEvent, obj: Object) -> WatchEvent:
    """The watch event of a storage event seen by a watcher without a selector, carrying ``obj``."""
    if event.type is EventType.DELETE:
        return WatchEvent("DELETED", obj, event.kv.mod_revision)
    return WatchEvent("ADDED" if event.prev is None else "MODIFIED", obj, event.kv.mod_revision)


class StoreWatch:
    """One client watch of a store: storage events become API watch events (decoded once for every
    watcher, filtered by the watcher's selector), taken in batches by a consumer that also wants to be
    woken without an event (``poke``: bookmarks, deadlines, the client leaving)."""

    def __init__(
        self,
        store: Store,
        stream: WatchStream,
        predicate: Predicate | None,
        after_revision: int,
        *,
        metadata_only: bool = False,
    ) -> None:
        self._store = store
        self._stream = stream
        self._predicate = predicate
        self._after_revision = after_revision
        self._open = True
        self._metadata_only = metadata_only
        if metadata_only:
            store._view_watches += 1
        else:
            store._watches += 1
        # the last revision taken, shown or hidden: a bookmark may carry it, which is what lets a watcher
        # whose selector hides everything still resume near the head (kube's cacheWatcher does the same)
        self.processed_revision = after_revision

    async def batch(self, limit: int) -> list[WatchEvent] | None:
        """The next events (at most ``limit``), None once the watch has ended. [] after a poke, or when
        the selector hides every event taken: the consumer checks its timers and calls again (a poke that
        woke the stream along with hidden events must not be swallowed)."""
        try:
            events = await self._stream.batch(limit)
        except CompactedError as error:
            raise errors.expired(
                f"too old resource version: {self._after_revision} ({error.compact_revision})"
            ) from None
        if events is None:
            return None
        if events:
            self.processed_revision = events[-1].revision
        return [change for change in map(self._change, events) if change is not None]

    def poke(self) -> None:
        self._stream.poke()

    def listen(self, deliver: Callable[[list[WatchEvent]], bool]) -> None:
        """Hand live events to ``deliver`` as they are published while the consumer is parked in batch()
        (False from it leaves them for batch()): with a thousand watchers, a task wake-up per watcher and
        event costs as much as the write itself."""

        def take(events: list[StorageEvent]) -> bool:
            shown = [change for change in map(self._change, events) if change is not None]
            taken = not shown or deliver(shown)
            if taken:
                self.processed_revision = events[-1].kv.mod_revision
            return taken

        def take_views(events: list[StorageEvent]) -> bool:
            """``take`` of a metadata-only watch, which hides nothing: a view per event."""
            if deliver(list(map(self._store.view_change, events))):
                self.processed_revision = events[-1].kv.mod_revision
                return True
            return False

        self._stream.listener = take_views if self._metadata_only else take

    async def close(self) -> None:
        if self._open:
            self._open = False
            if self._metadata_only:
                self._store._view_watches -= 1
            else:
                self._store._watches -= 1
        await self._stream.close()

    def _change(self, event: StorageEvent) -> WatchEvent | None:
        """The watch event this watcher sees for a storage event, or None when its selector hides it."""
        predicate = self._predicate
        if predicate is None:
            if self._metadata_only:
                return self._store.view_change(event)
            return self._store.shared_change(event)
        decode = self._store.shared_decode
        obj = decode(event.kv)
        if event.type is EventType.DELETE:
            return WatchEvent("DELETED", obj, event.revision) if predicate(obj) else None
        kind = "ADDED" if event.prev is None else "MODIFIED"
        now = predicate(obj)
        previous = decode(event.prev) if event.prev else None
        before = previous is not None and predicate(previous)
        if not now and not before:
            return None
        if before and not now and previous is not None:
            # kube's cacheWatcher: an object leaving the selection is DELETED, carrying its previous
            # content (which matched) at the event's resourceVersion
            metadata = {**previous["metadata"], "resourceVersion": str(event.revision)}
            return WatchEvent("DELETED", {**previous, "metadata": metadata}, event.revision)
        if now and not before:
            kind = "ADDED"
        return WatchEvent(kind, obj, event.revision)
