"""Response negotiation: the full object, a Table, or PartialObjectMetadata, as JSON or Kubernetes protobuf, as the
Accept header asks; and the encoded bodies.

kubectl asks for Tables on `get` (§7); metadata-only clients (client-go's metadata informers) ask for
`as=PartialObjectMetadata[List]`; kubectl 1.32+ and client-go's typed clients ask for protobuf first (§1). The
first media range we can serve wins. Protobuf is served for kinds with a codec (the built-in kinds, whose
definitions declare field numbers) and for PartialObjectMetadata of any kind; a custom resource's plain
protobuf range is skipped, so it is answered in the next range the client accepts, JSON, as kube's custom
resource handler answers it (its StandardSerializers leave protobuf out). Anything else is answered as JSON,
which every client also accepts.
"""

from __future__ import annotations

import enum
import functools
import logging
from dataclasses import dataclass
from typing import Any

import orjson
import yaml

from apiserver.encoding import protobuf
from apiserver.encoding.protobuf_meta import (
    PARTIAL_OBJECT_METADATA,
    PARTIAL_OBJECT_METADATA_LIST,
    STATUS,
)
from apiserver.endpoints.decode import Target
from apiserver.endpoints.table import partial_metadata, table
from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import VersionType

log = logging.getLogger(__name__)


class _GoYAMLDumper(yaml.SafeDumper):
    """go-yaml v2's choice of quotes: a string that cannot be plain is double-quoted (``"1"``), where
    PyYAML would single-quote it."""

    def choose_scalar_style(self) -> str:
        style: str = super().choose_scalar_style()
        return '"' if style == "'" else style


class Output(enum.Enum):
    OBJECT = "object"
    TABLE = "table"
    PARTIAL = "partial"


@dataclass(frozen=True, slots=True)
class Negotiated:
    """What to answer: which view of the object, and whether as protobuf."""

    output: Output
    protobuf: bool = False
    yaml: bool = False
    """The object or list as YAML (``Accept: application/yaml``), as kube serves it."""
    meta_version: str = "v1"
    """The meta.k8s.io version a Table and its rows' PartialObjectMetadata are written in: kube serves v1 and
    v1beta1 Tables (asTable in staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go)."""
    as_list: bool = False
    """PartialObjectMetadataList was asked for (kube answers 406 when the object is not a list, and
    PartialObjectMetadata of a list likewise)."""


JSON_TYPE = b"application/json"
PROTOBUF_TYPE = protobuf.CONTENT_TYPE.encode()
# kube answers a Table or PartialObjectMetadata(List) under its serializer's plain media type, without the
# as/v/g parameters the client asked with (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/
# writers.go: SerializeObject writes the negotiated serializer's MediaType)
TABLE_TYPE = PARTIAL_TYPE = PARTIAL_LIST_TYPE = JSON_TYPE
PROTOBUF_PARTIAL_TYPE = PROTOBUF_PARTIAL_LIST_TYPE = PROTOBUF_TYPE
PROTOBUF_WATCH_TYPE = protobuf.WATCH_CONTENT_TYPE.encode()
_ANY_JSON = ("application/json", "*/*", "application/*", "")
JSON_OBJECT = Negotiated(Output.OBJECT)
YAML_OBJECT = Negotiated(Output.OBJECT, yaml=True)
YAML_TYPE = b"application/yaml"


_META_VERSIONS = ("v1", "v1beta1")
_PARTIAL_KINDS = ("PartialObjectMetadata", "PartialObjectMetadataList")


