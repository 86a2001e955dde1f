"""Response negotiation: the full object, a Table, or PartialObjectMetadata, as the Accept header asks.

kubectl asks for Tables on `get` (§7); metadata-only clients (client-go's metadata informers, `kubectl get`
with `--show-managed-fields` off for some paths) ask for `as=PartialObjectMetadata[List]`. The first media
range we can serve wins; anything else (protobuf) is answered as JSON, which every client also accepts.
"""

from __future__ import annotations

import enum
import functools

from apiserver.endpoints.decode import Target
from apiserver.endpoints.table import partial_metadata, table
from apiserver.machinery.objects import Object


class Output(enum.Enum):
    OBJECT = "object"
    TABLE = "table"
    PARTIAL = "partial"


TABLE_TYPE = b"application/json;as=Table;v=v1;g=meta.k8s.io"
PARTIAL_TYPE = b"application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"
PARTIAL_LIST_TYPE = b"application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
JSON_TYPE = b"application/json"


@functools.lru_cache(maxsize=256)  # a client sends the same Accept header on every request
def negotiate(accept: str) -> Output:
    for media_range in accept.split(","):
        parameters = {
            key.strip(): value.strip()
            for key, _, value in (part.partition("=") for part in media_range.split(";")[1:])
        }
        as_kind = parameters.get("as")
        if as_kind is None:
            if media_range.split(";", 1)[0].strip() in (
                "application/json",
                "*/*",
                "application/*",
                "",
            ):
                return Output.OBJECT
            continue
        if parameters.get("g") != "meta.k8s.io":
            continue
        if as_kind == "Table":
            return Output.TABLE
        if as_kind in ("PartialObjectMetadata", "PartialObjectMetadataList"):
            return Output.PARTIAL
    return Output.OBJECT


def render_object(
    obj: Object, output: Output, target: Target, include_object: str, with_columns: bool = True
) -> tuple[bytes, Object]:
    """(content type, body) for one versioned object."""
    if output is Output.TABLE:
        metadata = {"resourceVersion": obj.get("metadata", {}).get("resourceVersion", "")}
        return TABLE_TYPE, table(
            [obj], target.version, include_object, metadata, with_columns=with_columns
        )
    if output is Output.PARTIAL:
        return PARTIAL_TYPE, partial_metadata(obj)
    return JSON_TYPE, obj


def render_list(
    items: list[Object], output: Output, target: Target, include_object: str, metadata: Object
) -> tuple[bytes, Object]:
    if output is Output.TABLE:
        return TABLE_TYPE, table(items, target.version, include_object, metadata)
    if output is Output.PARTIAL:
        document = {
            "kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": metadata,
            "items": [partial_metadata(obj) for obj in items],
        }
        return PARTIAL_LIST_TYPE, document
    document = {
        "apiVersion": target.api_version,
        "kind": target.resource.list_kind,
        "metadata": metadata,
        "items": items,
    }
    return JSON_TYPE, document


def render_event_object(
    obj: Object, output: Output, target: Target, include_object: str, first: bool
) -> Object:
    """The `object` of one watch event: a one-row Table sends its column definitions only first (§8.2)."""
    return render_object(obj, output, target, include_object, with_columns=first)[1]


def stream_type(output: Output) -> bytes:
    return {Output.TABLE: TABLE_TYPE, Output.PARTIAL: PARTIAL_TYPE}.get(output, JSON_TYPE)
