"""The request and response objects of the Request and RequestResponse levels: bodies kept as they pass the
audit filter, at most a bounded number of bytes each, then read as kube records them, as JSON whatever the
wire spoke (a YAML body, an apply patch, a protobuf object: their JSON), without ``metadata.managedFields``
when the policy omits them (kube's omitManagedFields, lists item by item)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
import yaml

from apiserver.encoding import kubeyaml, limits, protobuf
from apiserver.encoding.protobuf_meta import (
    DELETE_OPTIONS,
    PARTIAL_OBJECT_METADATA,
    PARTIAL_OBJECT_METADATA_LIST,
    STATUS,
)
from apiserver.machinery.scheme import Scheme

MAX_RECORDED_BODY = 3 * 1024 * 1024
"""The bytes of one body an event may carry (kube-apiserver's request size limit): a larger body, a list
of thousands of objects, is not copied; its event says so with kube's truncation annotation instead."""
TRUNCATED_ANNOTATION = "audit.k8s.io/truncated"
"""kube's truncating backend's mark (plugin/pkg/audit/truncate): the objects were left out for size."""

Codecs = Mapping[tuple[str, str], protobuf.Message]
"""The protobuf message of each (apiVersion, kind) the server speaks; ("", kind) for the meta kinds any
group version may carry."""

_META_CODECS: dict[tuple[str, str], protobuf.Message] = {
    ("", "Status"): STATUS,
    ("", "DeleteOptions"): DELETE_OPTIONS,
    ("", "PartialObjectMetadata"): PARTIAL_OBJECT_METADATA,
    ("", "PartialObjectMetadataList"): PARTIAL_OBJECT_METADATA_LIST,
}


def protobuf_codecs(scheme: Scheme) -> Codecs:
    """The messages of every kind (and its list) with a protobuf codec, and the meta kinds."""
    codecs = dict(_META_CODECS)
    for resource in scheme:
        for version in resource.versions:
            if version.protobuf is not None:
                api_version = resource.api_version(version.name)
                codecs[api_version, resource.kind] = version.protobuf.message
                codecs[api_version, resource.list_kind] = version.protobuf.list
    return codecs


class BodyRecorder:
    """The chunks of one body as they pass, until they exceed ``limit`` bytes: then nothing more is kept."""

    __slots__ = ("chunks", "content_type", "limit", "overflowed", "size")

    def __init__(self, limit: int, content_type: str = "") -> None:
        self.chunks: list[bytes] = []
        self.size = 0
        self.limit = limit
        self.overflowed = False
        self.content_type = content_type

    def add(self, chunk: bytes) -> None:
        if self.overflowed or not chunk:
            return
        self.size += len(chunk)
        if self.size > self.limit:
            self.overflowed = True
            self.chunks.clear()
            return
        self.chunks.append(chunk)

    def as_json(self, codecs: Codecs, omit_managed_fields: bool) -> Any:
        """The body as a JSON value, or None: nothing kept, or bytes that do not read as their type
        (kube records only what its handler could decode)."""
        if self.overflowed or not self.chunks:
            return None
        value = _decode(b"".join(self.chunks), self.content_type, codecs)
        if omit_managed_fields and isinstance(value, dict):
            _drop_managed_fields(value)
        return value


def _decode(body: bytes, content_type: str, codecs: Codecs) -> Any:
    media_type = content_type.split(";", 1)[0].strip().lower()
    try:
        if media_type == protobuf.CONTENT_TYPE:
            return _protobuf(body, codecs)
        if media_type.endswith(
            "yaml"
        ):  # YAML bodies and apply patches (application/apply-patch+yaml)
            return kubeyaml.load_body(body)
        if media_type.endswith("json") or not media_type:
            return limits.load_json(body)
    except (orjson.JSONDecodeError, yaml.YAMLError, protobuf.ProtobufError, limits.DecodedTooLarge):
        return None
    return None


def _protobuf(body: bytes, codecs: Codecs) -> Any:
    unknown = protobuf.decode_envelope(body)
    message = codecs.get((unknown.api_version, unknown.kind)) or codecs.get(("", unknown.kind))
    if message is None:
        return None
    return {
        "kind": unknown.kind,
        "apiVersion": unknown.api_version,
        **protobuf.decode_message(message, unknown.raw),
    }


def _drop_managed_fields(value: dict[str, Any]) -> None:
    items = value.get("items")
    for obj in (*(items if isinstance(items, list) else ()), value):
        metadata = obj.get("metadata") if isinstance(obj, dict) else None
        if isinstance(metadata, dict):
            metadata.pop("managedFields", None)
