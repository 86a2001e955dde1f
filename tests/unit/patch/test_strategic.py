"""Tests of apiserver.patch.strategic against kube's own strategic merge patch cases and the real
Kubernetes 1.35 OpenAPI v3 documents.

Most cases are ported from k8s.io/apimachinery/pkg/util/strategicpatch/patch_test.go (the apply half:
``StrategicMergePatch`` of each case's two-way patch on ``original`` and three-way patch on ``current``),
named after the upstream table and description, with the ``mergeItem`` schema of
strategicpatch/testdata/swagger-merge-item-v3.json. Expected errors and status codes follow
mergepatch/errors.go and k8s.io/apiserver handlers/patch.go ``interpretStrategicMergePatchError``.
"""

from __future__ import annotations

import copy
import functools
import json
import random
from collections.abc import Mapping
from typing import Any

import pytest
import yaml

from apiserver.patch.jsonpatch import INVALID_PATCH_STATUS_MESSAGE, PatchError
from apiserver.patch.strategic import (
    Resolver,
    apply_strategic_merge_patch,
    components_resolver,
)
from tests.serverproc import FIXTURES

OPENAPI = FIXTURES / "kubernetes" / "openapi-v3"

# strategicpatch/testdata/swagger-merge-item-v3.json (descriptions dropped): the OpenAPI form of
# patch_test.go's MergeItem struct and its patchStrategy/patchMergeKey tags.
_ITEM = "#/components/schemas/mergeItem"
MERGE_ITEM_SCHEMAS: dict[str, Any] = {
    "mergeItem": {
        "properties": {
            "name": {"type": "string"},
            "value": {"type": "string"},
            "other": {"type": "string"},
            "mergingList": {
                "type": "array",
                "items": {"default": {}, "allOf": [{"$ref": _ITEM}]},
                "x-kubernetes-patch-merge-key": "name",
                "x-kubernetes-patch-strategy": "merge",
            },
            "nonMergingList": {"type": "array", "items": {"$ref": _ITEM}},
            "mergingIntList": {
                "type": "array",
                "items": {"type": "integer", "format": "int32"},
                "x-kubernetes-patch-strategy": "merge",
            },
            "nonMergingIntList": {"type": "array", "items": {"type": "integer"}},
            "mergeItemPtr": {
                "allOf": [{"$ref": _ITEM}],
                "x-kubernetes-patch-merge-key": "name",
                "x-kubernetes-patch-strategy": "merge",
            },
            "simpleMap": {"type": "object", "additionalProperties": {"type": "string"}},
            "replacingItem": {
                "allOf": [
                    {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.runtime.RawExtension"}
                ],
                "x-kubernetes-patch-strategy": "replace",
            },
            "retainKeysMap": {
                "allOf": [{"$ref": "#/components/schemas/retainKeysMergeItem"}],
                "x-kubernetes-patch-strategy": "retainKeys",
            },
            "retainKeysMergingList": {
                "type": "array",
                "items": {"$ref": _ITEM},
                "x-kubernetes-patch-merge-key": "name",
                "x-kubernetes-patch-strategy": "merge,retainKeys",
            },
        },
    },
    "retainKeysMergeItem": {
        "properties": {
            "name": {"type": "string"},
            "value": {"type": "string"},
            "other": {"type": "string"},
            "simpleMap": {"items": {"type": "string"}},
            "mergingList": {
                "type": "array",
                "items": {"$ref": _ITEM},
                "x-kubernetes-patch-merge-key": "name",
                "x-kubernetes-patch-strategy": "merge",
            },
            "nonMergingList": {"type": "array", "items": {"$ref": _ITEM}},
            "mergingIntList": {
                "type": "array",
                "items": {"type": "integer"},
                "x-kubernetes-patch-strategy": "merge",
            },
        },
    },
    "io.k8s.apimachinery.pkg.runtime.RawExtension": {
        "properties": {"Raw": {"type": "string", "format": "byte"}},
    },
}
MERGE_ITEM = MERGE_ITEM_SCHEMAS["mergeItem"]
RESOLVE = components_resolver(MERGE_ITEM_SCHEMAS)


def smp(original: Any, patch: Any, schema: Mapping[str, Any] | None = MERGE_ITEM) -> Any:
    """Apply with the mergeItem schema, checking that neither input is modified."""
    before, patch_before = copy.deepcopy(original), copy.deepcopy(patch)
    result = apply_strategic_merge_patch(original, patch, schema, resolve=RESOLVE)
    assert original == before, "the original must not be modified"
    assert patch == patch_before, "the patch must not be modified"
    return result


def _steps(table: str, cases: dict[str, str]) -> list[Any]:
    """One test per patch application of each case: the two-way patch on ``original`` (giving
    ``twoWayResult``, else ``modified``) and the three-way patch on ``current`` (giving ``result``)."""
    params = []
    for description, text in cases.items():
        case = yaml.safe_load(text)
        original = case.get("original") or {}
        expected = case.get("twoWayResult", case.get("modified"))
        if "twoWay" in case:
            step = (original, case["twoWay"], expected, case.get("error"))
            params.append(pytest.param(*step, id=f"{table}: {description} [twoWay]"))
        if "threeWay" in case:
            step = (case.get("current") or {}, case["threeWay"], case["result"], None)
            params.append(pytest.param(*step, id=f"{table}: {description} [threeWay]"))
    return params


# patch_test.go customStrategicMergePatchTestCaseData and customStrategicMergePatchRawTestCases:
# patches CreateTwoWayMergePatch would not generate (directives, duplicates, old clients).
CUSTOM = {
    "unique scalars when merging lists": """
        original: {mergingIntList: [1, 2]}
        twoWay: {mergingIntList: [2, 3]}
        modified: {mergingIntList: [1, 2, 3]}
    """,
    "delete map from nested map": """
        original: {simpleMap: {key1: 1, key2: 1}}
        twoWay: {simpleMap: {$patch: delete}}
        modified: {simpleMap: {}}
    """,
    "delete all items from merging list": """
        original: {mergingList: [{name: 1}, {name: 2}]}
        twoWay: {mergingList: [{$patch: replace}]}
        modified: {mergingList: []}
    """,
    "merge empty merging lists": """
        original: {mergingList: []}
        twoWay: {mergingList: []}
        modified: {mergingList: []}
    """,
    "delete all keys from map": """
        original: {name: 1, value: 1}
        twoWay: {$patch: replace}
        modified: {}
    """,
    "add key and delete all keys from map": """
        original: {name: 1, value: 1}
        twoWay: {other: a, $patch: replace}
        modified: {other: a}
    """,
    "delete all duplicate entries in a merging list": """
        original: {mergingList: [{name: 1}, {name: 1}, {name: 2, value: a}, {name: 3}, {name: 3}]}
        twoWay: {mergingList: [{name: 1, $patch: delete}, {name: 3, $patch: delete}]}
        modified: {mergingList: [{name: 2, value: a}]}
    """,
    "retainKeys map can add a field when no retainKeys directive present": """
        original: {retainKeysMap: {name: foo}}
        twoWay: {retainKeysMap: {value: bar}}
        modified: {retainKeysMap: {name: foo, value: bar}}
    """,
    "retainKeys map can delete a field when no retainKeys directive present": """
        original: {retainKeysMap: {name: foo, value: a}}
        twoWay: {retainKeysMap: {value: null}}
        modified: {retainKeysMap: {name: foo}}
    """,
    "retainKeys map merge an empty map": """
        original: {retainKeysMap: {name: foo, value: a}}
        twoWay: {retainKeysMap: {}}
        modified: {retainKeysMap: {name: foo, value: a}}
    """,
    "retainKeys list can change a field when no retainKeys directive present": """
        original: {retainKeysMergingList: [{name: bar}, {name: foo, value: a}]}
        twoWay: {retainKeysMergingList: [{name: foo, value: b}]}
        modified: {retainKeysMergingList: [{name: bar}, {name: foo, value: b}]}
    """,
    "preserve the order from the patch in a merging list": """
        original: {mergingList: [{name: 1}, {name: 2, value: b}, {name: 3}]}
        twoWay: {mergingList: [{name: 3, value: c}, {name: 1, value: a}, {name: 2, other: x}]}
        modified:
          mergingList: [{name: 3, value: c}, {name: 1, value: a}, {name: 2, value: b, other: x}]
    """,
    "preserve the order from the patch in a merging list 2": """
        original: {mergingList: [{name: 1}, {name: 2, value: b}, {name: 3}]}
        twoWay: {mergingList: [{name: 3, value: c}, {name: 1, value: a}]}
        modified: {mergingList: [{name: 2, value: b}, {name: 3, value: c}, {name: 1, value: a}]}
    """,
    "preserve the order from the patch in a merging int list": """
        original: {mergingIntList: [1, 2, 3]}
        twoWay: {mergingIntList: [3, 1, 2]}
        modified: {mergingIntList: [3, 1, 2]}
    """,
    "preserve the order from the patch in a merging int list (2)": """
        original: {mergingIntList: [1, 2, 3]}
        twoWay: {mergingIntList: [3, 1]}
        modified: {mergingIntList: [2, 3, 1]}
    """,
    "$setElementOrder contains item that is not present in the list to be merged": """
        original: {mergingList: [{name: 1}, {name: 3}]}
        twoWay:
          $setElementOrder/mergingList: [{name: 3}, {name: 2}, {name: 1}]
          mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]
        modified: {mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]}
    """,
    "$setElementOrder contains item that is not present in the int list to be merged": """
        original: {mergingIntList: [1, 3]}
        twoWay: {$setElementOrder/mergingIntList: [3, 2, 1]}
        modified: {mergingIntList: [3, 1]}
    """,
    "$deleteFromPrimitiveList of nonexistent item in primitive list should not add the item": """
        original: {mergingIntList: [1, 2]}
        twoWay: {$deleteFromPrimitiveList/mergingIntList: [3]}
        modified: {mergingIntList: [1, 2]}
    """,
    "$deleteFromPrimitiveList on empty primitive list should not add the item to the list": """
        original: {mergingIntList: null}
        twoWay: {$deleteFromPrimitiveList/mergingIntList: [3]}
        modified: {mergingIntList: null}
    """,
    "$deleteFromPrimitiveList on nonexistent primitive list should not add the primitive list": """
        original: {foo: [bar]}
        twoWay: {$deleteFromPrimitiveList/mergingIntList: [3]}
        modified: {foo: [bar]}
    """,
    "$deleteFromPrimitiveList should delete item from a list with merge patch strategy": """
        original: {mergingIntList: [1, 2, 3]}
        twoWay: {$deleteFromPrimitiveList/mergingIntList: [2]}
        modified: {mergingIntList: [1, 3]}
    """,
    "$deleteFromPrimitiveList should delete item from a list without merge patch strategy": """
        original: {nonMergingIntList: [1, 2, 3]}
        twoWay: {$deleteFromPrimitiveList/nonMergingIntList: [2]}
        modified: {nonMergingIntList: [1, 3]}
    """,
    "should check if order in $setElementOrder and patch list match": """
        original: {mergingList: [{name: 1}, {name: 3}, {name: 2}]}
        twoWay:
          $setElementOrder/mergingList: [{name: 1}, {name: 2}, {name: 3}]
          mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]
        error: doesn't match
    """,
    "should check if order in $setElementOrder and patch int list match": """
        original: {mergingIntList: [1, 3, 2]}
        twoWay: {$setElementOrder/mergingIntList: [1, 2, 3], mergingIntList: [3, 1]}
        error: doesn't match
    """,
    "missing merge key should error out": """
        original: {mergingList: [{name: 1, value: a}]}
        twoWay: {mergingList: [{value: b}]}
        error: does not contain declared merge key
    """,
}

# patch_test.go createStrategicMergePatchTestCaseData (maps, null, replaced lists).
CREATE = {
    "nil original": """
        twoWay: {name: 1, value: 1}
        modified: {name: 1, value: 1}
        current: {name: 1, other: a}
        threeWay: {value: 1}
        result: {name: 1, value: 1, other: a}
    """,
    "add field and delete field from map with conflict": """
        original: {name: 1}
        twoWay: {name: null, value: 1}
        modified: {value: 1}
        current: {name: a, other: a}
        threeWay: {name: null, value: 1}
        result: {value: 1, other: a}
    """,
    "delete field from nested map with conflict": """
        original: {simpleMap: {key1: 1, key2: 1}}
        twoWay: {simpleMap: {key2: null}}
        modified: {simpleMap: {key1: 1}}
        current: {simpleMap: {key1: a, key2: 1, other: a}}
        threeWay: {simpleMap: {key1: 1, key2: null}}
        result: {simpleMap: {key1: 1, other: a}}
    """,
    "delete all fields from map": """
        original: {name: 1, value: 1}
        twoWay: {name: null, value: null}
        modified: {}
        current: {name: 1, value: 1, other: a}
        threeWay: {name: null, value: null}
        result: {other: a}
    """,
    "replace list of scalars with conflict": """
        original: {nonMergingIntList: [1, 2]}
        twoWay: {nonMergingIntList: [2, 3]}
        modified: {nonMergingIntList: [2, 3]}
        current: {nonMergingIntList: [1, 4]}
        threeWay: {nonMergingIntList: [2, 3]}
        result: {nonMergingIntList: [2, 3]}
    """,
    "delete all maps from merging list with conflict": """
        original: {mergingList: [{name: 1}, {name: 2}]}
        twoWay: {mergingList: [{name: 1, $patch: delete}, {name: 2, $patch: delete}]}
        modified: {mergingList: []}
        current: {mergingList: [{name: 1, other: a}, {name: 2, other: b}]}
        threeWay: {mergingList: [{name: 1, $patch: delete}, {name: 2, $patch: delete}]}
        result: {mergingList: []}
    """,
    "delete all maps from empty merging list": """
        original: {mergingList: [{name: 1}, {name: 2}]}
        twoWay: {mergingList: [{name: 1, $patch: delete}, {name: 2, $patch: delete}]}
        modified: {mergingList: []}
        current: {mergingList: []}
        threeWay: {mergingList: [{name: 1, $patch: delete}, {name: 2, $patch: delete}]}
        result: {mergingList: []}
    """,
    "defined null values should propagate overwrite current fields (with conflict)": """
        original: {name: 2}
        twoWay: {name: 1, value: 1, other: null}
        twoWayResult: {name: 1, value: 1}
        current: {name: a, other: a}
        threeWay: {name: 1, value: 1, other: null}
        result: {name: 1, value: 1}
    """,
    "nil patch with retainKeys map": """
        original: {name: a, retainKeysMap: {name: foo}}
        twoWay: {}
        modified: {name: a, retainKeysMap: {name: foo}}
        current: {name: a, value: b, retainKeysMap: {name: foo}}
        threeWay: {}
        result: {name: a, value: b, retainKeysMap: {name: foo}}
    """,
}

# patch_test.go strategicMergePatchRawTestCases (directives as kubectl generates them).
RAW = {
    "delete items in lists of scalars": """
        original: {mergingIntList: [1, 2, 3]}
        twoWay:
          $setElementOrder/mergingIntList: [1, 2]
          $deleteFromPrimitiveList/mergingIntList: [3]
        modified: {mergingIntList: [1, 2]}
        current: {mergingIntList: [1, 2, 3, 4]}
        threeWay:
          $setElementOrder/mergingIntList: [1, 2]
          $deleteFromPrimitiveList/mergingIntList: [3]
        result: {mergingIntList: [1, 2, 4]}
    """,
    "delete all duplicate items in lists of scalars": """
        original: {mergingIntList: [1, 2, 3, 3]}
        twoWay:
          $setElementOrder/mergingIntList: [1, 2]
          $deleteFromPrimitiveList/mergingIntList: [3]
        modified: {mergingIntList: [1, 2]}
        current: {mergingIntList: [1, 2, 3, 3, 4]}
        threeWay:
          $setElementOrder/mergingIntList: [1, 2]
          $deleteFromPrimitiveList/mergingIntList: [3]
        result: {mergingIntList: [1, 2, 4]}
    """,
    "add and delete items in lists of scalars": """
        original: {mergingIntList: [1, 2, 3]}
        twoWay:
          $setElementOrder/mergingIntList: [1, 2, 4]
          $deleteFromPrimitiveList/mergingIntList: [3]
          mergingIntList: [4]
        modified: {mergingIntList: [1, 2, 4]}
        current: {mergingIntList: [1, 2, 3, 4]}
        threeWay:
          $setElementOrder/mergingIntList: [1, 2, 4]
          $deleteFromPrimitiveList/mergingIntList: [3]
        result: {mergingIntList: [1, 2, 4]}
    """,
    "merge lists of maps": """
        original: {mergingList: [{name: 1}, {name: 2, value: 2}]}
        twoWay:
          $setElementOrder/mergingList: [{name: 4}, {name: 1}, {name: 2}, {name: 3}]
          mergingList: [{name: 4, value: 4}, {name: 3, value: 3}]
        modified:
          mergingList: [{name: 4, value: 4}, {name: 1}, {name: 2, value: 2}, {name: 3, value: 3}]
        current: {mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]}
        threeWay:
          $setElementOrder/mergingList: [{name: 4}, {name: 1}, {name: 2}, {name: 3}]
          mergingList: [{name: 4, value: 4}, {name: 3, value: 3}]
        result:
          mergingList:
            - {name: 4, value: 4}
            - {name: 1, other: a}
            - {name: 2, value: 2, other: b}
            - {name: 3, value: 3}
    """,
    "add field to map in merging list with conflict": """
        original: {mergingList: [{name: 1}, {name: 2, value: 2}]}
        twoWay:
          $setElementOrder/mergingList: [{name: 1}, {name: 2}]
          mergingList: [{name: 1, value: 1}]
        modified: {mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]}
        current: {mergingList: [{name: 1, other: a}, {name: 3, value: 2, other: b}]}
        threeWay:
          $setElementOrder/mergingList: [{name: 1}, {name: 2}]
          mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]
        result:
          mergingList:
            - {name: 1, value: 1, other: a}
            - {name: 2, value: 2}
            - {name: 3, value: 2, other: b}
    """,
    "replace map field value in merging list with conflict": """
        original: {mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]}
        twoWay:
          $setElementOrder/mergingList: [{name: 1}, {name: 2}]
          mergingList: [{name: 1, value: a}]
        modified: {mergingList: [{name: 1, value: a}, {name: 2, value: 2}]}
        current: {mergingList: [{name: 1, value: 3, other: a}, {name: 2, value: 2, other: b}]}
        threeWay:
          $setElementOrder/mergingList: [{name: 1}, {name: 2}]
          mergingList: [{name: 1, value: a}]
        result: {mergingList: [{name: 1, value: a, other: a}, {name: 2, value: 2, other: b}]}
    """,
    "delete map from merging list": """
        original: {mergingList: [{name: 1}, {name: 2}]}
        twoWay:
          $setElementOrder/mergingList: [{name: 2}]
          mergingList: [{name: 1, $patch: delete}]
        modified: {mergingList: [{name: 2}]}
        current: {mergingList: [{name: 1}, {name: 2, other: b}]}
        threeWay:
          $setElementOrder/mergingList: [{name: 2}]
          mergingList: [{name: 1, $patch: delete}]
        result: {mergingList: [{name: 2, other: b}]}
    """,
    "delete missing map from merging list with conflict": """
        original: {mergingList: [{name: 1}, {name: 2}]}
        twoWay:
          $setElementOrder/mergingList: [{name: 2}]
          mergingList: [{name: 1, $patch: delete}]
        modified: {mergingList: [{name: 2}]}
        current: {mergingList: [{name: 3, other: a}]}
        threeWay:
          $setElementOrder/mergingList: [{name: 2}]
          mergingList: [{name: 2}, {name: 1, $patch: delete}]
        result: {mergingList: [{name: 2}, {name: 3, other: a}]}
    """,
    "add map and delete map from merging list": """
        original: {mergingList: [{name: 1}, {name: 2}]}
        twoWay:
          $setElementOrder/mergingList: [{name: 2}, {name: 3}]
          mergingList: [{name: 3}, {name: 1, $patch: delete}]
        modified: {mergingList: [{name: 2}, {name: 3}]}
        current: {mergingList: [{name: 1}, {name: 2, other: b}, {name: 4, other: c}]}
        threeWay:
          $setElementOrder/mergingList: [{name: 2}, {name: 3}]
          mergingList: [{name: 3}, {name: 1, $patch: delete}]
        result: {mergingList: [{name: 2, other: b}, {name: 4, other: c}, {name: 3}]}
    """,
    "add map and delete map from merging list with conflict": """
        original: {mergingList: [{name: 1}, {name: 2}]}
        twoWay:
          $setElementOrder/mergingList: [{name: 2}, {name: 3}]
          mergingList: [{name: 3}, {name: 1, $patch: delete}]
        modified: {mergingList: [{name: 2}, {name: 3}]}
        current: {mergingList: [{name: 1, other: a}, {name: 4, other: c}]}
        threeWay:
          $setElementOrder/mergingList: [{name: 2}, {name: 3}]
          mergingList: [{name: 2}, {name: 3}, {name: 1, $patch: delete}]
        result: {mergingList: [{name: 4, other: c}, {name: 2}, {name: 3}]}
    """,
    "delete missing field from map in merging list with conflict": """
        original: {mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]}
        twoWay:
          $setElementOrder/mergingList: [{name: 1}, {name: 2}]
          mergingList: [{name: 1, value: null}]
        modified: {mergingList: [{name: 1}, {name: 2, value: 2}]}
        current: {mergingList: [{name: 1, other: a}, {name: 2, other: b}]}
        threeWay:
          $setElementOrder/mergingList: [{name: 1}, {name: 2}]
          mergingList: [{name: 1, value: null}, {name: 2, value: 2}]
        result: {mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]}
    """,
    "replace non merging list nested in merging list": """
        original: {mergingList: [{name: 1, nonMergingList: [{name: 1}, {name: 2, value: 2}]}, {name: 2}]}
        twoWay:
          $setElementOrder/mergingList: [{name: 1}, {name: 2}]
          mergingList: [{name: 1, nonMergingList: [{name: 1, value: 1}]}]
        modified: {mergingList: [{name: 1, nonMergingList: [{name: 1, value: 1}]}, {name: 2}]}
        current:
          mergingList:
            - {name: 1, other: a, nonMergingList: [{name: 1}, {name: 2, value: 2}]}
            - {name: 2, other: b}
        threeWay:
          $setElementOrder/mergingList: [{name: 1}, {name: 2}]
          mergingList: [{name: 1, nonMergingList: [{name: 1, value: 1}]}]
        result:
          mergingList:
            - {name: 1, other: a, nonMergingList: [{name: 1, value: 1}]}
            - {name: 2, other: b}
    """,
    "add field to map in merging list nested in merging list with value conflict": """
        original: {mergingList: [{name: 1, mergingList: [{name: 1}, {name: 2, value: 2}]}, {name: 2}]}
        twoWay:
          $setElementOrder/mergingList: [{name: 1}, {name: 2}]
          mergingList:
            - $setElementOrder/mergingList: [{name: 1}, {name: 2}]
              name: 1
              mergingList: [{name: 1, value: 1}]
        modified:
          mergingList:
            - {name: 1, mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]}
            - {name: 2}
        current:
          mergingList:
            - name: 1
              other: a
              mergingList: [{name: 1, value: a, other: c}, {name: 2, value: b, other: d}]
            - {name: 2, other: b}
        threeWay:
          $setElementOrder/mergingList: [{name: 1}, {name: 2}]
          mergingList:
            - $setElementOrder/mergingList: [{name: 1}, {name: 2}]
              name: 1
              mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]
        result:
          mergingList:
            - name: 1
              other: a
              mergingList: [{name: 1, value: 1, other: c}, {name: 2, value: 2, other: d}]
            - {name: 2, other: b}
    """,
    # Upstream repeats the description of the case before; this one also reorders the inner list.
    "add field to map in merging list nested in merging list with deletion conflict": """
        original: {mergingList: [{name: 1, mergingList: [{name: 1}, {name: 2, value: 2}]}, {name: 2}]}
        twoWay:
          $setElementOrder/mergingList: [{name: 1}, {name: 2}]
          mergingList:
            - $setElementOrder/mergingList: [{name: 2}, {name: 1}]
              name: 1
              mergingList: [{name: 1, value: 1}]
        modified:
          mergingList:
            - {name: 1, mergingList: [{name: 2, value: 2}, {name: 1, value: 1}]}
            - {name: 2}
        current:
          mergingList:
            - {name: 1, other: a, mergingList: [{name: 2, value: 2, other: d}]}
            - {name: 2, other: b}
        threeWay:
          $setElementOrder/mergingList: [{name: 1}, {name: 2}]
          mergingList:
            - $setElementOrder/mergingList: [{name: 2}, {name: 1}]
              name: 1
              mergingList: [{name: 1, value: 1}]
        result:
          mergingList:
            - {name: 1, other: a, mergingList: [{name: 2, value: 2, other: d}, {name: 1, value: 1}]}
            - {name: 2, other: b}
    """,
    "add map to merging list by pointer with conflict": """
        original: {mergeItemPtr: [{name: 1}]}
        twoWay:
          $setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}]
          mergeItemPtr: [{name: 2}]
        modified: {mergeItemPtr: [{name: 1}, {name: 2}]}
        current: {mergeItemPtr: [{name: 3}]}
        threeWay:
          $setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}]
          mergeItemPtr: [{name: 1}, {name: 2}]
        result: {mergeItemPtr: [{name: 1}, {name: 2}, {name: 3}]}
    """,
    "add field to map in merging list by pointer": """
        original: {mergeItemPtr: [{name: 1, mergeItemPtr: [{name: 1}, {name: 2, value: 2}]}, {name: 2}]}
        twoWay:
          $setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}]
          mergeItemPtr:
            - $setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}]
              name: 1
              mergeItemPtr: [{name: 1, value: 1}]
        modified:
          mergeItemPtr:
            - {name: 1, mergeItemPtr: [{name: 1, value: 1}, {name: 2, value: 2}]}
            - {name: 2}
        current:
          mergeItemPtr:
            - name: 1
              other: a
              mergeItemPtr: [{name: 1, other: a}, {name: 2, value: 2, other: b}]
            - {name: 2, other: b}
        threeWay:
          $setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}]
          mergeItemPtr:
            - $setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}]
              name: 1
              mergeItemPtr: [{name: 1, value: 1}]
        result:
          mergeItemPtr:
            - name: 1
              other: a
              mergeItemPtr: [{name: 1, value: 1, other: a}, {name: 2, value: 2, other: b}]
            - {name: 2, other: b}
    """,
    "merge lists of scalars": """
        original: {mergingIntList: [1, 2]}
        twoWay: {$setElementOrder/mergingIntList: [1, 2, 3], mergingIntList: [3]}
        modified: {mergingIntList: [1, 2, 3]}
        current: {mergingIntList: [1, 2, 4]}
        threeWay: {$setElementOrder/mergingIntList: [1, 2, 3], mergingIntList: [3]}
        result: {mergingIntList: [1, 2, 3, 4]}
    """,
    "add an item in a list of primitives and preserve order": """
        original: {mergingIntList: [1, 2]}
        twoWay: {$setElementOrder/mergingIntList: [3, 1, 2], mergingIntList: [3]}
        modified: {mergingIntList: [3, 1, 2]}
        current: {mergingIntList: [1, 4, 2]}
        threeWay: {$setElementOrder/mergingIntList: [3, 1, 2], mergingIntList: [3]}
        result: {mergingIntList: [3, 1, 4, 2]}
    """,
    "delete an item in a list of primitives and preserve order": """
        original: {mergingIntList: [1, 2, 3]}
        twoWay:
          $setElementOrder/mergingIntList: [2, 1]
          $deleteFromPrimitiveList/mergingIntList: [3]
        modified: {mergingIntList: [2, 1]}
        current: {mergingIntList: [1, 2, 3]}
        threeWay:
          $setElementOrder/mergingIntList: [2, 1]
          $deleteFromPrimitiveList/mergingIntList: [3]
        result: {mergingIntList: [2, 1]}
    """,
    "add an item in a list and preserve order": """
        original: {mergingList: [{name: 1}, {name: 2, value: 2}]}
        twoWay:
          $setElementOrder/mergingList: [{name: 3}, {name: 1}, {name: 2}]
          mergingList: [{name: 3, value: 3}]
        modified: {mergingList: [{name: 3, value: 3}, {name: 1}, {name: 2, value: 2}]}
        current: {mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]}
        threeWay:
          $setElementOrder/mergingList: [{name: 3}, {name: 1}, {name: 2}]
          mergingList: [{name: 3, value: 3}]
        result:
          mergingList: [{name: 3, value: 3}, {name: 1, other: a}, {name: 2, value: 2, other: b}]
    """,
    "add and delete an item in a list and preserve order": """
        original: {mergingList: [{name: 1}, {name: 3, value: 3}, {name: 2, value: 2}]}
        twoWay:
          $setElementOrder/mergingList: [{name: 4}, {name: 2}, {name: 1}]
          mergingList: [{name: 4, value: 4}, {name: 3, $patch: delete}]
        modified: {mergingList: [{name: 4, value: 4}, {name: 2, value: 2}, {name: 1}]}
        current: {mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}, {name: 3, value: 3}]}
        threeWay:
          $setElementOrder/mergingList: [{name: 4}, {name: 2}, {name: 1}]
          mergingList: [{name: 4, value: 4}, {name: 3, $patch: delete}]
        result:
          mergingList: [{name: 4, value: 4}, {name: 2, value: 2, other: b}, {name: 1, other: a}]
    """,
    "set elements order in a list with server-only items 3": """
        original: {mergingList: [{name: 1}, {name: 2, value: 2}, {name: 3, value: 3}, {name: 4, value: 4}]}
        twoWay: {$setElementOrder/mergingList: [{name: 2}, {name: 1}, {name: 4}, {name: 3}]}
        modified:
          mergingList: [{name: 2, value: 2}, {name: 1}, {name: 4, value: 4}, {name: 3, value: 3}]
        current:
          mergingList:
            [{name: 1, other: a}, {name: 2, value: 2}, {name: 7}, {name: 9}, {name: 8},
             {name: 3, value: 3}, {name: 4, value: 4}]
        threeWay: {$setElementOrder/mergingList: [{name: 2}, {name: 1}, {name: 4}, {name: 3}]}
        result:
          mergingList:
            [{name: 2, value: 2}, {name: 1, other: a}, {name: 7}, {name: 9}, {name: 8},
             {name: 4, value: 4}, {name: 3, value: 3}]
    """,
    "set elements order in a int list with server-only items 2": """
        original: {mergingIntList: [1, 2, 3, 4]}
        twoWay: {$setElementOrder/mergingIntList: [2, 1, 4, 3]}
        modified: {mergingIntList: [2, 1, 4, 3]}
        current: {mergingIntList: [1, 2, 9, 3, 4]}
        threeWay: {$setElementOrder/mergingIntList: [2, 1, 4, 3]}
        result: {mergingIntList: [2, 1, 9, 4, 3]}
    """,
    "add and delete an item in a int list and preserve order": """
        original: {mergingIntList: [1, 3, 2]}
        twoWay:
          $setElementOrder/mergingIntList: [4, 2, 1]
          mergingIntList: [4]
          $deleteFromPrimitiveList/mergingIntList: [3]
        modified: {mergingIntList: [4, 2, 1]}
        current: {mergingIntList: [1, 2, 3]}
        threeWay:
          $setElementOrder/mergingIntList: [4, 2, 1]
          mergingIntList: [4]
          $deleteFromPrimitiveList/mergingIntList: [3]
        result: {mergingIntList: [4, 2, 1]}
    """,
    "behavior of set element order for a merging list with duplicate": """
        original:
          mergingList: [{name: 1}, {name: 2, value: dup1}, {name: 3}, {name: 2, value: dup2}, {name: 4}]
        twoWay:
          $setElementOrder/mergingList: [{name: 2}, {name: 1}, {name: 4}, {name: 3}, {name: 2}]
        twoWayResult:
          mergingList: [{name: 2, value: dup1}, {name: 2, value: dup2}, {name: 1}, {name: 4}, {name: 3}]
    """,
    "behavior of set element order for a merging int list with duplicate": """
        original: {mergingIntList: [1, 2, 3, 2, 4]}
        twoWay: {$setElementOrder/mergingIntList: [2, 1, 4, 3, 2]}
        twoWayResult: {mergingIntList: [2, 2, 1, 4, 3]}
    """,
    "retainKeys map should clear defaulted field with conflict (discriminated union)": """
        current: {retainKeysMap: {name: type1, value: foo}}
        threeWay: {retainKeysMap: {$retainKeys: [name, other], name: type2, other: bar}}
        result: {retainKeysMap: {name: type2, other: bar}}
    """,
    "retainKeys map deletes a field and clears a field": """
        original: {retainKeysMap: {name: foo, value: bar}}
        twoWay: {retainKeysMap: {$retainKeys: [name], value: null}}
        modified: {retainKeysMap: {name: foo}}
        current: {retainKeysMap: {name: foo, value: bar, other: a}}
        threeWay: {retainKeysMap: {$retainKeys: [name], value: null}}
        result: {retainKeysMap: {name: foo}}
    """,
    "retainKeys map adds a field in a nested map": """
        original: {retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a}}}
        twoWay:
          retainKeysMap: {$retainKeys: [name, simpleMap, value], simpleMap: {key2: b}}
        modified: {retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a, key2: b}}}
        current: {retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a, key3: c}}}
        threeWay:
          retainKeysMap: {$retainKeys: [name, simpleMap, value], simpleMap: {key2: b}}
        result: {retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a, key2: b, key3: c}}}
    """,
    "retainKeys map deletes nested non-merging list": """
        original: {retainKeysMap: {name: foo, nonMergingList: [{name: a}, {name: b}]}}
        twoWay: {retainKeysMap: {$retainKeys: [name, value], value: bar, nonMergingList: null}}
        modified: {retainKeysMap: {name: foo, value: bar}}
        current: {retainKeysMap: {name: foo, nonMergingList: [{name: a}, {name: b}]}}
        threeWay: {retainKeysMap: {$retainKeys: [name, value], value: bar, nonMergingList: null}}
        result: {retainKeysMap: {name: foo, value: bar}}
    """,
    "retainKeys map adds an item and deletes an item in nested merging int list": """
        original: {retainKeysMap: {name: foo, mergingIntList: [1, 2, 3]}}
        twoWay:
          retainKeysMap:
            $retainKeys: [mergingIntList, name]
            mergingIntList: [5]
            $deleteFromPrimitiveList/mergingIntList: [2]
            $setElementOrder/mergingIntList: [1, 3, 5]
        modified: {retainKeysMap: {name: foo, mergingIntList: [1, 3, 5]}}
        current: {retainKeysMap: {name: foo, mergingIntList: [1, 2, 3, 4]}}
        threeWay:
          retainKeysMap:
            $retainKeys: [mergingIntList, name]
            mergingIntList: [5]
            $deleteFromPrimitiveList/mergingIntList: [2]
            $setElementOrder/mergingIntList: [1, 3, 5]
        result: {retainKeysMap: {name: foo, mergingIntList: [1, 3, 5, 4]}}
    """,
    "retainKeys map deletes an item in nested merging list": """
        original: {retainKeysMap: {name: foo, mergingList: [{name: a}, {name: b}]}}
        twoWay:
          retainKeysMap:
            $retainKeys: [mergingList, name]
            $setElementOrder/mergingList: [{name: a}]
            mergingList: [{name: b, $patch: delete}]
        modified: {retainKeysMap: {name: foo, mergingList: [{name: a}]}}
        current: {retainKeysMap: {name: foo, mergingList: [{name: a}, {name: b}, {name: x}]}}
        threeWay:
          retainKeysMap:
            $retainKeys: [mergingList, name]
            $setElementOrder/mergingList: [{name: a}]
            mergingList: [{name: b, $patch: delete}]
        result: {retainKeysMap: {name: foo, mergingList: [{name: a}, {name: x}]}}
    """,
    "retainKeys list of maps clears a field": """
        original: {retainKeysMergingList: [{name: bar}, {name: foo, value: a}]}
        twoWay: {}
        modified: {retainKeysMergingList: [{name: bar}, {name: foo, value: a}]}
        current: {retainKeysMergingList: [{name: bar}, {name: foo, value: a, other: x}]}
        threeWay:
          $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
          retainKeysMergingList: [{$retainKeys: [name, value], name: foo}]
        result: {retainKeysMergingList: [{name: bar}, {name: foo, value: a}]}
    """,
    "retainKeys list of maps changes a field and clear a field with conflict": """
        original: {retainKeysMergingList: [{name: bar}, {name: foo, value: old}]}
        twoWay:
          $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
          retainKeysMergingList: [{$retainKeys: [name, value], name: foo, value: new}]
        modified: {retainKeysMergingList: [{name: bar}, {name: foo, value: new}]}
        current: {retainKeysMergingList: [{name: bar}, {name: foo, value: modified, other: x}]}
        threeWay:
          $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
          retainKeysMergingList: [{$retainKeys: [name, value], name: foo, value: new}]
        result: {retainKeysMergingList: [{name: bar}, {name: foo, value: new}]}
    """,
    "delete and reorder in one list, reorder in another": """
        original:
          mergingList: [{name: a, value: a}, {name: b, value: b}]
          mergeItemPtr: [{name: c, value: c}, {name: d, value: d}]
        twoWay:
          $setElementOrder/mergingList: [{name: b}]
          $setElementOrder/mergeItemPtr: [{name: d}, {name: c}]
          mergingList: [{$patch: delete, name: a}]
        modified:
          mergingList: [{name: b, value: b}]
          mergeItemPtr: [{name: d, value: d}, {name: c, value: c}]
    """,
}

# patch_test.go replaceRawExtensionPatchTestCases and TestUnknownField (the apply half): a field
# with patchStrategy replace, and null members of values taken whole (discardNullValuesFromPatch).
OTHER = {
    "replace RawExtension field and merge list": """
        original:
          name: my-object
          mergingList: [{name: 1}]
          replacingItem: {Some: Generic, Yaml: Inside, The: RawExtension, Field: Period}
        twoWay:
          $setElementOrder/mergingList: [{name: 1}, {name: 2}]
          mergingList: [{name: 2}]
          replacingItem: {Newly: Modified, Yaml: Inside, The: RawExtension}
        modified:
          name: my-object
          mergingList: [{name: 1}, {name: 2}]
          replacingItem: {Newly: Modified, Yaml: Inside, The: RawExtension}
        current:
          name: my-object
          mergingList: [{name: 1}, {name: 3}]
          replacingItem: {Some: Generic, Yaml: Inside, The: RawExtension, Field: Period}
        threeWay:
          $setElementOrder/mergingList: [{name: 1}, {name: 2}]
          mergingList: [{name: 2}]
          replacingItem: {Newly: Modified, Yaml: Inside, The: RawExtension}
        result:
          name: my-object
          mergingList: [{name: 1}, {name: 2}, {name: 3}]
          replacingItem: {Newly: Modified, Yaml: Inside, The: RawExtension}
    """,
    "removed only": """
        original: {name: foo, scalar: true, complex: {nested: true}}
        twoWay: {complex: null, scalar: null}
        modified: {name: foo}
        current: {name: foo, scalar: true, complex: {nested: true}, array: [1, 2, 3]}
        threeWay: {complex: null, scalar: null}
        result: {array: [1, 2, 3], name: foo}
    """,
    "discard nulls in nested and adds not nulls": """
        original: {name: foo}
        twoWay: {complex_nullable: {key: {keynotnull: value, keynull: null}}}
        modified: {name: foo, complex_nullable: {key: {keynotnull: value}}}
    """,
    "discard if modified all nulls": """
        twoWay: {complex: {nested: null}}
        modified: {complex: {}}
    """,
    "filter nulls from nested slices": """
        twoWay: {complex_nullable: [{inner_one: {key_one: foo, key_two: null}}]}
        modified: {complex_nullable: [{inner_one: {key_one: foo}}]}
    """,
    "not filter nulls from non-associative slice": """
        twoWay: {complex_nullable: [key1, null, key2]}
        modified: {complex_nullable: [key1, null, key2]}
    """,
    "nested null values in original are preserved": """
        original: {complex: {key: null}, thing: null}
        twoWay: {nested: {value: 5}}
        modified: {complex: {key: null}, nested: {value: 5}, thing: null}
    """,
}


@pytest.mark.parametrize(
    ("original", "patch", "expected", "error"),
    _steps("customStrategicMergePatch", CUSTOM)
    + _steps("createStrategicMergePatch", CREATE)
    + _steps("strategicMergePatchRawTestCases", RAW)
    + _steps("replaceRawExtension/TestUnknownField", OTHER),
)
def test_kube_patch_test_go_cases(
    original: dict[str, Any], patch: dict[str, Any], expected: Any, error: str | None
) -> None:
    if error is None:
        assert smp(original, patch) == expected
    else:
        with pytest.raises(PatchError, match=error):
            smp(original, patch)


def test_ported_case_count() -> None:
    assert len(_steps("", CUSTOM) + _steps("", CREATE) + _steps("", RAW) + _steps("", OTHER)) == 118


# --- errors: mergepatch/errors.go messages, codes from interpretStrategicMergePatchError ---------------


@pytest.mark.parametrize(
    ("original", "patch", "message", "code"),
    [
        pytest.param(
            {"mergingList": [{"name": "a", "value": "x"}]},
            {"mergingList": [{"value": "b"}]},
            "map: map[value:b] does not contain declared merge key: name",
            400,
            id="ErrNoMergeKey: kube passes it through (500), a 400 here",
        ),
        pytest.param(
            {"mergingList": [{"name": "a"}]},
            {"mergingList": [{"$patch": "delete", "value": 1}]},
            "map: map[$patch:delete value:1] does not contain declared merge key: name",
            400,
            id="$patch: delete without the merge key",
        ),
        pytest.param(
            {"mergingList": [{"name": "a"}]},
            {"mergingList": [{"name": "a", "$patch": "merge"}]},
            "merging lists cannot yet be specified in the patch",
            400,
            id="$patch: merge in a list item",
        ),
        pytest.param(
            {"mergingList": [{"name": "a"}]},
            {"mergingList": [{"name": "a", "$patch": 3}]},
            "unknown patch type: %!s(int64=3) in map: map[$patch:3 name:a]",
            400,
            id="ErrBadPatchType in a list item",
        ),
        pytest.param(
            {"simpleMap": {"a": "1"}},
            {"simpleMap": {"$patch": "merge", "b": "2"}},
            "unknown patch type: merge in map: map[$patch:merge b:2]",
            400,
            id="ErrBadPatchType: $patch: merge in a map",
        ),
        pytest.param(
            {},
            {"$deleteFromPrimitiveList": ["a"]},
            "invalid patch format of primitive list",
            400,
            id="$deleteFromPrimitiveList without a field",
        ),
        pytest.param(
            {"mergingIntList": [1]},
            {"$setElementOrderX/mergingIntList": [1]},
            "invalid patch format of setElementOrder list",
            400,
            id="$setElementOrder with a bad prefix",
        ),
        pytest.param(
            {"mergingIntList": [1]},
            {"$setElementOrder/mergingIntList": "1"},
            "expected a []interface {}, but received a string",
            400,
            id="$setElementOrder not a list",
        ),
        pytest.param(
            {"retainKeysMap": {"name": "a"}},
            {"retainKeysMap": {"$retainKeys": "name"}},
            "invalid patch format of retainKeys",
            400,
            id="$retainKeys not a list",
        ),
        pytest.param(
            {"retainKeysMap": {"name": "a"}},
            {"retainKeysMap": {"$retainKeys": ["name"], "value": "b"}},
            "invalid patch format of retainKeys",
            400,
            id="a patched member missing from $retainKeys",
        ),
        pytest.param(
            {"mergingIntList": [[1]]},
            {"mergingIntList": [[2]]},
            "lists of lists are not supported",
            422,
            id="ErrNoListOfLists: 422",
        ),
        pytest.param(
            {"mergingIntList": [1, 2]},
            {"mergingIntList": ["a"]},
            "list element types are not identical: [[1 2] [a]]",
            400,
            id="mixed element types",
        ),
        pytest.param(
            {},
            [{"op": "add"}],
            "json: cannot unmarshal array into Go value of type map[string]interface {}",
            400,
            id="a patch that is not an object",
        ),
    ],
)
def test_errors(original: dict[str, Any], patch: Any, message: str, code: int) -> None:
    with pytest.raises(PatchError) as caught:
        smp(original, patch)
    assert (caught.value.message, caught.value.code) == (message, code)


def test_order_mismatch_message() -> None:
    with pytest.raises(PatchError) as caught:
        smp(
            {"mergingIntList": [1, 3, 2]},
            {"$setElementOrder/mergingIntList": [1, 2, 3], "mergingIntList": [3, 1]},
        )
    assert caught.value.message == (
        "The order in patch list:\n[3 1]\n doesn't match $setElementOrder list:\n[1 2 3]\n"
    )
    assert caught.value.code == 400


def test_list_of_lists_sends_the_generic_422_message() -> None:
    with pytest.raises(PatchError) as caught:
        smp({"mergingIntList": [[1]]}, {"mergingIntList": [[2]]})
    assert caught.value.status_message == INVALID_PATCH_STATUS_MESSAGE


def test_bad_patch_strategy_in_the_schema() -> None:
    schema = {
        "properties": {"l": {"type": "array", "x-kubernetes-patch-strategy": "merge,replace"}}
    }
    with pytest.raises(PatchError, match=r"^unexpected patch strategy: \[merge replace\]$"):
        smp({"l": [1]}, {"l": [2]}, schema)


# --- directives and nulls on fields the original lacks ----------------------------------------------------


def test_directives_are_removed_where_the_field_is_new() -> None:
    """kubernetes#117568: a value taken whole from the patch loses its $patch maps."""
    patch = {
        "mergingList": [{"name": "a", "$patch": "delete"}, {"name": "b"}],
        "simpleMap": {"$patch": "delete"},
        "retainKeysMap": {"name": "n", "mergingList": [{"$patch": "replace"}]},
    }
    assert smp({}, patch) == {
        "mergingList": [{"name": "b"}],
        "retainKeysMap": {"name": "n", "mergingList": []},
    }


def test_directive_maps_replace_or_delete_the_whole_object() -> None:
    assert smp({"name": "a", "value": "b"}, {"$patch": "delete"}) == {}
    assert smp({"name": "a"}, {"$patch": "replace", "value": "v"}) == {"value": "v"}


def test_null_patch_leaves_the_object_unchanged() -> None:
    original = {"name": "a"}
    result = smp(original, None)
    assert result == original
    assert result is not original


def test_type_change_takes_the_patch_value() -> None:
    assert smp({"mergingList": "x"}, {"mergingList": [{"name": "a", "v": None}]}) == {
        "mergingList": [{"name": "a"}]
    }
    assert smp({"name": 1}, {"name": 1.0}) == {"name": 1.0}


def test_new_items_go_first_without_set_element_order() -> None:
    """mergeSortedSlice takes the patch's item whenever it is not in the stored list, so a new item
    lands before the stored ones (kustomize <= 3.7, on apimachinery's SMP, prepended the same way);
    kubectl apply sends $setElementOrder to place it."""
    original = {"mergingList": [{"name": "a"}], "mergingIntList": [1, 2]}
    patch = {"mergingList": [{"name": "b"}], "mergingIntList": [3]}
    assert smp(original, patch) == {
        "mergingList": [{"name": "b"}, {"name": "a"}],
        "mergingIntList": [3, 1, 2],
    }
    ordered = {"$setElementOrder/mergingList": [{"name": "a"}, {"name": "b"}], **patch}
    assert smp(original, ordered)["mergingList"] == [{"name": "a"}, {"name": "b"}]


def test_kube_order_when_an_item_is_missing_from_the_order_list() -> None:
    """An empty $setElementOrder passes validation and leaves 3 out of both order lists. kube's "less"
    is then true both ways, and Go's stable sort moves 3 to the front; sorting it last would not."""
    patch = {"$setElementOrder/mergingIntList": [], "mergingIntList": [2, 3]}
    assert smp({"mergingIntList": [1, 2]}, patch) == {"mergingIntList": [3, 1, 2]}


@pytest.mark.parametrize("size", [5, 20, 21, 45, 100])
def test_long_lists_keep_the_order_of_set_element_order(size: int) -> None:
    """Past 20 items Go's stable sort merges sorted blocks (SymMerge); any order must come out."""
    shuffle = random.Random(size).shuffle
    stored = [{"name": f"n{i:03}", "value": str(i)} for i in range(size)]
    shuffle(stored)
    order = [{"name": item["name"]} for item in stored]
    shuffle(order)
    result = smp({"mergingList": stored}, {"$setElementOrder/mergingList": order})
    assert [item["name"] for item in result["mergingList"]] == [o["name"] for o in order]
    assert all(item["value"] == str(int(item["name"][1:])) for item in result["mergingList"])


# --- ObjectMeta, schemas without patch strategies ----------------------------------------------------------


def test_object_meta_lists_merge_without_a_schema() -> None:
    original = {
        "metadata": {
            "finalizers": ["a", "b"],
            "ownerReferences": [{"uid": "1", "name": "one"}],
        },
        "spec": {"items": [{"name": "x"}]},
    }
    patch = {
        "metadata": {
            "finalizers": ["c"],
            "ownerReferences": [{"uid": "1", "controller": True}, {"uid": "2", "name": "two"}],
        },
        "spec": {"items": [{"name": "y"}]},
    }
    result = apply_strategic_merge_patch(original, patch, None)
    assert result["metadata"] == {
        "finalizers": ["c", "a", "b"],
        "ownerReferences": [
            {"uid": "1", "name": "one", "controller": True},
            {"uid": "2", "name": "two"},
        ],
    }
    assert result["spec"] == {"items": [{"name": "y"}]}


def test_list_type_map_without_a_patch_strategy_is_replaced() -> None:
    """kube's PatchMetaFromOpenAPI reads only x-kubernetes-patch-strategy/-merge-key."""
    schema = {
        "type": "object",
        "properties": {
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "properties": {
                    "ports": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object"},
                    }
                },
            },
        },
    }
    original = {
        "metadata": {"finalizers": ["a"]},
        "spec": {"ports": [{"name": "http", "port": 80}]},
    }
    patch = {"metadata": {"finalizers": ["b"]}, "spec": {"ports": [{"name": "https", "port": 443}]}}
    assert apply_strategic_merge_patch(original, patch, schema) == {
        "metadata": {"finalizers": ["b", "a"]},
        "spec": {"ports": [{"name": "https", "port": 443}]},
    }


