"""The field manager: managedFields on every write, and server-side apply.

kube-apiserver wraps structured-merge-diff's ``merge.Updater`` in a chain of managers
(k8s.io/apimachinery/pkg/util/managedfields/internal fieldmanager.go ``NewDefaultFieldManager``); the
two functions here run the same chain, outermost first:

* version check (apply only): the applied object must be of the endpoint's kind and version;
* last-applied updater and manager (apply by ``kubectl`` only, :mod:`.lastapplied`);
* skip-non-applied: an object whose managed fields are empty is only tracked from its creation or its
  first apply; the first apply gives everything already there to ``before-first-apply``;
* cap: at most 10 Update entries, older ones merged into ``ancient-changes``;
* manager identity (:func:`.managed.identifier`);
* managed-fields updater: an update's fields join the manager's earlier ones and the entry's time is
  the request time, but only if the request changed something;
* strip-meta: system fields are never owned (done inside the walks, :mod:`.typed`);
* ``merge.Updater.Update``/``Apply``.

Neither function mutates its arguments. Results share unchanged subtrees with the inputs.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from apiserver.encoding.protobuf import Message
from apiserver.fieldmanager.conflict import ApplyConflict, Conflict
from apiserver.fieldmanager.created import created_fields
from apiserver.fieldmanager.fieldpath import (
    FieldSet,
    Node,
    c_difference,
    c_intersection,
    c_union,
    path_string,
)
from apiserver.fieldmanager.gotyped import go_view, zero_object
from apiserver.fieldmanager.lastapplied import (
    KUBECTL_MANAGER,
    allowed_conflicts,
    has_last_applied,
    with_last_applied,
)
from apiserver.fieldmanager.managed import (
    APPLY,
    BEFORE_FIRST_APPLY,
    UPDATE,
    Entry,
    ManagedFieldsError,
    cap_update_managers,
    decode_entries,
    encode_entries,
    identifier,
    is_reset,
    normalize_now,
)
from apiserver.fieldmanager.typed import (
    TypedError,
    compare_objects,
    field_set_of,
    merge_objects,
    prune_disowned,
)
from apiserver.fieldmanager.typeinfo import TypeNode, compile_types
from apiserver.machinery.errors import APIError, bad_request, unknown_error
from apiserver.schema.structural import Schema

__all__ = ["apply", "field_set", "set_managed_fields", "update_managed_fields"]

SchemaLike = dict[str, Any] | Schema


def _managed_fields(obj: Any) -> Any:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return meta.get("managedFields") if isinstance(meta, dict) else None


def set_managed_fields(obj: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    """Store ``entries`` as ``obj.metadata.managedFields``, or remove the key when there are none
    (kube omits an empty list). Replaces ``obj["metadata"]`` by a copy rather than mutating it,
    since it may be shared with the stored object."""
    meta = obj.get("metadata")
    meta = dict(meta) if isinstance(meta, dict) else {}
    if entries:
        meta["managedFields"] = entries
    else:
        meta.pop("managedFields", None)
    obj["metadata"] = meta


def field_set(obj: dict[str, Any], schema: SchemaLike) -> FieldSet:
    """The fields ``obj`` sets, as an applier of ``obj`` would own them (SMD ``ToFieldSet``, without
    the fields nobody owns). Raises :class:`~apiserver.fieldmanager.typed.TypedError`."""
    return FieldSet(field_set_of(obj, compile_types(schema)))


def _record_update(
    managed: dict[str, Entry],
    live: dict[str, Any],
    new: dict[str, Any],
    root: TypeNode,
    manager: str,
    api_version: str,
    subresource: str,
    now: str,
    ignored: Collection[str],
) -> None:
    """``merge.Updater.Update`` behind the managed-fields updater, in place on ``managed``.

    The request takes every field it added or changed, from whoever owned it; fields it removed
    leave every set; the manager's entry keeps its earlier fields and gets ``now`` as its time, but
    only when the request took something.
    """
    created = created_fields(live, new, root, ignored)
    if created is not None and not managed:
        # a create that brings no entries: everything it sets is its manager's, in one new entry
        # (what the general case below comes to, without its set algebra)
        if created:
            key = identifier(manager, UPDATE, api_version, subresource)
            managed[key] = Entry(manager, UPDATE, api_version, subresource, now, created, created)
        return
    nothing: Node = {}
    added, modified, removed = (
        (created, nothing, nothing)
        if created is not None
        else compare_objects(live, new, root, ignored)
    )
    if not (added or modified or removed):
        return
    taken = c_union(added, modified)
    lost = c_union(taken, removed)
    key = identifier(manager, UPDATE, api_version, subresource)
    previous = managed.get(key)
    # A manager that only changed fields it owns keeps its set, (fields - taken) | taken being
    # fields; keeping the very object keeps its stored encoding too. This is the common update.
    kept = (
        previous
        if previous is not None and not removed and not c_difference(taken, previous.fields)
        else None
    )
    for other, entry in list(managed.items()):
        if entry is kept:
            continue
        remaining = c_difference(entry.fields, lost)
        if remaining is entry.fields:
            continue
        if remaining:
            managed[other] = entry.with_fields(remaining)
        else:
            del managed[other]
    if kept is not None:
        managed[key] = kept.with_fields(kept.fields, now)
        return
    current = c_difference(taken, removed)
    if not current:
        return
    previous = managed.get(key)
    if previous is None:
        # a set that created_fields built is in FieldsV1's order: it is its own encoding
        source = current if current is created else None
        managed[key] = Entry(manager, UPDATE, api_version, subresource, now, current, source)
    else:
        managed[key] = previous.with_fields(c_union(previous.fields, current), now)


def _created_set(
    new: dict[str, Any], root: TypeNode, ignored: Collection[str], go_type: Message | None
) -> Node | None:
    """What a create that brings no entries adds (raises ``TypedError``); None when the kind's Go zero
    value names something, so that the create is compared as an update is."""
    if go_type is None:
        return created_fields({}, new, root, ignored)
    return created_fields(zero_object(go_type), go_view(new, go_type), root, ignored)


def _created_entries(
    fields: Node, manager: str, api_version: str, subresource: str, now: str
) -> list[dict[str, Any]]:
    """The encoded ``managedFields`` of that create: one Update entry holding ``fields`` (what
    ``_record_update``, the cap and ``encode_entries`` come to, without building their entries)."""
    if not fields:
        return []
    entry = {
        "manager": manager or "unknown",  # buildmanagerinfo.go
        "operation": UPDATE,
        "apiVersion": api_version,
        "time": normalize_now(now),
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    if subresource:
        entry["subresource"] = subresource
    return [entry]


def _decode_live(raw: Any) -> dict[str, Entry]:
    try:
        return decode_entries(raw, trusted=True)
    except ManagedFieldsError:
        return {}


def update_managed_fields(
    old_obj: dict[str, Any] | None,
    new_obj: dict[str, Any],
    schema: SchemaLike,
    manager: str,
    *,
    api_version: str,
    now: str,
    subresource: str = "",
    ignored_fields: Collection[str] = (),
    go_type: Message | None = None,
) -> list[dict[str, Any]]:
    """The ``managedFields`` to store for a create, update or (non-apply) patch.

    ``old_obj`` is the stored object (``None`` on create) and ``new_obj`` the object about to be
    stored, after defaulting (kube runs the field manager after decoding, so defaults belong to the
    writer). ``manager`` is the ``fieldManager`` query parameter, or the user agent's first segment;
    an empty name becomes ``unknown``. ``now`` is an RFC 3339 time. ``ignored_fields`` are top-level
    fields the endpoint resets (``status`` on the main resource of a kind with a status subresource,
    ``spec`` on ``/status``): nobody gains or loses them here.

    ``new_obj.metadata.managedFields`` is honoured as kube does (fieldmanager.go
    ``decodeLiveOrNew``): ``[]`` or ``[{}]`` clears them; a list that decodes and differs from the
    stored one replaces it before the write is recorded (kubectl's client-side to server-side apply
    migration writes them that way); a list that does not decode is ignored. Requests to a
    subresource never set them. An existing object whose managed fields are empty stays untracked
    (skipnonapplied.go) until it is applied to. If the objects cannot be typed (a list item without
    its key), the stored managed fields are kept, like ``UpdateNoErrors``.

    ``go_type`` is a built-in kind's Go struct (its protobuf message): both objects are then compared as
    kube's Go decoding has them, and a create compares with the type's zero value (:mod:`.gotyped`).
    """
    root = compile_types(schema)
    if old_obj is None and _managed_fields(new_obj) is None:
        try:
            created = _created_set(new_obj, root, ignored_fields, go_type)
        except TypedError:
            return []  # not typed: nothing is recorded, as UpdateNoErrors keeps the (absent) entries
        if created is not None:
            return _created_entries(created, manager, api_version, subresource, now)
    live_raw = _managed_fields(old_obj)
    if subresource:
        managed = _decode_live(live_raw)
    else:
        request_raw = _managed_fields(new_obj)
        if is_reset(request_raw):
            managed = {}
        elif request_raw is None or request_raw is live_raw or request_raw == live_raw:
            managed = _decode_live(live_raw)
        else:
            try:
                managed = decode_entries(request_raw, trusted=False)
            except ManagedFieldsError:
                managed = {}
            if not managed:
                managed = _decode_live(live_raw)
    if not managed and old_obj is not None:
        return []
    live: dict[str, Any] = old_obj if old_obj is not None else {}
    if go_type is not None:
        live = go_view(old_obj, go_type) if old_obj is not None else zero_object(go_type)
        new_obj = go_view(new_obj, go_type)
    try:
        _record_update(
            managed,
            live,
            new_obj,
            root,
            manager or "unknown",
            api_version,
            subresource,
            normalize_now(now),
            ignored_fields,
        )
    except TypedError:
        return list(live_raw) if isinstance(live_raw, list) else []
    cap_update_managers(managed)
    return encode_entries(managed)


def _gvk(api_version: str, kind: str) -> str:
    # schema.GroupVersionKind.String(): "group/version, Kind=Kind", the group empty for core.
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={kind}"


def _typed_error(what: str, obj: dict[str, Any], err: TypedError) -> APIError:
    # structuredmerge.go wraps these in a plain error, which the apiserver answers with a 500 whose
    # reason is empty (StatusReasonUnknown).
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    where = (
        f"{meta.get('namespace') or ''}/{meta.get('name') or ''}; "
        f"{_gvk(str(obj.get('apiVersion') or ''), str(obj.get('kind') or ''))}"
    )
    return unknown_error(f"failed to create typed {what} object ({where}): {err.message}")


def _conflicts(others: list[tuple[Entry, Node]]) -> list[Conflict]:
    conflicts: list[Conflict] = []
    for entry, fields in sorted(
        others,
        key=lambda pair: identifier(
            pair[0].manager, pair[0].operation, pair[0].api_version, pair[0].subresource
        ),
    ):
        for path in FieldSet(fields).paths():
            conflicts.append(
                Conflict(
                    entry.manager,
                    entry.api_version,
                    path_string(path),
                    entry.operation,
                    entry.subresource,
                    path,
                )
            )
    return conflicts


def _apply_once(
    managed: dict[str, Entry],
    live: dict[str, Any],
    applied: dict[str, Any],
    applied_fields: Node,
    root: TypeNode,
    manager: str,
    api_version: str,
    subresource: str,
    force: bool,
    now: str,
    ignored: Collection[str],
) -> tuple[dict[str, Any], dict[str, Entry]]:
    """``merge.Updater.Apply`` behind the managed-fields updater; returns the new object and
    managers, or raises :class:`ApplyConflict` (``managed`` is left as it was)."""
    key = identifier(manager, APPLY, api_version, subresource)
    try:
        merged = merge_objects(live, applied, root)
    except TypedError as err:
        raise _typed_error("live", live, err) from None
    last = managed.get(key)
    if last is not None and applied_fields == last.fields:
        applied_fields = last.fields  # unchanged: keep the stored set, so it is not re-encoded
    managers = dict(managed)
    managers[key] = Entry(
        manager,
        APPLY,
        api_version,
        subresource,
        last.time if last else None,
        applied_fields,
        last.source if last else None,
    )
    try:
        if last is not None and last.fields and last.fields is not applied_fields:
            merged = prune_disowned(
                merged,
                root,
                last.fields,
                [entry.fields for entry in managers.values()],
                applied_fields,
            )
        added, modified, removed = compare_objects(live, merged, root, ignored)
    except TypedError as err:
        raise _typed_error("live", live, err) from None
    taken = c_union(added, modified)
    if taken and not force:
        clashes = [
            (entry, both)
            for other, entry in managers.items()
            if other != key and (both := c_intersection(entry.fields, taken))
        ]
        if clashes:
            raise ApplyConflict(_conflicts(clashes))
    lost = c_union(taken, removed)
    if lost:
        for other, entry in list(managers.items()):
            if other == key:
                continue
            remaining = c_difference(entry.fields, lost)
            if remaining is entry.fields:
                continue
            if remaining:
                managers[other] = entry.with_fields(remaining)
            else:
                del managers[other]
    if not applied_fields:
        del managers[key]
    elif (added or modified or removed) or merged != live:
        # The time moves only when the object changed (managedfieldsupdater.go Apply).
        managers[key] = managers[key].with_fields(applied_fields, now)
    return merged, managers


def apply(
    live_obj: dict[str, Any] | None,
    applied_obj: dict[str, Any],
    schema: SchemaLike,
    manager: str,
    *,
    api_version: str,
    force: bool,
    now: str,
    kind: str | None = None,
    subresource: str = "",
    ignored_fields: Collection[str] = (),
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Server-side apply of ``applied_obj`` (the request body) to ``live_obj`` (``None`` to create).

    Returns the object to store, with ``metadata.managedFields`` already set, and those entries. The
    applied configuration is merged into the live object (maps by key, list-type maps by their keys,
    sets by value, atomic lists and maps and scalars replaced); fields this manager applied last time
    and not now are removed unless another manager owns them; the manager then owns exactly what it
    applied. Another manager's field that the apply changes (or adds back) is a conflict: with
    ``force`` it changes hands, without it :class:`ApplyConflict` (a 409 ``APIError``) is raised.

    Raises ``APIError`` 400 when ``applied_obj`` is not of ``api_version`` (and ``kind``, when
    given) or carries ``metadata.managedFields``; 500 when a list item lacks its key or repeats
    one (kube's "failed to create typed patch object"). ``ignored_fields`` are as for
    :func:`update_managed_fields`: merged, but never owned or conflicting; the caller resets them.
    The caller also keeps immutable metadata (``uid``, ``creationTimestamp``...) and checks a
    ``resourceVersion`` the configuration may carry, as kube's strategies do after the merge, and
    defaults the result (kube defaults after the merge, so defaults are nobody's).

    The result shares unchanged subtrees with ``live_obj`` and ``applied_obj``: a caller that mutates
    it in place (defaulting, pruning) must own ``live_obj``, e.g. because it decoded it for this
    request; an object held by a cache has to be copied first (as with :mod:`apiserver.patch.jsonpatch`).
    """
    # versioncheck.go runs first, then structuredmerge.go's managedFields check.
    if applied_obj.get("apiVersion") != api_version or (
        kind is not None and applied_obj.get("kind") != kind
    ):
        raise bad_request(
            "invalid object type: "
            + _gvk(str(applied_obj.get("apiVersion") or ""), str(applied_obj.get("kind") or ""))
        )
    meta = applied_obj.get("metadata")
    if isinstance(meta, dict) and meta.get("managedFields") is not None:
        raise bad_request("metadata.managedFields must be nil")
    root = compile_types(schema)
    now = normalize_now(now)
    manager = manager or "unknown"  # buildmanagerinfo.go
    try:
        applied_fields = field_set_of(applied_obj, root, ignored_fields)
    except TypedError as err:
        raise _typed_error("patch", applied_obj, err) from None

    if live_obj is None:
        live: dict[str, Any] = {"apiVersion": api_version}
        if kind is not None:
            live["kind"] = kind
        managed: dict[str, Entry] = {}
    else:
        live = live_obj
        try:
            managed = decode_entries(_managed_fields(live_obj), trusted=True)
        except ManagedFieldsError as err:
            raise APIError(500, "", f"failed to decode managed fields: {err}") from None
        if not managed:
            # skipnonapplied.go: whoever wrote the untracked object's fields gets them now.
            try:
                _record_update(
                    managed,
                    {},
                    live,
                    root,
                    BEFORE_FIRST_APPLY,
                    api_version,
                    subresource,
                    now,
                    ignored_fields,
                )
            except TypedError as err:
                raise _typed_error("live", live, err) from None
            cap_update_managers(managed)

    def run(forced: bool) -> tuple[dict[str, Any], dict[str, Entry]]:
        return _apply_once(
            managed,
            live,
            applied_obj,
            applied_fields,
            root,
            manager,
            api_version,
            subresource,
            forced,
            now,
            ignored_fields,
        )

    try:
        merged, managers = run(force)
    except ApplyConflict as conflict:
        if manager != KUBECTL_MANAGER or live_obj is None:
            raise
        allowed = allowed_conflicts(live_obj, root, api_version, ignored_fields)
        if allowed is None:
            raise
        allowed_set = FieldSet(allowed)
        remaining = [c for c in conflict.conflicts if not allowed_set.has(c.path)]
        if remaining:
            raise ApplyConflict(remaining) from None
        merged, managers = run(True)

    if manager == KUBECTL_MANAGER and has_last_applied(merged):
        merged = with_last_applied(merged, applied_obj)
    else:
        merged = dict(merged)  # the caller gets its own top level even when nothing changed
    entries = encode_entries(managers)
    set_managed_fields(merged, entries)
    return merged, entries
