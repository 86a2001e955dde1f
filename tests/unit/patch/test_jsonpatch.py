"""Tests of apiserver.patch.jsonpatch: the json-patch-tests suite (RFC 6902), the RFC 7386 examples, and the
error messages and HTTP codes of kube-apiserver's patch handler (k8s.io/apiserver
pkg/endpoints/handlers/patch.go with gopkg.in/evanphx/json-patch.v4)."""

from __future__ import annotations

import copy
import json
import re
import time
from typing import Any

import jsonpatch
import jsonpointer
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apiserver.encoding.limits import MAX_DEPTH
from apiserver.patch.jsonpatch import (
    INVALID_PATCH_STATUS_MESSAGE,
    MAX_COPY_BYTES,
    MAX_JSON_PATCH_OPERATIONS,
    PatchError,
    apply_json_patch,
    apply_merge_patch,
)
from tests.serverproc import FIXTURES


def _suite(name: str) -> list[Any]:
    records = json.loads((FIXTURES / "json-patch" / name).read_text())
    return [
        pytest.param(r, id=f"{name}[{i}] {r.get('comment', '')}".strip())
        for i, r in enumerate(records)
        if not r.get("disabled")
    ]


SUITE = _suite("tests.json") + _suite("spec_tests.json")


@pytest.mark.parametrize("record", SUITE)
def test_json_patch_suite(record: dict[str, Any]) -> None:
    doc = record["doc"]
    before = copy.deepcopy(doc)
    if "error" in record:
        with pytest.raises(PatchError):
            apply_json_patch(doc, record["patch"])
    else:
        result = apply_json_patch(doc, record["patch"])
        if "expected" in record:
            assert result == record["expected"]
    assert doc == before, "the target must not be modified"


def test_suite_is_complete() -> None:
    # 95 + 17 records, 4 of them disabled (SOURCES.md §1).
    assert len(SUITE) == 108


def _merge_cases() -> list[Any]:
    cases = json.loads((FIXTURES / "merge-patch" / "rfc7386_appendix_a.json").read_text())
    cases += json.loads((FIXTURES / "merge-patch" / "rfc7386_body_examples.json").read_text())
    return [pytest.param(c, id=f"{i}") for i, c in enumerate(cases)]


@pytest.mark.parametrize("case", _merge_cases())
def test_merge_patch_rfc7386(case: dict[str, Any]) -> None:
    original = copy.deepcopy(case["original"])
    patch = copy.deepcopy(case["patch"])
    assert apply_merge_patch(original, patch) == case["result"]
    assert original == case["original"]
    assert patch == case["patch"]