def test_a_stated_object_meta_strategy_wins() -> None:
    schema = {
        "properties": {
            "metadata": {"properties": {"finalizers": {"x-kubernetes-patch-strategy": "replace"}}}
        }
    }
    result = apply_strategic_merge_patch(
        {"metadata": {"finalizers": ["a"]}}, {"metadata": {"finalizers": ["b"]}}, schema
    )
    assert result == {"metadata": {"finalizers": ["b"]}}


def test_copies_only_the_changed_path() -> None:
    original: dict[str, Any] = {
        "metadata": {"labels": {"a": "1"}},
        "spec": {"mergingList": [{"name": "x"}]},
        "status": {"big": [1, 2, 3]},
    }
    result = apply_strategic_merge_patch(original, {"metadata": {"labels": {"b": "2"}}}, None)
    assert result["metadata"] == {"labels": {"a": "1", "b": "2"}}
    assert original["metadata"] == {"labels": {"a": "1"}}
    assert result["spec"] is original["spec"]
    assert result["status"] is original["status"]


# --- the real Kubernetes 1.35 OpenAPI v3 documents -----------------------------------------------------------


@functools.cache
def _openapi(document: str) -> tuple[Mapping[str, Any], Resolver]:
    schemas = json.loads((OPENAPI / document).read_text())["components"]["schemas"]
    return schemas, components_resolver(schemas)


