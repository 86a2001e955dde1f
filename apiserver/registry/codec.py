"""How an internal object is stored and read back: the storage version's JSON, without resourceVersion.

The resourceVersion of a stored object is its key's mod revision (as etcd gives it), so it is never stored in
the value; it is set on every object read. A value is pruned against its version's current schema when read,
as kube's storage decoder does (apiextensions-apiserver pkg/apiserver/customresource_handler.go: the
``schemaCoercingDecoder`` of a CRD's storage; for built-in kinds the typed decoding): a field a schema no
longer declares is not served, though the stored value keeps it until the object is written again.
"""

from __future__ import annotations

import orjson

from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import ResourceType
from apiserver.schema import prune_resource
from apiserver.storage.interface import KeyValue


def encode(resource: ResourceType, obj: Object) -> bytes:
    # the internal form of another resource's view (``stored_as``) is that resource's stored form already
    stored = obj if resource.stored_as else resource.storage_version.from_internal(obj)
    metadata = stored.get("metadata")
    if isinstance(metadata, dict) and "resourceVersion" in metadata:
        stored = {
            **stored,
            "metadata": {k: v for k, v in metadata.items() if k != "resourceVersion"},
        }
    return orjson.dumps(stored)


def decode(resource: ResourceType, kv: KeyValue) -> Object:
    """The internal object for a stored value, whatever version it was stored in."""
    obj: Object = orjson.loads(kv.value)
    stored_version = str(obj.get("apiVersion", "")).rpartition("/")[2]
    # another resource's view (``stored_as``) reads the objects in that resource's stored form, the internal
    # form of every one of its versions
    version = None if resource.stored_as else resource.version(stored_version)
    if version is not None:
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


def as_stored(obj: Object, kv: KeyValue) -> Object:
    """What ``decode(kv)`` returns when ``kv`` holds ``encode(obj)``, without parsing the bytes again (a
    write's response). The internal form is the storage version's (a kind's hub is its storage version),
    and JSON gives back exactly the values it was given, so only the resourceVersion differs. The result
    shares ``obj``'s subtrees."""
    metadata = obj.get("metadata")
    metadata = {**metadata} if isinstance(metadata, dict) else {}
    metadata["resourceVersion"] = str(kv.mod_revision)
    return {**obj, "metadata": metadata}