def test_merge_patch_copies_only_the_changed_path() -> None:
    target: dict[str, Any] = {"metadata": {"labels": {"a": "1"}}, "spec": {"big": [1, 2, 3]}}
    result = apply_merge_patch(target, {"metadata": {"labels": {"b": "2"}}})
    assert result == {"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"big": [1, 2, 3]}}
    assert target["metadata"]["labels"] == {"a": "1"}
    assert result["spec"] is target["spec"]


def test_json_patch_copies_only_the_changed_path() -> None:
    target: dict[str, Any] = {"metadata": {"finalizers": ["a"]}, "spec": {"big": [1, 2, 3]}}
    result = apply_json_patch(
        target, [{"op": "add", "path": "/metadata/finalizers/-", "value": "b"}]
    )
    assert result == {"metadata": {"finalizers": ["a", "b"]}, "spec": {"big": [1, 2, 3]}}
    assert target == {"metadata": {"finalizers": ["a"]}, "spec": {"big": [1, 2, 3]}}
    assert result["spec"] is target["spec"]


def test_json_patch_does_not_share_values_with_the_patch() -> None:
    value = {"a": [1]}
    result: dict[str, Any] = apply_json_patch({}, [{"op": "add", "path": "/x", "value": value}])
    result["x"]["a"].append(2)
    assert value == {"a": [1]}


def test_a_move_is_applied_against_the_shifted_array() -> None:
    target = {"a": [{"n": 0}, {"n": 1}, {"n": 2}]}
    result = apply_json_patch(target, [{"op": "move", "from": "/a/0", "path": "/a/1/moved"}])
    assert result == {"a": [{"n": 1}, {"n": 2, "moved": {"n": 0}}]}
    assert target == {"a": [{"n": 0}, {"n": 1}, {"n": 2}]}


def test_later_operations_see_earlier_ones_and_failures_leave_the_target_alone() -> None:
    target = {"metadata": {"resourceVersion": "5"}, "spec": {}}
    ops = [
        {"op": "add", "path": "/spec/x", "value": 1},
        {"op": "test", "path": "/spec/x", "value": 1},
        {"op": "test", "path": "/metadata/resourceVersion", "value": "4"},
    ]
    with pytest.raises(PatchError) as err:
        apply_json_patch(target, ops)
    assert err.value.message == "testing value /metadata/resourceVersion failed: test failed"
    assert err.value.code == 422
    assert err.value.status_message == INVALID_PATCH_STATUS_MESSAGE
    assert target == {"metadata": {"resourceVersion": "5"}, "spec": {}}


@pytest.mark.parametrize(
    ("doc", "ops", "message"),
    [
        (
            {"a": 1},
            [{"op": "remove", "path": "/b"}],
            "error in remove for path: '/b': Unable to remove nonexistent key: b: missing value",
        ),
        (
            {"a": 1},
            [{"op": "add", "path": "/x/y", "value": 1}],
            'add operation does not apply: doc is missing path: "/x/y": missing value',
        ),
        (
            {"a": [1]},
            [{"op": "add", "path": "/a/5", "value": 1}],
            "error in add for path: '/a/5': Unable to access invalid index: 5: invalid index referenced",
        ),
        (
            {"a": 1},
            [{"op": "replace", "path": "/b", "value": 1}],
            "replace operation does not apply: doc is missing key: /b: missing value",
        ),
        (
            {"a": 1},
            [{"op": "move", "from": "/b", "path": "/c"}],
            "error in move for path: 'b': Unable to remove nonexistent key: b: missing value",
        ),
        (
            {"a": 1},
            [{"op": "test", "path": "/x/y", "value": 1}],
            "test operation does not apply: is missing path: /x/y: missing value",
        ),
        ({"a": 1}, [{"op": "frobnicate", "path": "/a"}], "Unexpected kind: frobnicate"),
        ({"a": 1}, [{"path": "/a"}], "Unexpected kind: unknown"),
        (
            {"a": 1},
            [{"op": "add", "value": 1}],
            "add operation failed to decode path: missing value",
        ),
        (
            {"a": 1},
            [{"op": "test", "value": 1}],
            "test operation failed to decode path: operation missing path field: missing value",
        ),
        (
            {"a": 1},
            [{"op": "copy", "path": "/b"}],
            "copy operation failed to decode from: operation, missing from field: missing value",
        ),
    ],
)
def test_error_messages_are_evanphx_json_patch_messages(doc: Any, ops: Any, message: str) -> None:
    with pytest.raises(PatchError) as err:
        apply_json_patch(doc, ops)
    assert err.value.message == message
    assert str(err.value) == message
    assert err.value.code == 422


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ({"op": "add"}, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
        ("add", "json: cannot unmarshal string into Go value of type jsonpatch.Patch"),
        ([1], "json: cannot unmarshal number into Go value of type jsonpatch.Operation"),
    ],
)
def test_undecodable_patches_are_bad_requests(ops: Any, message: str) -> None:
    with pytest.raises(PatchError) as err:
        apply_json_patch({}, ops)
    assert (err.value.code, err.value.message, err.value.status_message) == (400, message, message)


def test_too_many_operations() -> None:
    with pytest.raises(PatchError) as err:
        apply_json_patch({}, [{"op": "test", "path": "", "value": {}}] * 10001)
    assert err.value.code == 413
    assert err.value.message == "The allowed maximum operations in a JSON patch is 10000, got 10001"