def apply_kind(document: str, kind: str, original: Any, patch: Any) -> Any:
    schemas, resolve = _openapi(document)
    before, patch_before = copy.deepcopy(original), copy.deepcopy(patch)
    result = apply_strategic_merge_patch(original, patch, schemas[kind], resolve=resolve)
    assert (original, patch) == (before, patch_before)
    return result


def deployment(patch: Any, original: Any = None) -> Any:
    return apply_kind(
        "apis__apps__v1_openapi.json",
        "io.k8s.api.apps.v1.Deployment",
        original or DEPLOYMENT,
        patch,
    )


def configmap(patch: Any, original: Any = None) -> Any:
    return apply_kind(
        "api__v1_openapi.json", "io.k8s.api.core.v1.ConfigMap", original or CONFIGMAP, patch
    )


DEPLOYMENT: dict[str, Any] = yaml.safe_load("""
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web}, finalizers: [example.com/a]}
spec:
  replicas: 2
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: nginx
          image: nginx:1.25
          args: [--a, --b]
          ports: [{containerPort: 80, name: http}]
          env: [{name: A, value: "1"}, {name: B, value: "2"}]
        - name: sidecar
          image: busybox
      volumes: [{name: data, emptyDir: {}}]
      tolerations: [{key: k1, operator: Exists}]
status: {replicas: 2}
""")

