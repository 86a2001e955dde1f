"""A write's response is built from the object written, not by decoding what was stored: it must be exactly
what a later read of the stored bytes decodes to."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from apiserver.machinery.convert import deep_copy
from apiserver.machinery.scheme import ResourceType
from apiserver.registry import codec
from apiserver.schema import prune_resource
from apiserver.storage.interface import KeyValue
from generated.server import build_scheme
from tests.strategies import from_schema
from tests.widgets import WIDGETS

JSON_VALUES = from_schema({})  # any JSON value
# what admission leaves in metadata: ObjectMeta's fields (a read drops any other, as kube's decoder does),
# here with any value, but for the two lists whose items a read prunes too
META_FIELDS = st.sampled_from(
    ["name", "namespace", "uid", "labels", "annotations", "finalizers", "generation"]
)


@given(
    fields=st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=6),
    metadata=st.dictionaries(META_FIELDS, JSON_VALUES, max_size=4),
    revision=st.integers(min_value=1, max_value=2**62),
)
def test_as_stored_is_what_decoding_the_stored_bytes_gives(
    fields: dict[str, Any], metadata: dict[str, Any], revision: int
) -> None:
    obj = {**fields, "apiVersion": "example.com/v1", "kind": "Widget", "metadata": metadata}
    written = deep_copy(obj)
    kv = KeyValue("/registry/widgets/w", codec.encode(WIDGETS, obj), 1, revision)
    stored = codec.as_stored(obj, kv)
    assert stored == codec.decode(WIDGETS, kv)
    assert stored["metadata"]["resourceVersion"] == str(revision)
    assert obj == written  # the object written is left as it was


CONFIGMAPS = build_scheme().resource("", "configmaps")


@pytest.mark.parametrize(
    ("stored", "read"),
    [
        (
            {"data": {"a": "b"}, "bogus": 1},
            {"data": {"a": "b"}},
        ),  # a field the schema no longer has
        (
            {"metadata": {"name": "c", "bogusMeta": "x"}},
            {"metadata": {"name": "c"}},
        ),  # ObjectMeta's
        (
            {"metadata": {"name": "c", "ownerReferences": [{"uid": "u", "bogus": 1}]}},
            {"metadata": {"name": "c", "ownerReferences": [{"uid": "u"}]}},
        ),
    ],
)
def test_a_read_prunes_the_stored_value_to_the_current_schema(
    stored: dict[str, Any], read: dict[str, Any]
) -> None:
    """kube's storage decoder: what the schema (or ObjectMeta) lacks is not served, whatever was stored."""
    head = {"apiVersion": "v1", "kind": "ConfigMap"}
    kv = KeyValue("/registry/configmaps/d/c", orjson.dumps({**head, **stored}), 1, 7)
    expected = {**head, **read}
    expected.setdefault("metadata", {})["resourceVersion"] = "7"
    assert codec.decode(CONFIGMAPS, kv) == expected


class _Prunes:
    """Counts the prunes a read does, around the real one."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = prune_resource

        def counted(obj: dict[str, Any], schema: Any) -> list[str]:
            self.count += 1
            return real(obj, schema)

        monkeypatch.setattr(codec, "prune_resource", counted)


CONFIGMAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "c", "namespace": "d", "resourceVersion": "3"},
    "data": {"a": "b"},
}
KEY = "/registry/configmaps/d/c"
CONFIGMAP_TYPE: ResourceType = CONFIGMAPS  # type: ignore[assignment]  # the scheme ships it


def test_a_value_the_codec_wrote_clean_is_read_back_without_a_prune(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prunes = _Prunes(monkeypatch)
    shape = codec.Codec(CONFIGMAP_TYPE)
    kv = KeyValue(KEY, shape.encode(KEY, CONFIGMAP), 1, 7)
    assert shape.decode(kv) == codec.as_stored(CONFIGMAP, kv)
    assert prunes.count == 0
    # the same bytes read by another shape of the resource (a restart, a changed schema) are pruned
    assert codec.Codec(CONFIGMAP_TYPE).decode(kv) == codec.as_stored(CONFIGMAP, kv)
    assert prunes.count == 1


@pytest.mark.parametrize(
    "stored",
    [
        {**CONFIGMAP, "bogus": 1},  # a field the schema lacks
        {**CONFIGMAP, "metadata": {"name": "c", "bogusMeta": 1}},  # ObjectMeta's
    ],
)
def test_a_value_written_unclean_is_pruned_when_read(
    monkeypatch: pytest.MonkeyPatch, stored: dict[str, Any]
) -> None:
    prunes = _Prunes(monkeypatch)
    shape = codec.Codec(CONFIGMAP_TYPE)
    kv = KeyValue(KEY, shape.encode(KEY, stored), 1, 7)
    read = shape.decode(kv)
    assert "bogus" not in read and "bogusMeta" not in read["metadata"]
    assert prunes.count == 1


def test_other_bytes_under_the_key_are_pruned(monkeypatch: pytest.MonkeyPatch) -> None:
    """What another writer stored, or an older value of the key, is not what this codec vouched for."""
    prunes = _Prunes(monkeypatch)
    shape = codec.Codec(CONFIGMAP_TYPE)
    older = shape.encode(KEY, CONFIGMAP)
    shape.encode(KEY, {**CONFIGMAP, "data": {"a": "c"}})
    foreign = orjson.dumps({**CONFIGMAP, "bogus": 1})
    for value in (older, foreign):
        assert "bogus" not in shape.decode(KeyValue(KEY, value, 1, 7))
    assert prunes.count == 2


def test_the_codec_remembers_a_bounded_number_of_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    prunes = _Prunes(monkeypatch)
    shape = codec.Codec(CONFIGMAP_TYPE, capacity=2)
    values = {key: shape.encode(key, CONFIGMAP) for key in ("/k/1", "/k/2", "/k/3")}
    for key, value in values.items():
        shape.decode(KeyValue(key, value, 1, 7))
    assert prunes.count == 1  # the oldest key was forgotten


SERVICEACCOUNTS: ResourceType = build_scheme().resource("", "serviceaccounts")  # type: ignore[assignment]
OWNER = {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u"}


@pytest.mark.parametrize(
    ("resource", "stored", "clean"),
    [
        (  # ObjectMeta's list of owner references, one with a field ObjectMeta lacks
            CONFIGMAP_TYPE,
            {**CONFIGMAP, "metadata": {"name": "c", "ownerReferences": ({**OWNER, "bogus": 1},)}},
            {**CONFIGMAP, "metadata": {"name": "c", "ownerReferences": [OWNER]}},
        ),
        (  # an array of objects in the schema, one secret reference with a field the schema lacks
            SERVICEACCOUNTS,
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "s"},
             "secrets": ({"name": "a", "bogus": 1},)},
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "s"},
             "secrets": [{"name": "a"}]},
        ),
    ],
)  # fmt: skip
def test_a_tuple_the_server_built_is_checked_as_the_list_a_read_parses(
    monkeypatch: pytest.MonkeyPatch,
    resource: ResourceType,
    stored: dict[str, Any],
    clean: dict[str, Any],
) -> None:
    """The codec asks whether the object it encodes needs a prune without parsing the bytes back: a tuple
    (stored as a JSON array) is walked like a list, so what it holds unclean is still pruned when read."""
    prunes = _Prunes(monkeypatch)
    shape = codec.Codec(resource)
    kv = KeyValue(KEY, shape.encode(KEY, stored), 1, 7)
    read = shape.decode(kv)
    assert prunes.count == 1
    read["metadata"].pop("resourceVersion")
    assert read == clean