def _media_ranges(accept: str) -> list[tuple[str, dict[str, str]]]:
    """The media ranges of ``accept`` (type, parameters but ``q``) in the order kube tries them:
    goautoneg's ParseAccept sorts by quality, then a concrete type or subtype before a wildcard, with
    Go's insertion sort (what sort.Sort runs on the dozen ranges a header holds), whose order this
    comparison, not a strict one, decides."""
    ranges: list[tuple[float, str, dict[str, str]]] = []
    for media_range in accept.split(","):
        media_type, *raw_parameters = media_range.split(";")
        parameters = {
            key.strip(): value.strip()
            for key, _, value in (part.partition("=") for part in raw_parameters)
        }
        ranges.append((_quality(parameters.pop("q", "1")), media_type.strip(), parameters))
    for i in range(1, len(ranges)):
        j = i
        while j > 0 and _goautoneg_less(ranges[j], ranges[j - 1]):
            ranges[j], ranges[j - 1] = ranges[j - 1], ranges[j]
            j -= 1
    return [(media_type, parameters) for _, media_type, parameters in ranges]


def _quality(text: str) -> float:
    """``q`` as Go's strconv.ParseFloat reads it; goautoneg takes 0 where it cannot."""
    try:
        return float(text)
    except ValueError:
        return 0.0


def _goautoneg_less(a: tuple[float, str, Any], b: tuple[float, str, Any]) -> bool:
    if a[0] > b[0]:
        return True
    main_a, _, sub_a = a[1].partition("/")
    main_b, _, sub_b = b[1].partition("/")
    if main_a != "*" and main_b == "*":
        return True
    return sub_a != "*" and sub_b == "*"


def _transform_served(media_type: str, parameters: dict[str, str]) -> bool:
    """Whether a range's as/g/v name a view kube serves (RequestScope.AllowsMediaTypeTransform in
    k8s.io/apiserver/pkg/endpoints/handlers/rest.go): meta.k8s.io v1 or v1beta1's Table (not as
    protobuf) or PartialObjectMetadata(List); any other as, g or v skips the range."""
    if parameters.get("g") != "meta.k8s.io" or parameters.get("v") not in _META_VERSIONS:
        return False
    as_kind = parameters.get("as")
    if as_kind == "Table":
        return media_type != protobuf.CONTENT_TYPE
    return as_kind in _PARTIAL_KINDS


def _converts(parameters: dict[str, str]) -> bool:
    return "as" in parameters or "g" in parameters or "v" in parameters


@functools.lru_cache(maxsize=256)  # a client sends the same Accept header on every request
def negotiate(accept: str, has_codec: bool = False) -> Negotiated:
    """The first media range of ``accept`` that can be served; ``has_codec``: the kind can be protobuf."""
    for media_type, parameters in _media_ranges(accept):
        is_protobuf = media_type == protobuf.CONTENT_TYPE
        if not _converts(parameters):
            if media_type in _ANY_JSON:
                return JSON_OBJECT
            if media_type == "application/yaml":
                return YAML_OBJECT
            if is_protobuf and has_codec:
                return Negotiated(Output.OBJECT, protobuf=True)
            continue
        if not _transform_served(media_type, parameters):
            continue
        if parameters["as"] == "Table":  # Tables are served as JSON
            return Negotiated(Output.TABLE, meta_version=parameters["v"])
        return Negotiated(
            Output.PARTIAL, protobuf=is_protobuf, as_list=parameters["as"] == _PARTIAL_KINDS[1]
        )
    return JSON_OBJECT


_KNOWN_TYPES = frozenset((*_ANY_JSON, "application/yaml", protobuf.CONTENT_TYPE))


@functools.lru_cache(maxsize=256)
def acceptable(accept: str) -> bool:
    """Whether any media range of ``accept`` names a type the server speaks (YAML is answered as JSON, its
    subset) in a view it serves; kube answers 406 when none does."""
    if not accept or (";" not in accept and ("application/json" in accept or "*/*" in accept)):
        return True  # every plain client's, cheaply
    return any(
        media_type.lower() in _KNOWN_TYPES
        and (not _converts(parameters) or _transform_served(media_type, parameters))
        for media_type, parameters in _media_ranges(accept)
    )


def prefers_protobuf(accept: str) -> bool:
    """Whether a Status (an error, a finished delete) goes out as protobuf: kube encodes it with the serializer
    the request negotiated, and a Status can always be protobuf."""
    return negotiate(accept, True).protobuf