CONFIGMAP: dict[str, Any] = yaml.safe_load("""
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  labels: {a: "1", b: "2"}
  finalizers: [x.io/one, x.io/two]
  ownerReferences: [{apiVersion: v1, kind: Pod, name: p1, uid: u1}]
data: {a: "1", b: "2"}
""")


def _containers(result: Any) -> Any:
    return result["spec"]["template"]["spec"]["containers"]


def test_deployment_containers_merge_by_name() -> None:
    """kubectl set image / kubectl patch: one container changes, the other stays in place."""
    result = deployment(
        {"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}}
    )
    assert [c["name"] for c in _containers(result)] == ["nginx", "sidecar"]
    assert _containers(result)[0]["image"] == "nginx:1.27"
    assert _containers(result)[0]["ports"] == [{"containerPort": 80, "name": "http"}]
    assert result["status"] is DEPLOYMENT["status"]


def test_deployment_add_and_delete_containers() -> None:
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "init"}, {"name": "nginx"}],
                    "containers": [
                        {"name": "init", "image": "alpine"},
                        {"name": "sidecar", "$patch": "delete"},
                    ],
                }
            }
        }
    }
    assert [c["name"] for c in _containers(deployment(patch))] == ["init", "nginx"]


def test_deployment_ports_merge_by_container_port() -> None:
    ports = [{"containerPort": 443, "name": "https"}, {"containerPort": 80, "protocol": "TCP"}]
    result = deployment(
        {"spec": {"template": {"spec": {"containers": [{"name": "nginx", "ports": ports}]}}}}
    )
    assert _containers(result)[0]["ports"] == [
        {"containerPort": 443, "name": "https"},
        {"containerPort": 80, "name": "http", "protocol": "TCP"},
    ]


