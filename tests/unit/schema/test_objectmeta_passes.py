"""ObjectMeta's one-pass check (``objectmeta._passes``) answers "nothing wrong" only where the full checks
find nothing: for metadata that passes but for one member, gone or of any odd value, the causes are those
of the full checks alone, before and after every pass is remembered."""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

import pytest

from apiserver.schema import objectmeta
from apiserver.schema.objectmeta import (
    name_is_dns_label,
    name_is_dns_subdomain,
    path_segment_name,
    validate_object_meta,
)

VALID: dict[str, Any] = {
    "name": "c-1",
    "namespace": "default",
    "generation": 1,
    "labels": {"app": "web", "example.com/tier": ""},
    "annotations": {"Example.com/Note": "x"},
    "finalizers": ["example.com/cleanup"],
}
GONE = object()
ODD: list[Any] = [
    GONE, None, "", "default", "Default", "-a", "a:b", "a/b/c", "x" * 64, "é",
    0, -1, 2, True, 1.5, [], {},
    ["orphan"], ["orphan", "foregroundDeletion"], ["example.com/x", 3], ["a/b/c"], [None],
    {"app": 3}, {"app": "-bad"}, {"-bad": "x"}, {"app": ["x"]}, {"Example.com/Note": None},
    {"k": "x" * (objectmeta.TOTAL_ANNOTATION_SIZE_LIMIT // 4)},
    {"k": "é" * (objectmeta.TOTAL_ANNOTATION_SIZE_LIMIT // 2)},
    [{"kind": "X"}], [{"operation": "X"}], ["x"], [{"operation": "Update", "manager": "a\tb"}],
    [{"operation": "Apply", "fieldsType": "X"}], [{"operation": "Update", "manager": "m" * 129}],
    [{"operation": "Update", "subresource": "s" * 257}], [{"operation": "Update", "fieldsType": 0}],
    [{"operation": "Update", "manager": 5}, {"operation": "Apply", "subresource": "status"}],
    [{"operation": "Update", "manager": "kubectl", "fieldsType": "FieldsV1", "fieldsV1": {}}],
]  # fmt: skip
NAME_RULES = (name_is_dns_subdomain, name_is_dns_label, path_segment_name)


def full_checks(meta: Any, namespaced: bool, name_fn: Any) -> list[Any]:
    with patch.object(objectmeta, "_passes", lambda *_: False):
        return validate_object_meta(meta, namespaced, name_fn=name_fn)


@pytest.mark.parametrize("member", [*VALID, "generateName", "ownerReferences", "managedFields"])
def test_the_one_pass_check_never_hides_a_cause(member: str) -> None:
    for value in ODD:
        meta = {key: v for key, v in VALID.items() if key != member}
        if value is not GONE:
            meta[member] = value
        for namespaced in (True, False):
            for name_fn in NAME_RULES:
                expected = full_checks(meta, namespaced, name_fn)
                for _ in range(2):  # cold, then with every pass remembered
                    found = validate_object_meta(meta, namespaced, name_fn=name_fn)
                    assert found == expected, (meta, namespaced, name_fn)


def test_common_metadata_passes_in_one_pass_once_its_strings_are_known() -> None:
    assert validate_object_meta(VALID, True) == []  # remembers what passed
    assert objectmeta._passes(VALID, True, name_is_dns_subdomain)
    assert not objectmeta._passes({**VALID, "generation": -1}, True, name_is_dns_subdomain)
    assert not objectmeta._passes(
        VALID, False, name_is_dns_subdomain
    )  # a namespace it may not have
