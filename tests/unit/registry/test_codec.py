"""A write's response is built from the object written, not by decoding what was stored: it must be exactly
what a later read of the stored bytes decodes to."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from apiserver.machinery.convert import deep_copy
from apiserver.registry import codec
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