def test_deployment_env_set_element_order_and_atomic_args() -> None:
    container = {
        "name": "nginx",
        "$setElementOrder/env": [{"name": "C"}, {"name": "B"}, {"name": "A"}],
        "env": [{"name": "C", "value": "3"}, {"name": "A", "value": None}],
        "args": ["--c"],
    }
    result = deployment({"spec": {"template": {"spec": {"containers": [container]}}}})
    nginx = _containers(result)[0]
    assert nginx["env"] == [{"name": "C", "value": "3"}, {"name": "B", "value": "2"}, {"name": "A"}]
    assert nginx["args"] == ["--c"]


def test_deployment_strategy_retain_keys() -> None:
    """kubectl apply switching to Recreate sends $retainKeys (DeploymentSpec.strategy is retainKeys)."""
    recreate = deployment({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}})
    assert recreate["spec"]["strategy"] == {"type": "Recreate"}
    merged = deployment({"spec": {"strategy": {"type": "Recreate"}}})
    assert merged["spec"]["strategy"] == {
        "type": "Recreate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }


def test_deployment_volumes_merge_with_retain_keys() -> None:
    volume = {"$retainKeys": ["configMap", "name"], "name": "data", "configMap": {"name": "cfg"}}
    result = deployment({"spec": {"template": {"spec": {"volumes": [volume]}}}})
    assert result["spec"]["template"]["spec"]["volumes"] == [
        {"name": "data", "configMap": {"name": "cfg"}}
    ]


def test_deployment_atomic_tolerations_are_replaced_and_labels_merge() -> None:
    patch = {
        "metadata": {"finalizers": ["example.com/b"], "labels": {"tier": "front"}},
        "spec": {"template": {"spec": {"tolerations": [{"key": "k2", "operator": "Exists"}]}}},
    }
    result = deployment(patch)
    assert result["metadata"]["finalizers"] == ["example.com/b", "example.com/a"]
    assert result["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert result["spec"]["template"]["spec"]["tolerations"] == [
        {"key": "k2", "operator": "Exists"}
    ]


def test_configmap_data_merges_and_null_deletes() -> None:
    result = configmap({"data": {"b": None, "c": "3"}, "metadata": {"labels": {"a": None}}})
    assert result["data"] == {"a": "1", "c": "3"}
    assert result["metadata"]["labels"] == {"b": "2"}


def test_configmap_finalizers_merge_in_kube_order() -> None:
    """The patch's items come in the patch's order; the others keep their stored places."""
    result = configmap({"metadata": {"finalizers": ["x.io/three", "x.io/one"]}})
    assert result["metadata"]["finalizers"] == ["x.io/three", "x.io/one", "x.io/two"]


def test_configmap_delete_from_finalizers() -> None:
    """What kopf and controllers send to drop their finalizer."""
    result = configmap({"metadata": {"$deleteFromPrimitiveList/finalizers": ["x.io/one"]}})
    assert result["metadata"]["finalizers"] == ["x.io/two"]


def test_configmap_owner_references_merge_by_uid() -> None:
    owners = [
        {"uid": "u1", "controller": True},
        {"apiVersion": "v1", "kind": "Pod", "name": "p2", "uid": "u2"},
    ]
    result = configmap({"metadata": {"ownerReferences": owners}})
    assert result["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "p1", "uid": "u1", "controller": True},
        {"apiVersion": "v1", "kind": "Pod", "name": "p2", "uid": "u2"},
    ]