def status_body(status: Object, as_protobuf: bool) -> tuple[bytes, bytes]:
    """(content type, body) of a metav1.Status."""
    if as_protobuf:
        return PROTOBUF_TYPE, protobuf.encode(status, STATUS)
    return JSON_TYPE, orjson.dumps(status)


def render_object(
    obj: Object,
    negotiated: Negotiated,
    target: Target,
    include_object: str,
    with_columns: bool = True,
) -> tuple[bytes, Object]:
    """(content type, document) of one versioned object as JSON."""
    output = negotiated.output
    if output is Output.TABLE:
        metadata = {"resourceVersion": obj.get("metadata", {}).get("resourceVersion", "")}
        return TABLE_TYPE, table(
            [obj],
            target.version,
            include_object,
            metadata,
            with_columns=with_columns,
            meta_version=negotiated.meta_version,
        )
    if output is Output.PARTIAL:
        return PARTIAL_TYPE, partial_metadata(obj)
    return JSON_TYPE, obj


def object_body(
    obj: Object, negotiated: Negotiated, target: Target, include_object: str
) -> tuple[bytes, bytes]:
    """(content type, body) of one versioned object."""
    if negotiated.protobuf:
        try:
            if negotiated.output is Output.PARTIAL:
                partial = partial_metadata(obj)
                return PROTOBUF_PARTIAL_TYPE, protobuf.encode(partial, PARTIAL_OBJECT_METADATA)
            codec = target.version.protobuf
            assert codec is not None  # negotiated for kinds with a codec only
            return PROTOBUF_TYPE, protobuf.encode(obj, codec.message)
        except protobuf.ProtobufError as error:
            _unencodable(target, error)
    content_type, document = render_object(obj, negotiated, target, include_object)
    if negotiated.yaml:
        return YAML_TYPE, to_yaml(document)
    return content_type, orjson.dumps(document)


def _unencodable(target: Target, error: protobuf.ProtobufError) -> None:
    """A stored value the codec cannot write (a schema looser than the kind's Go type): the client, which
    also accepts JSON, gets JSON rather than a 500."""
    log.warning("answering %s in JSON: %s", target.resource.group_resource, error)


def object_list_metadata(metadata: Object, version: VersionType) -> Object:
    """A list of objects' ListMeta. A custom resource's list is kube's UnstructuredList, whose SetContinue
    keeps the empty string (k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructured_list.go); the
    typed ListMeta of built-in kinds, Tables and partial metadata omits it."""
    if "continue" in metadata or version.strategic_merge_patch:
        return metadata
    return {**metadata, "continue": ""}


def list_body(
    items: list[Object],
    negotiated: Negotiated,
    target: Target,
    include_object: str,
    metadata: Object,
) -> tuple[bytes, bytes]:
    """(content type, body) of a list of versioned objects."""
    output = negotiated.output
    if output is Output.TABLE:
        document = table(
            items, target.version, include_object, metadata, meta_version=negotiated.meta_version
        )
        return TABLE_TYPE, orjson.dumps(document)
    if output is Output.PARTIAL:
        document = {
            "kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": metadata,
            "items": [partial_metadata(obj) for obj in items],
        }
        if negotiated.protobuf:
            try:
                body = protobuf.encode(document, PARTIAL_OBJECT_METADATA_LIST)
                return PROTOBUF_PARTIAL_LIST_TYPE, body
            except protobuf.ProtobufError as error:
                _unencodable(target, error)
        return PARTIAL_LIST_TYPE, orjson.dumps(document)
    document = {
        "apiVersion": target.api_version,
        "kind": target.resource.list_kind,
        "metadata": object_list_metadata(metadata, target.version),
        "items": [_untyped(item) for item in items] if target.resource.builtin else items,
    }
    if negotiated.protobuf:
        codec = target.version.protobuf
        assert codec is not None
        try:
            return PROTOBUF_TYPE, protobuf.encode(document, codec.list)
        except protobuf.ProtobufError as error:
            _unencodable(target, error)
    if negotiated.yaml:
        return YAML_TYPE, to_yaml(document)
    return JSON_TYPE, orjson.dumps(document)


