"""How an internal object is stored and read back: the storage version's JSON, without resourceVersion.

The resourceVersion of a stored object is its key's mod revision (as etcd gives it), so it is never stored in
the value; it is set on every object read. A value is pruned against its version's current schema when read,
as kube's storage decoder does (apiextensions-apiserver pkg/apiserver/customresource_handler.go: the
``schemaCoercingDecoder`` of a CRD's storage; for built-in kinds the typed decoding): a field a schema no
longer declares is not served, though the stored value keeps it until the object is written again.

Almost every stored value was pruned by the same schema when it was written, so a :class:`Codec` (one per
resource shape) remembers, per key, the last value it encoded from an object the schema leaves as it is;
reading exactly those bytes back skips the prune, and any other value (written before a restart or before
the schema changed, by another replica, or not clean) is pruned as before.
"""

from __future__ import annotations

from collections import OrderedDict

import orjson

from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import ResourceType, VersionType
from apiserver.schema import is_pruned, prune_resource
from apiserver.storage.interface import KeyValue


def encode(resource: ResourceType, obj: Object) -> bytes:
    return orjson.dumps(_stored(resource, obj))


def _stored(resource: ResourceType, obj: Object) -> Object:
    """The stored form of an internal object: its storage version's, without the resourceVersion."""
    # the internal form of another resource's view (``stored_as``) is that resource's stored form already
    stored = obj if resource.stored_as else resource.storage_version.from_internal(obj)
    metadata = stored.get("metadata")
    if isinstance(metadata, dict) and "resourceVersion" in metadata:
        stored = {
            **stored,
            "metadata": {k: v for k, v in metadata.items() if k != "resourceVersion"},
        }
    return stored


def _read_version(resource: ResourceType, obj: Object) -> VersionType | None:
    """The version whose schema a stored object is pruned with: the one it was stored in (None for another
    resource's view, ``stored_as``, which reads the objects in that resource's stored form, the internal form
    of every one of its versions)."""
    stored_version = str(obj.get("apiVersion", "")).rpartition("/")[2]
    return None if resource.stored_as else resource.version(stored_version)


def decode(resource: ResourceType, kv: KeyValue, *, pruned: bool = False) -> Object:
    """The internal object for a stored value, whatever version it was stored in; ``pruned`` when the value
    is known to hold nothing its schema would prune."""
    obj: Object = orjson.loads(kv.value)
    version = _read_version(resource, obj)
    if version is not None and not pruned:
        prune_resource(obj, version.schema)
    if version is not None and not version.storage and resource.converter is None:
        # (a conversion webhook is awaited by the reader: registry.versioning.converted sees the
        # object's own apiVersion and has the webhook convert it from there)
        obj = version.to_internal(obj)
        # the internal form is the storage version's, whichever version the value was written in (a
        # CustomResourceDefinition's storage version can change while its objects stay as they were)
        obj["apiVersion"] = resource.api_version(resource.storage_version.name)
    metadata = obj.setdefault("metadata", {})
    metadata["resourceVersion"] = str(kv.mod_revision)
    return obj


PRUNED_KEYS = 16_384
"""Keys whose last clean write a Codec remembers: the values are mostly the same bytes objects the storage
and the watch cache hold anyway."""


class Codec:
    """encode and decode for one shape of a resource, remembering which stored values need no prune."""

    def __init__(self, resource: ResourceType, capacity: int = PRUNED_KEYS) -> None:
        self.resource = resource
        self._capacity = capacity
        self._pruned: OrderedDict[str, bytes] = OrderedDict()
        self._versions: dict[str, VersionType] = {}
        """The version whose schema a stored object of an apiVersion is checked with (``_read_version``)."""

    def encode(self, key: str, obj: Object) -> bytes:
        """``encode(obj)``, remembered as needing no prune when the storage version's schema would leave the
        stored form as it is (a value that is not stored after all is simply never read back)."""
        stored = _stored(self.resource, obj)
        value = orjson.dumps(stored)
        pruned = self._pruned
        pruned.pop(key, None)
        api_version = stored.get("apiVersion")
        version = self._versions.get(api_version) if isinstance(api_version, str) else None
        if version is None:
            version = _read_version(self.resource, stored)
            if version is not None and isinstance(api_version, str):
                self._versions[api_version] = version  # one per version the resource has
        # asked of the object itself: the check walks a tuple as the list a read parses it as
        if version is not None and is_pruned(stored, version.schema):
            pruned[key] = value
            if len(pruned) > self._capacity:
                pruned.popitem(last=False)
        return value

    def unpruned(self, kv: KeyValue) -> bool:
        """Whether ``kv`` holds the very bytes of this key's last clean encoding: they decode to the object
        that was encoded, which the same schema left as it was."""
        return self._pruned.get(kv.key) == kv.value

    def decode(self, kv: KeyValue) -> Object:
        """``decode(kv)``, without the prune when ``unpruned(kv)``."""
        return decode(self.resource, kv, pruned=self.unpruned(kv))


def as_stored(obj: Object, kv: KeyValue) -> Object:
    """What ``decode(kv)`` returns when ``kv`` holds ``encode(obj)``, without parsing the bytes again (a
    write's response). The internal form is the storage version's (a kind's hub is its storage version),
    and JSON gives back exactly the values it was given, so only the resourceVersion differs. The result
    shares ``obj``'s subtrees."""
    metadata = obj.get("metadata")
    metadata = {**metadata} if isinstance(metadata, dict) else {}
    metadata["resourceVersion"] = str(kv.mod_revision)
    return {**obj, "metadata": metadata}
