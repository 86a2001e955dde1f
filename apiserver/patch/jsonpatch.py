"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902) of plain JSON documents.

Neither function modifies its inputs. Both copy only what they change: containers on the path of each
change are copied, everything else in the result is shared with ``target`` (and, for merge patch,
values are shared with ``patch``). Callers that then mutate the result in place (defaulting, pruning)
must own ``target``, e.g. because they decoded it from stored bytes for this request; an object held
by a cache has to be copied first.

Failures raise :class:`PatchError`, whose ``message`` is the text kube-apiserver's JSON patch library
(gopkg.in/evanphx/json-patch.v4, used by k8s.io/apiserver pkg/endpoints/handlers/patch.go) produces for
the same failure, and whose ``code`` is the HTTP status kube answers with: 400 when the body is not a
list of operation objects (``DecodePatch`` fails), 413 past 10,000 operations, and 422 when applying an
operation fails (a failed ``test``, a missing path, a malformed operation, ``copy`` operations that together
copy more than :data:`MAX_COPY_BYTES`). For 422 kube's Status
message is the generic :data:`INVALID_PATCH_STATUS_MESSAGE` and the library text is not sent to the
client (``NewGenericServerResponse(422, ..., isUnexpectedResponse=false)``); :attr:`PatchError.status_message`
gives what kube sends.

