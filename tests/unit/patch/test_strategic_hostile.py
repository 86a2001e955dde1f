"""Strategic merge patches a client should not send: directives with bad values and in odd places answer with
kube's message and a 4xx (:class:`PatchError`), never another exception. The cases kube answers 400 or 422
(k8s.io/apiserver handlers/patch.go ``interpretStrategicMergePatchError``) keep kube's code; those it passes
through as a 500 are 400 here. Fuzzed with hypothesis against kube's own schemas (Pod, Service, Deployment)."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apiserver.patch.jsonpatch import PatchError
from apiserver.patch.strategic import Resolver, apply_strategic_merge_patch, components_resolver
from tests.serverproc import FIXTURES

OPENAPI = FIXTURES / "kubernetes" / "openapi-v3"
KINDS = {
    "Pod": ("api__v1_openapi.json", "io.k8s.api.core.v1.Pod"),
    "Service": ("api__v1_openapi.json", "io.k8s.api.core.v1.Service"),
    "Deployment": ("apis__apps__v1_openapi.json", "io.k8s.api.apps.v1.Deployment"),
}


@cache
def schema_of(kind: str) -> tuple[Mapping[str, Any], Resolver]:
    document, name = KINDS[kind]
    schemas = json.loads((OPENAPI / document).read_text())["components"]["schemas"]
    return schemas[name], components_resolver(schemas)


POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "finalizers": ["a", "b"], "labels": {"app": "x"}},
    "spec": {
        "containers": [
            {"name": "c", "image": "i", "args": ["x"], "ports": [{"containerPort": 80}]}
        ],
        "volumes": [{"name": "v", "emptyDir": {}}],
    },
}


def apply(kind: str, original: Any, patch: Any) -> Any:
    """Apply, checking that neither input is modified (whatever the outcome)."""
    schema, resolve = schema_of(kind)
    before, patch_before = copy.deepcopy(original), copy.deepcopy(patch)
    try:
        return apply_strategic_merge_patch(original, patch, schema, resolve=resolve)
    finally:
        assert (original, patch) == (before, patch_before), "an input was modified"


@pytest.mark.parametrize(
    ("patch", "code", "message"),
    [
        pytest.param(
            {"$patch": "zzz"},
            400,
            "unknown patch type: zzz in map: map[$patch:zzz]",
            id="unknown $patch at the root: ErrBadPatchType, 500 in kube",
        ),
        pytest.param(
            {"spec": {"$patch": None}},
            400,
            "unknown patch type: %!s(<nil>) in map: map[$patch:<nil>]",
            id="$patch null",
        ),
        pytest.param(
            {"spec": {"$patch": {"a": 1}}},
            400,
            "unknown patch type: map[a:%!s(int64=1)] in map: map[$patch:map[a:1]]",
            id="$patch an object",
        ),
        pytest.param(
            {"spec": {"$setElementOrder/containers": 5}},
            400,
            "expected a []interface {}, but received a int64",
            id="$setElementOrder a number: ErrBadArgType, 500 in kube",
        ),
        pytest.param(
            {"spec": {"$setElementOrder/containers": {"name": "c"}}},
            400,
            "expected a []interface {}, but received a map[string]interface {}",
            id="$setElementOrder an object",
        ),
        pytest.param(
            {"spec": {"$setElementOrder/containers": [1]}},
            400,
            None,
            id="$setElementOrder of maps holding a number",
        ),
        pytest.param(
            {"spec": {"$setElementOrder/containers": [{"image": "i"}]}},
            400,
            "map: map[image:i] does not contain declared merge key: name",
            id="$setElementOrder item without the merge key",
        ),
        pytest.param(
            {"spec": {"$retainKeys": 5}},
            400,
            "invalid patch format of retainKeys",
            id="$retainKeys a number: ErrBadPatchFormatForRetainKeys, 400 in kube",
        ),
        pytest.param(
            {"spec": {"$retainKeys": [["containers"]]}},
            400,
            "runtime error: hash of unhashable type []interface {}",
            id="$retainKeys holding a list: a panic in kube",
        ),
        pytest.param(
            {"metadata": {"$deleteFromPrimitiveList/finalizers": [{"a": 1}]}},
            400,
            "list element types are not identical: [[a b] [map[a:1]]]",
            id="$deleteFromPrimitiveList of objects",
        ),
        pytest.param(
            {"metadata": {"$deleteFromPrimitiveList": ["a"]}},
            400,
            "invalid patch format of primitive list",
            id="$deleteFromPrimitiveList without a field: 400 in kube",
        ),
        pytest.param(
            {"spec": {"containers": [{"$patch": "delete"}]}},
            400,
            "map: map[$patch:delete] does not contain declared merge key: name",
            id="$patch delete without the merge key",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "c", "$patch": "merge"}]}},
            400,
            "merging lists cannot yet be specified in the patch",
            id="$patch merge in a list",
        ),
        pytest.param(
            {"spec": {"containers": ["c"]}},
            400,
            "list element types are not identical: [[map[args:[x] image:i name:c ports:[map[containerPort:80]]]] [c]]",
            id="a string among merged objects",
        ),
        pytest.param(
            {"metadata": {"finalizers": [["c"]]}},
            422,
            "lists of lists are not supported",
            id="lists of lists: ErrNoListOfLists, 422 in kube",
        ),
    ],
)
def test_bad_directives_answer_kubes_message(patch: Any, code: int, message: str | None) -> None:
    original = {**POD, "metadata": {**POD["metadata"], "finalizers": []}} if code == 422 else POD
    with pytest.raises(PatchError) as caught:
        apply("Pod", original, patch)
    assert caught.value.code == code
    if message is not None:
        assert caught.value.message == message


def test_delete_from_primitive_list_that_is_no_list_changes_nothing() -> None:
    # mergeMap: a deletion whose value's type differs from the stored value's is skipped
    for value in (5, {"a": 1}, "a"):
        patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": value}}
        assert apply("Pod", POD, patch) == POD


# --- fuzzing ----------------------------------------------------------------------------------------------

# the names these kinds' patch strategies hang on, the directives, and names the schemas lack
_KEYS = st.sampled_from(
    [
        "metadata",
        "spec",
        "containers",
        "initContainers",
        "name",
        "image",
        "args",
        "env",
        "value",
        "ports",
        "port",
        "containerPort",
        "protocol",
        "volumes",
        "emptyDir",
        "hostPath",
        "path",
        "finalizers",
        "labels",
        "ownerReferences",
        "uid",
        "template",
        "strategy",
        "type",
        "rollingUpdate",
        "tolerations",
        "key",
        "unknown",
        "$patch",
        "$retainKeys",
        "$setElementOrder/containers",
        "$setElementOrder/ports",
        "$setElementOrder/finalizers",
        "$setElementOrder/",
        "$setElementOrder",
        "$deleteFromPrimitiveList/finalizers",
        "$deleteFromPrimitiveList/args",
        "$deleteFromPrimitiveList/containers",
        "$deleteFromPrimitiveList",
        "$other",
    ]
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(["merge", "replace", "delete", "retainKeys", "zzz", "c", "a", "80", ""]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=16,
)
_DOCUMENTS = st.dictionaries(_KEYS, _VALUES, max_size=4)


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(original=_DOCUMENTS, patch=_VALUES)
def test_random_patches_fail_only_with_patch_errors(kind: str, original: Any, patch: Any) -> None:
    try:
        result = apply(kind, original, patch)
    except PatchError as error:
        assert 400 <= error.code < 500, error.message
        return
    assert isinstance(result, dict)


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patch=_DOCUMENTS)
def test_random_patches_of_a_real_object_fail_only_with_patch_errors(kind: str, patch: Any) -> None:
    try:
        apply(kind, POD, patch)
    except PatchError as error:
        assert 400 <= error.code < 500, error.message
