"""apiserver.endpoints.output: which media range wins (kube's negotiation: the first servable one; protobuf only for
kinds with a codec, as kube's custom resource handler leaves it out), and the bodies each choice gives."""

from __future__ import annotations

import orjson
import pytest

from apiserver.encoding import protobuf
from apiserver.encoding.protobuf import Field, Message
from apiserver.encoding.protobuf_meta import METADATA, STATUS, KindCodec
from apiserver.endpoints.decode import Target
from apiserver.endpoints.output import (
    Negotiated,
    Output,
    acceptable,
    event_frame,
    list_body,
    negotiate,
    object_body,
    prefers_protobuf,
    status_body,
    stream_type,
)
from apiserver.machinery.scheme import ResourceType, VersionType

PB = "application/vnd.kubernetes.protobuf"
WIDGET = Message("Widget", (METADATA, Field(2, "size", "int32")))


def target(codec: KindCodec | None) -> Target:
    version = VersionType(name="v1", served=True, storage=True, schema={}, protobuf=codec)
    resource = ResourceType(
        group="example.com",
        kind="Widget",
        plural="widgets",
        singular="widget",
        list_kind="WidgetList",
        namespaced=True,
        versions=(version,),
    )
    return Target(resource, version, "default")


@pytest.mark.parametrize(
    ("accept", "has_codec", "expected"),
    [
        (f"{PB}, application/json", True, Negotiated(Output.OBJECT, protobuf=True)),
        (f"{PB}, application/json", False, Negotiated(Output.OBJECT)),  # custom resources: JSON
        (
            PB,
            False,
            Negotiated(Output.OBJECT),
        ),  # nothing else servable: JSON, as for any other type
        ("application/json, */*", True, Negotiated(Output.OBJECT)),
        ("", True, Negotiated(Output.OBJECT)),
        (
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
            True,
            Negotiated(Output.TABLE),
        ),
        (f"{PB};as=Table;v=v1;g=meta.k8s.io, application/json", True, Negotiated(Output.OBJECT)),
        (
            f"{PB};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
            False,  # metadata is a meta/v1 message: protobuf for custom resources too
            Negotiated(Output.PARTIAL, protobuf=True, as_list=True),
        ),
        (  # kube's AllowsMediaTypeTransform: meta.k8s.io v1 or v1beta1 only, else the next range
            "application/json;as=Table;v=v9;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io",
            True,
            Negotiated(Output.TABLE, meta_version="v1beta1"),
        ),
        ("application/json;as=Widget;v=v1;g=meta.k8s.io,*/*", True, Negotiated(Output.OBJECT)),
        # goautoneg's order: quality first, then a concrete type before a wildcard
        (f"{PB};q=0.5,application/json", True, Negotiated(Output.OBJECT)),
        (f"application/json;q=0.5,{PB}", True, Negotiated(Output.OBJECT, protobuf=True)),
        (f"*/*,{PB}", True, Negotiated(Output.OBJECT, protobuf=True)),
        (
            "application/yaml;q=0.9,application/json;q=0.8",
            True,
            Negotiated(Output.OBJECT, yaml=True),
        ),
    ],
)
def test_negotiation(accept: str, has_codec: bool, expected: Negotiated) -> None:
    assert negotiate(accept, has_codec) == expected


@pytest.mark.parametrize(
    ("accept", "served"),
    [
        ("application/json;as=Table;v=v9;g=meta.k8s.io", False),
        (f"{PB};as=Table;v=v1;g=meta.k8s.io", False),
        ("application/json;as=Table;v=v1", False),
        ("application/json;v=v1", False),
        ("application/json;as=PartialObjectMetadata;v=v1beta1;g=meta.k8s.io", True),
        (f"{PB};as=Table;v=v1;g=meta.k8s.io,application/json", True),
        ("application/json", True),
    ],
)
def test_a_view_kube_does_not_serve_is_not_acceptable(accept: str, served: bool) -> None:
    assert acceptable(accept) is served


def test_status_goes_out_as_the_request_negotiated() -> None:
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    assert prefers_protobuf(f"{PB}, application/json")
    assert not prefers_protobuf("application/json")
    content_type, body = status_body(status, True)
    assert content_type == PB.encode()
    assert protobuf.decode(body, STATUS) == status
    assert status_body(status, False) == (b"application/json", orjson.dumps(status))


def test_object_and_list_bodies() -> None:
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "size": 3,
    }
    pb = Negotiated(Output.OBJECT, protobuf=True)
    codec = KindCodec(WIDGET)
    content_type, body = object_body(widget, pb, target(codec), "")
    assert content_type == PB.encode()
    assert protobuf.decode(body, WIDGET) == {
        **widget,
        "metadata": {"name": "w", "creationTimestamp": None},
    }
    content_type, body = list_body([widget], pb, target(codec), "", {"resourceVersion": "9"})
    listed = protobuf.decode(body, codec.list)
    assert (listed["kind"], listed["metadata"], len(listed["items"])) == (
        "WidgetList",
        {"resourceVersion": "9"},
        1,
    )
    assert stream_type(pb) == b"application/vnd.kubernetes.protobuf;stream=watch"
    frame = event_frame("ADDED", widget, pb, target(codec))
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4


def test_an_unencodable_stored_value_is_answered_in_json() -> None:
    """A schema looser than the codec (here a string where the message has an int32) must not become a 500."""
    odd = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "size": "3"}
    pb = Negotiated(Output.OBJECT, protobuf=True)
    assert object_body(odd, pb, target(KindCodec(WIDGET)), "") == (
        b"application/json",
        orjson.dumps(odd),
    )
    content_type, _ = list_body([odd], pb, target(KindCodec(WIDGET)), "", {})
    assert content_type == b"application/json"
