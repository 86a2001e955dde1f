"""``validate_object_meta`` passes label keys, label values and names it has seen pass by set lookups;
the causes must be the same whether or not a value was seen before, and the sets stay bounded."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from apiserver.machinery import names
from apiserver.machinery.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_lowered_qualified_name,
    is_qualified_name,
)
from apiserver.schema.objectmeta import validate_object_meta

CHECKS = (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_lowered_qualified_name,
    is_qualified_name,
)

texts = st.one_of(
    st.sampled_from(
        ["a", "a-b", "-a", "A", "X.io/App", "x.io/app", "x.io/", "/a", "a/b/c", "a" * 64, "é"]
    ),
    st.text(alphabet="aZ9-._/ ", max_size=8),
)
string_maps = st.dictionaries(texts, st.one_of(texts, texts, st.integers()), max_size=4)
metadata = st.fixed_dictionaries(
    {},
    optional={
        "name": texts,
        "generateName": texts,
        "namespace": texts,
        "labels": st.one_of(string_maps, st.integers()),
        "annotations": string_maps,
        "finalizers": st.lists(st.one_of(texts, st.integers()), max_size=3),
        "managedFields": st.lists(
            st.fixed_dictionaries(
                {"manager": st.sampled_from(["kubectl", "a\tb", "é\u200b"])},
                optional={"operation": st.sampled_from(["Apply", "X"])},
            ),
            max_size=2,
        ),
    },
)


def _cold(meta: Any, namespaced: bool) -> list[Any]:
    for check in CHECKS:
        check.valid.clear()
    return validate_object_meta(meta, namespaced)


@settings(max_examples=300, deadline=None)
@given(metadata, st.booleans())
def test_causes_do_not_depend_on_what_was_seen_before(meta: Any, namespaced: bool) -> None:
    cold = _cold(meta, namespaced)
    assert validate_object_meta(meta, namespaced) == cold  # now with every pass remembered
    assert validate_object_meta(meta, namespaced) == cold


def test_only_passes_are_remembered_and_the_memory_is_bounded(monkeypatch: Any) -> None:
    monkeypatch.setattr(names, "_MEMO_SIZE", 4)
    is_label_value.valid.clear()
    assert is_label_value("-bad") and "-bad" not in is_label_value.valid
    for i in range(10):
        assert is_label_value(f"v{i}") == []
        assert len(is_label_value.valid) <= 4
    assert "v9" in is_label_value.valid