def joined_untyped(encoded: list[bytes], api_version: str, kind: str) -> bytes:
    """Rendered items comma-joined without their leading apiVersion and kind (as ``_untyped``): a prefix cut
    when they start with them, as the watch cache renders them, else decoded and encoded again. The cut items
    are views, copied once, into the join: cutting each (a copy) and joining the cuts (another) cost a 4 MB
    list 5 ms against 1 for the join alone."""
    prefix = _type_prefix(api_version, kind)
    cut = len(prefix)
    # each item without its opening brace: the separator brings it back
    rests: list[bytes | memoryview] = [
        memoryview(item)[cut:]
        if item.startswith(prefix)
        else memoryview(orjson.dumps(_untyped(orjson.loads(item))))[1:]
        for item in encoded
    ]
    if not rests:
        return b""
    rests[0] = b"{" + rests[0]
    return b",{".join(rests)


def retyped_bytes(encoded: list[bytes], api_version: str, kind: str) -> int:
    """The bytes of the items ``joined_untyped`` must decode and encode again (those not starting with
    their apiVersion and kind): the costly part of its work."""
    prefix = _type_prefix(api_version, kind)
    return sum(len(item) for item in encoded if not item.startswith(prefix))


def _type_prefix(api_version: str, kind: str) -> bytes:
    return orjson.dumps({"apiVersion": api_version, "kind": kind})[:-1] + b","


def _untyped(item: Object) -> Object:
    """A built-in kind's list item without apiVersion and kind: kube encodes a typed list's items with an
    empty TypeMeta (only the list names them), where a custom resource's unstructured items keep theirs."""
    return {key: value for key, value in item.items() if key not in ("apiVersion", "kind")}


def to_yaml(document: Object) -> bytes:
    """A JSON document as kube writes it in YAML (sigs.k8s.io/yaml JSONToYAML over go-yaml: keys sorted,
    block style, strings YAML would read as something else quoted)."""
    text: str = yaml.dump(
        document,
        Dumper=_GoYAMLDumper,
        sort_keys=True,
        default_flow_style=False,
        allow_unicode=True,
        width=2**31 - 1,  # go-yaml does not fold long strings
    )
    return text.encode()


def render_event_object(
    obj: Object, negotiated: Negotiated, target: Target, include_object: str, first: bool
) -> Object:
    """The `object` of one watch event: a one-row Table sends its column definitions only first (§8.2)."""
    return render_object(obj, negotiated, target, include_object, with_columns=first)[1]


def event_frame(event_type: str, obj: Object, negotiated: Negotiated, target: Target) -> bytes:
    """One protobuf watch frame: a metav1.WatchEvent (raw, without envelope: the stream serializer is kube's
    RawSerializer) whose object is the enveloped object, length-prefixed (LengthDelimitedFramer)."""
    if event_type == "ERROR":
        embedded = protobuf.encode(obj, STATUS)
    elif negotiated.output is Output.PARTIAL:
        embedded = protobuf.encode(partial_metadata(obj), PARTIAL_OBJECT_METADATA)
    else:
        codec = target.version.protobuf
        assert codec is not None
        embedded = protobuf.encode(obj, codec.message)
    event = protobuf.length_delimited(1, event_type.encode()) + protobuf.length_delimited(
        2, protobuf.length_delimited(1, embedded)
    )
    return protobuf.frame(event)


def stream_type(negotiated: Negotiated) -> bytes:
    if negotiated.protobuf:
        return PROTOBUF_WATCH_TYPE
    return {Output.TABLE: TABLE_TYPE, Output.PARTIAL: PARTIAL_TYPE}.get(
        negotiated.output, JSON_TYPE
    )