A patch's work is bounded as kube bounds it: at most 10,000 operations, and the bytes ``copy`` operations
duplicate add up to at most 3 MiB (the library's ``AccumulatedCopySizeLimit``, which kube-apiserver sets from
``JSONPatchMaxCopyBytes``), so doubling a list with ``copy`` stops after a few dozen operations instead of
growing exponentially. ``add`` and ``replace`` insert values of the patch itself, bounded by the request size;
``move`` copies nothing. A copy is made by encoding the value once (which measures it) and decoding that,
C-speed rather than a ``deepcopy``. The patched document may not nest deeper than
:data:`~apiserver.encoding.limits.MAX_DEPTH`, the bound of every decoded body (or than the target, where
the server's own fields made that deeper).

Where the RFC and kube's library disagree, this follows the RFC (and the json-patch-tests suite): kube
accepts negative and zero-padded array indexes, ``replace`` of a missing member and operations without
``value``; these are errors here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import jsonpatch
import jsonpointer
import orjson

from apiserver.encoding.limits import MAX_DEPTH, TooDeep, depth_exceeds, depth_of
from apiserver.machinery.gojson import go_json_kind

__all__ = [
    "INVALID_PATCH_STATUS_MESSAGE",
    "MAX_COPY_BYTES",
    "MAX_JSON_PATCH_OPERATIONS",
    "PatchError",
    "apply_json_patch",
    "apply_merge_patch",
]

# errors.NewGenericServerResponse(http.StatusUnprocessableEntity, ...).
INVALID_PATCH_STATUS_MESSAGE: Final = (
    "the server rejected our request due to an error in our request"
)
# handlers/patch.go maxJSONPatchOperations.
MAX_JSON_PATCH_OPERATIONS: Final = 10000
# k8s.io/apiserver pkg/server/config.go NewConfig: JSONPatchMaxCopyBytes, which GenericAPIServer installs as
# json-patch's AccumulatedCopySizeLimit ("we allow 2x [etcd's 1.5 MiB] as the largest size increase the copy
# operations in a json patch may cause").
MAX_COPY_BYTES: Final = 3 * 1024 * 1024

_KINDS: Final = frozenset({"add", "remove", "replace", "move", "copy", "test"})


class PatchError(ValueError):
    """A patch that can't be applied; ``code`` is the HTTP status kube-apiserver answers with."""

    def __init__(self, message: str, code: int = 422) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    @property
    def status_message(self) -> str:
        """The ``message`` of kube's Status for this failure (generic for 422, as kube sends it)."""
        return INVALID_PATCH_STATUS_MESSAGE if self.code == 422 else self.message


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: members of an object ``patch`` replace those of ``target``, recursively; ``null``
    removes a member; any other ``patch`` (array, scalar, null) replaces ``target`` entirely.

    kube-apiserver only takes an object here: it answers 400 "Invalid JSON Patch" to a ``null`` or
    scalar body, which callers check before calling.
    """
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            result[key] = apply_merge_patch(result.get(key), value)
        else:
            result[key] = value
    return result


def apply_json_patch(target: Any, ops: Any) -> Any:
    """RFC 6902: apply the operations in ``ops`` (decoded JSON) in order, all or nothing."""
    if not isinstance(ops, list):
        kind = go_json_kind(ops)
        if ops is None:
            return target  # json.Unmarshal of null leaves the patch empty
        raise PatchError(
            f"json: cannot unmarshal {kind} into Go value of type jsonpatch.Patch", 400
        )
    for op in ops:
        if op is not None and not isinstance(op, Mapping):
            raise PatchError(
                f"json: cannot unmarshal {go_json_kind(op)} into Go value of type jsonpatch.Operation",
                400,
            )
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise PatchError(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(ops)}",
            413,
        )
    state = _State()
    doc = target
    try:
        for op in ops:
            doc = _apply(doc, op if op is not None else {}, state)
    except RecursionError:  # only a document grown deeper than any decoded body gets here
        raise PatchError(str(TooDeep("["))) from None
    if state.shared:
        doc = orjson.loads(_encode(doc))  # each copied value its own containers
    if state.inserted_containers:
        _check_depth(doc, target)
    return doc


def _check_depth(doc: Any, target: Any) -> None:
    """The patched document may not nest deeper than a decoded body, unless the target already did (the
    server's ``managedFields.fieldsV1`` mirror the object four levels down): then not deeper than it."""
    opening = depth_exceeds(doc, MAX_DEPTH)
    if opening is not None:
        opening = depth_exceeds(doc, max(MAX_DEPTH, depth_of(target)))
    if opening is not None:
        raise PatchError(str(TooDeep(opening)))


class _State:
    """What one patch has done so far: the containers it copied (and may change in place), the bytes its
    ``copy`` operations duplicated, whether a copied value is shared by two places, and whether it
    inserted an object or array (which can deepen the document)."""

    __slots__ = ("copied_bytes", "inserted_containers", "owned", "shared")

    def __init__(self) -> None:
        self.owned: dict[int, Any] = {}
        self.copied_bytes = 0
        self.shared = False
        self.inserted_containers = False


def _parts(pointer: Any) -> list[str] | None:
    """The unescaped tokens of a JSON pointer, or None if it is not one."""
    if not isinstance(pointer, str):
        return None
    try:
        return list(jsonpointer.JsonPointer(pointer).parts)
    except jsonpointer.JsonPointerException:
        return None


def _apply(doc: Any, op: Mapping[str, Any], state: _State) -> Any:
    kind = op.get("op")
    if not isinstance(kind, str) or kind not in _KINDS:
        raise PatchError(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")
    if kind in ("move", "copy") and op.get("from") is None:
        # evanphx decodes "from" before "path" for these two.
        raise PatchError(
            f"{kind} operation failed to decode from: operation, missing from field: missing value"
        )
    path = op.get("path")
    if not isinstance(path, str):
        if kind in ("add", "remove", "copy"):
            detail = "missing value"
        elif path is None:
            detail = "operation missing path field: missing value"
        else:
            detail = f"json: cannot unmarshal {go_json_kind(path)} into Go value of type string"
        raise PatchError(f"{kind} operation failed to decode path: {detail}")
    parts = _parts(path)
    if parts is None:
        raise PatchError(_missing_path(kind, path))
    if kind in ("add", "replace", "test") and "value" not in op:
        raise PatchError(
            f"{kind} operation failed to decode value: operation, missing value field: missing value"
        )
    if kind == "test":
        return _run(doc, op, kind, path)
    if kind in ("move", "copy"):
        frm = op.get("from")
        from_parts = _parts(frm)
        if from_parts is None or not isinstance(frm, str):
            raise PatchError(
                f"{kind} operation does not apply: doc is missing from path: {frm}: missing value"
            )
        state.inserted_containers = True
        if kind == "move":
            return _move(doc, frm, from_parts, path, parts, state.owned)
        return _copy(doc, op, from_parts, parts, state)
    if kind == "remove":
        return _run(_own(doc, parts, state.owned), op, kind, path)
    value = op["value"]
    if isinstance(value, dict | list):
        state.inserted_containers = True
        value = orjson.loads(_encode(value))  # the result must not share the patch's containers
    return _put(_own(doc, parts, state.owned), parts, value, op, kind)


def _put(doc: Any, parts: list[str], value: Any, op: Mapping[str, Any], kind: str) -> Any:
    """``add`` or ``replace`` of ``value``, in the containers this patch owns. Failures are left to the
    library, whose checks (and messages) :func:`_describe` follows."""
    if not parts:
        return value
    adding = kind != "replace"  # add, or the add that ends a copy
    parent = _walk(doc, parts[:-1])
    key = parts[-1]
    if isinstance(parent, dict) and (adding or key in parent):
        parent[key] = value
        return doc
    if isinstance(parent, list):
        index = len(parent) if key == "-" and adding else _index(key)
        if index is not None and index < len(parent) + adding:
            if adding:
                parent.insert(index, value)
            else:
                parent[index] = value
            return doc
    return _run(doc, op, kind, op["path"])  # fails, with the library's message


def _copy(
    doc: Any, op: Mapping[str, Any], from_parts: list[str], parts: list[str], state: _State
) -> Any:
    """``copy``: the library's order of failures (source, destination, then the accumulated size, which
    kube's ``deepCopy`` measures as the length of the value's JSON). The value is not copied yet: the
    doubling of a list that the limit refuses then costs only its encodings."""
    path = op["path"]
    try:
        value = jsonpointer.JsonPointer.from_parts(from_parts).resolve(doc)
    except (jsonpointer.JsonPointerException, LookupError, TypeError):
        return _run(doc, op, "copy", path)  # fails, with the library's message for the source
    if parts and _walk(doc, parts[:-1]) is None:
        raise PatchError(_missing_path("copy", path))
    encoded = _encode(value)
    state.copied_bytes += _go_json_size(encoded)
    if state.copied_bytes > MAX_COPY_BYTES:
        # evanphx/json-patch v4 errors.go AccumulatedCopySizeError
        raise PatchError(
            "Unable to complete the copy, the accumulated size increase of copy is "
            f"{state.copied_bytes}, exceeding the limit {MAX_COPY_BYTES}"
        )
    # ``value`` is about to be in two places: no container may be changed in place any more (each later
    # change copies its path afresh, this one's too: the path may run through ``value``), and the result
    # is made a tree again at the end
    state.owned.clear()
    state.shared = True
    add = {"op": "add", "path": path, "from": op["from"], "value": value}
    return _put(_own(doc, parts, state.owned), parts, value, add, "copy")


def _encode(value: Any) -> bytes:
    """``value`` as JSON, from which a copy is decoded: C-speed, where ``copy.deepcopy`` is not."""
    try:
        return orjson.dumps(value)
    except TypeError:  # deeper than orjson encodes, far past what a decoded body may nest
        raise PatchError(str(TooDeep("["))) from None


def _go_json_size(encoded: bytes) -> int:
    """The length of encoding/json's output for what orjson encoded as ``encoded``: Go escapes ``<``, ``>``
    and ``&`` (which JSON only has inside strings) as ``\\u003c`` (5 bytes more each) and U+2028/U+2029 as
    ``\\u2028`` (3 more)."""
    size = len(encoded)
    html = size - len(encoded.translate(None, b"<>&"))
    separators = 0
    if b"\xe2\x80" in encoded:  # the lead bytes of both separators
        separators = encoded.count("\u2028".encode()) + encoded.count("\u2029".encode())
    return size + 5 * html + 3 * separators


def _move(
    doc: Any,
    frm: str,
    from_parts: list[str],
    path: str,
    parts: list[str],
    owned: dict[int, Any],
) -> Any:
    """A move is a remove then an add, each owning its own parents: removing an array item shifts the
    indexes the destination path goes through."""
    if from_parts != parts and parts[: len(from_parts)] == from_parts:
        raise PatchError(
            f"move operation does not apply: 'from' {frm} is a parent of 'path' {path}"
        )
    value = _get(doc, from_parts, frm)  # fails for a missing value, even when moved onto itself
    if from_parts == parts:
        return doc
    doc = _run(_own(doc, from_parts, owned), {"op": "remove", "path": frm}, "move", frm)
    return _insert(_own(doc, parts, owned), parts, path, value)


def _get(doc: Any, parts: list[str], frm: str) -> Any:
    try:
        return jsonpointer.JsonPointer.from_parts(parts).resolve(doc)
    except (jsonpointer.JsonPointerException, LookupError, TypeError):
        parent = _walk(doc, parts[:-1])
        if parent is None:
            raise PatchError(
                f"move operation does not apply: doc is missing from path: {frm}: missing value"
            ) from None
        key = parts[-1]
        reason = (
            _bad_index(key)
            if isinstance(parent, list)
            else f"Unable to remove nonexistent key: {key}: missing value"
        )
        raise PatchError(f"error in move for path: '{key}': {reason}") from None


def _insert(doc: Any, parts: list[str], path: str, value: Any) -> Any:
    """Add ``value`` itself at ``parts`` (``add`` would copy it; a moved value needs no copy)."""
    if not parts:
        return value
    parent = _walk(doc, parts[:-1])
    key = parts[-1]
    if isinstance(parent, dict):
        parent[key] = value
        return doc
    if isinstance(parent, list):
        index = len(parent) if key == "-" else _index(key)
        if index is not None and index <= len(parent):
            parent.insert(index, value)
            return doc
        raise PatchError(f"error in move for path: '{path}': {_bad_index(key)}")
    raise PatchError(
        f"move operation does not apply: doc is missing destination path: {path}: missing value"
    )


def _index(token: str) -> int | None:
    """An RFC 6901 array index: digits without leading zeros."""
    if token.isdigit() and token.isascii() and (token == "0" or token[0] != "0"):
        return int(token)
    return None


def _bad_index(token: str) -> str:
    if token.lstrip("-").isdigit():
        return f"Unable to access invalid index: {token}: invalid index referenced"
    return f'strconv.Atoi: parsing "{token}": invalid syntax'


def _walk(doc: Any, parts: list[str]) -> Any:
    """The container at ``parts``, or None when there is none."""
    node = doc
    for token in parts:
        if isinstance(node, dict):
            if token not in node:
                return None
            node = node[token]
        elif isinstance(node, list):
            index = _index(token)
            if index is None or index >= len(node):
                return None
            node = node[index]
        else:
            return None
    return node if isinstance(node, dict | list) else None


def _own(doc: Any, parts: list[str], owned: dict[int, Any]) -> Any:
    """Copy the containers from the root to the parent of ``parts`` that this patch does not own yet,
    so that applying the operation in place leaves ``target`` intact. Returns the (new) root."""
    if not parts or not isinstance(doc, dict | list):
        return doc
    root = node = _owned(doc, owned)
    for token in parts[:-1]:
        if isinstance(node, dict):
            child = node.get(token)
            if not isinstance(child, dict | list):
                break
            node[token] = node = _owned(child, owned)
        elif isinstance(node, list):
            index = _index(token)
            if index is None or index >= len(node) or not isinstance(node[index], dict | list):
                break
            node[index] = node = _owned(node[index], owned)
        else:
            break
    return root


def _owned(container: Any, owned: dict[int, Any]) -> Any:
    if id(container) in owned:
        return container
    copy = dict(container) if isinstance(container, dict) else list(container)
    owned[id(copy)] = copy  # holding it keeps its id from being reused
    return copy


def _run(doc: Any, op: Mapping[str, Any], kind: str, path: str) -> Any:
    try:
        return jsonpatch.JsonPatch([dict(op)]).apply(doc, in_place=True)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError) as exc:
        raise PatchError(_describe(doc, op, kind, path)) from exc


def _missing_path(kind: str, path: str) -> str:
    if kind in ("add", "remove"):
        return f'{kind} operation does not apply: doc is missing path: "{path}": missing value'
    if kind == "test":
        return f"test operation does not apply: is missing path: {path}: missing value"
    if kind == "replace":
        return f"replace operation does not apply: doc is missing path: {path}: missing value"
    return (
        f"{kind} operation does not apply: doc is missing destination path: {path}: missing value"
    )


def _describe(doc: Any, op: Mapping[str, Any], kind: str, path: str) -> str:
    """The evanphx/json-patch message for a failed operation, found by re-reading the document."""
    if kind == "copy":
        from_parts = _parts(op.get("from")) or []
        frm = op.get("from")
        parent = _walk(doc, from_parts[:-1])
        if parent is None or not _has(parent, from_parts[-1] if from_parts else ""):
            return f"copy operation does not apply: doc is missing from path: {frm}: missing value"
    parts = _parts(op.get("path")) or []
    if not parts:
        return "testing value  failed: test failed" if kind == "test" else _missing_path(kind, path)
    parent = _walk(doc, parts[:-1])
    if parent is None:
        return _missing_path(kind, path)
    key = parts[-1]
    if kind == "add" and isinstance(parent, list) and not key.lstrip("-").isdigit():
        return (
            f"error in add for path: '{path}': value was not a proper array index: '{key}': "
            f'strconv.Atoi: parsing "{key}": invalid syntax'
        )
    if kind == "test":
        if isinstance(parent, list) and not _has(parent, key):
            return f"error in test for path: '{path}': {_bad_index(key)}"
        return f"testing value {path} failed: test failed"
    if kind == "remove":
        if isinstance(parent, dict):
            return f"error in remove for path: '{path}': Unable to remove nonexistent key: {key}: missing value"
        return f"error in remove for path: '{path}': {_bad_index(key)}"
    if kind == "replace":
        return f"replace operation does not apply: doc is missing key: {path}: missing value"
    if isinstance(parent, list):
        return f"error in {kind} for path: '{path}': {_bad_index(key)}"
    return f'{kind} operation does not apply: doc is missing path: "{path}": missing value'


def _has(container: Any, token: str) -> bool:
    if isinstance(container, dict):
        return token in container
    index = _index(token)
    return index is not None and index < len(container)