def test_kube_style_resource_version_lock() -> None:
    """kopf and kubectl's SSA migration lock patches on metadata.resourceVersion."""
    target = {"metadata": {"resourceVersion": "7", "finalizers": ["kopf"]}}
    ops = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
        {"op": "remove", "path": "/metadata/finalizers/0"},
    ]
    assert apply_json_patch(target, ops) == {"metadata": {"resourceVersion": "7", "finalizers": []}}
    assert target["metadata"]["finalizers"] == ["kopf"]


def test_root_replacement() -> None:
    assert apply_json_patch({"a": 1}, [{"op": "replace", "path": "", "value": {"b": 2}}]) == {
        "b": 2
    }


def test_a_null_json_patch_is_empty_and_a_merge_patch_replaces_non_objects() -> None:
    target = {"a": 1}
    assert apply_json_patch(target, None) is target
    assert apply_merge_patch([1, 2], {"a": None, "b": 1}) == {"b": 1}
    assert apply_merge_patch({"a": 1}, [1]) == [1]


# --- bounded work: kube's operation cap, json-patch's AccumulatedCopySizeLimit, the depth bound ----------


def _doubling(copies: int) -> list[dict[str, Any]]:
    """``copy`` operations that each put the whole list into itself: the list doubles every time."""
    return [{"op": "copy", "from": "/spec/l", "path": "/spec/l/-"} for _ in range(copies)]


def test_doubling_copies_stop_at_kubes_accumulated_copy_size_limit_quickly() -> None:
    # the case: a patch under 2 KB whose 25 copies would make 2**25 items
    ops = _doubling(25)
    assert len(json.dumps(ops)) < 2048
    started = time.perf_counter()
    with pytest.raises(PatchError) as err:
        apply_json_patch({"spec": {"l": ["x" * 50]}}, ops)
    assert time.perf_counter() - started < 3  # about 10 ms; without the limit it runs for minutes
    # gopkg.in/evanphx/json-patch.v4 errors.go AccumulatedCopySizeError; kube answers it as every failed
    # operation: 422 with the generic message (handlers/patch.go applyJSPatch)
    assert err.value.code == 422
    assert err.value.status_message == INVALID_PATCH_STATUS_MESSAGE
    assert re.fullmatch(
        r"Unable to complete the copy, the accumulated size increase of copy is (\d+), "
        r"exceeding the limit 3145728",
        err.value.message,
    )
    assert (
        MAX_COPY_BYTES == 3 * 1024 * 1024
    )  # k8s.io/apiserver server/config.go JSONPatchMaxCopyBytes


def test_copies_up_to_the_limit_apply() -> None:
    result = apply_json_patch({"spec": {"l": ["x"]}}, _doubling(10))
    assert len(json.dumps(result["spec"]["l"])) > 1024 * 3  # 2**10 nested copies of ["x"]
    assert result == json.loads(json.dumps(result)), "a plain tree"


def test_accumulated_size_is_counted_as_go_encodes_it() -> None:
    # Go's encoding/json writes each ``<``, ``&`` and ``>`` as \u003c, \u0026, \u003e: 6 bytes, not 1
    value = {"k": "<&>" * 1000}
    copies = MAX_COPY_BYTES // (8 + 6 * 3000) + 1
    ops = [{"op": "copy", "from": "/v", "path": f"/c{i}"} for i in range(copies)]
    with pytest.raises(PatchError, match="exceeding the limit"):
        apply_json_patch({"v": value}, ops)
    assert apply_json_patch({"v": value}, ops[:-1])[f"c{copies - 2}"] == value


def test_copied_values_are_independent() -> None:
    target = {"a": {"x": {"k": 1}}}
    ops = [
        {"op": "add", "path": "/a/y", "value": 2},  # the patch now owns /a
        {"op": "copy", "from": "/a", "path": "/a/b"},  # into itself
        {"op": "add", "path": "/a/b/x/k2", "value": 2},
        {"op": "copy", "from": "/a/b", "path": "/c"},
        {"op": "remove", "path": "/c/x"},
    ]
    result = apply_json_patch(target, ops)
    assert result == {
        "a": {"x": {"k": 1}, "y": 2, "b": {"x": {"k": 1, "k2": 2}, "y": 2}},
        "c": {"y": 2},
    }
    assert target == {"a": {"x": {"k": 1}}}
    result["a"]["x"]["k"] = 9
    assert result["a"]["b"]["x"]["k"] == 1


