"""A write's response is built from the object written, not by decoding what was stored: it must be exactly
what a later read of the stored bytes decodes to."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from apiserver.machinery.convert import deep_copy
from apiserver.registry import codec
from apiserver.storage.interface import KeyValue
from tests.strategies import from_schema
from tests.widgets import WIDGETS

JSON_VALUES = from_schema({})  # any JSON value


@given(
    fields=st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=6),
    metadata=st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4),
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