def test_the_patched_document_may_not_nest_deeper_than_a_decoded_body() -> None:
    deep: Any = "x"
    for _ in range(MAX_DEPTH - 1):
        deep = {"a": deep}
    # MAX_DEPTH levels: the root and the value's MAX_DEPTH - 1
    assert apply_json_patch({}, [{"op": "add", "path": "/v", "value": deep}])["v"] is not deep
    with pytest.raises(PatchError) as err:
        apply_json_patch({"w": {}}, [{"op": "add", "path": "/w/v", "value": deep}])
    assert (err.value.code, err.value.message) == (422, "invalid character '{' exceeded max depth")
    # copies of a value into itself deepen the document too
    ops = [{"op": "copy", "from": "/a", "path": "/a/a"}] * (MAX_DEPTH + 5)
    with pytest.raises(PatchError, match="exceeded max depth"):
        apply_json_patch({"a": {}}, ops)


def test_operations_at_the_cap_stay_linear() -> None:
    ops = [
        {"op": "add", "path": "/l/-", "value": {"i": i}} for i in range(MAX_JSON_PATCH_OPERATIONS)
    ]
    started = time.perf_counter()
    assert len(apply_json_patch({"l": []}, ops)["l"]) == MAX_JSON_PATCH_OPERATIONS
    assert time.perf_counter() - started < 10  # about 0.1 s; generous for a loaded machine


# --- the library as the reference: whatever it applies, this applies alike ----------------------------------

_KEYS = st.sampled_from(["a", "b", "c", "0", "1"])
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["x", "y"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)
_POINTERS = st.lists(st.sampled_from(["a", "b", "c", "0", "1", "2", "-"]), max_size=3).map(
    lambda parts: "".join(f"/{part}" for part in parts)
)
_OPS = st.one_of(
    st.fixed_dictionaries(
        {"op": st.sampled_from(["add", "replace", "test"]), "path": _POINTERS, "value": _VALUES}
    ),
    st.fixed_dictionaries({"op": st.just("remove"), "path": _POINTERS}),
    st.fixed_dictionaries(
        {"op": st.sampled_from(["move", "copy"]), "from": _POINTERS, "path": _POINTERS}
    ),
)


@settings(max_examples=500, deadline=None)
@given(doc=st.dictionaries(_KEYS, _VALUES, max_size=3), ops=st.lists(_OPS, max_size=6))
def test_operations_apply_as_the_rfc_6902_library_applies_them(doc: Any, ops: Any) -> None:
    before, ops_before = copy.deepcopy(doc), copy.deepcopy(ops)
    try:
        expected = jsonpatch.apply_patch(copy.deepcopy(doc), copy.deepcopy(ops))
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException):
        with pytest.raises(PatchError):
            apply_json_patch(doc, ops)
    else:
        result = apply_json_patch(doc, ops)
        assert result == expected
        assert result == json.loads(json.dumps(result)), "a plain tree"
    assert (doc, ops) == (before, ops_before), "inputs are left alone"


def test_a_target_deeper_than_the_bound_may_be_patched_without_deepening_it() -> None:
    # a stored object's managedFields.fieldsV1 mirror it four levels down, past the bound of a body
    deep: Any = {}
    for _ in range(MAX_DEPTH + 3):
        deep = {"a": deep}
    target = {"metadata": {"managedFields": [{"fieldsV1": deep}]}, "spec": {}}
    assert apply_json_patch(target, [{"op": "add", "path": "/spec/x", "value": {"y": 1}}])
    with pytest.raises(PatchError, match="exceeded max depth"):
        apply_json_patch(target, [{"op": "copy", "from": "/metadata", "path": "/spec/m"}])
