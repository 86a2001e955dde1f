"""Tests of apiserver.schema.prune against apiextensions-apiserver pkg/apiserver/schema/pruning/algorithm.go
(PruneWithOptions) and the unknown-field path format of schema/options.go (UnknownFieldPathOptions),
which is what kube prints in ``strict decoding error: unknown field "<path>"``."""

from __future__ import annotations

import copy
import glob
from pathlib import Path
from typing import Any

import pytest
import yaml

from apiserver.schema import prune
from tests.serverproc import FIXTURES

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader is 5x faster on big CRDs


def load_yaml(path: Path) -> Any:
    return yaml.load(path.read_text(), Loader=LOADER)


def load_yaml_all(path: Path) -> list[Any]:
    return list(yaml.load_all(path.read_text(), Loader=LOADER))


def obj_schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


CONTAINERS = obj_schema(
    spec=obj_schema(
        containers={
            "type": "array",
            "items": obj_schema(name={"type": "string"}, image={"type": "string"}),
        },
        labels={"type": "object", "additionalProperties": obj_schema(value={"type": "string"})},
    )
)


def test_crontab_pruning_example_of_the_kubernetes_docs() -> None:
    crd = load_yaml(FIXTURES / "crds" / "k8s-docs-crontab" / "crontab-basic.yaml")
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    obj = load_yaml(FIXTURES / "custom-resources" / "k8s-docs-crontab" / "my-crontab-pruning.yaml")
    assert prune(obj, schema) == ["spec.someRandomField"]
    assert obj["spec"] == {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image"}
    assert obj["metadata"] == {"name": "my-new-cron-object"}


def test_paths_use_dots_for_members_and_brackets_for_items() -> None:
    obj = {
        "spec": {
            "containers": [{"name": "a"}, {"name": "b", "bogus": 1, "other": {"x": 1}}],
            "labels": {"k": {"value": "v", "extra": True}},
            "zzz": 1,
        },
        "top": 1,
    }
    assert prune(obj, CONTAINERS) == [
        "spec.containers[1].bogus",
        "spec.containers[1].other",
        "spec.labels.k.extra",
        "spec.zzz",
        "top",
    ]
    assert obj == {
        "spec": {"containers": [{"name": "a"}, {"name": "b"}], "labels": {"k": {"value": "v"}}}
    }


def test_root_api_version_kind_and_metadata_are_kept_untouched() -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "X",
        "metadata": {"name": "a", "unknownMeta": 1},
        "status": {},
    }
    assert prune(obj, obj_schema(spec={"type": "object"})) == ["status"]
    assert obj == {"apiVersion": "v1", "kind": "X", "metadata": {"name": "a", "unknownMeta": 1}}


def test_meta_fields_are_pruned_below_the_root() -> None:
    obj = {"spec": {"kind": "x", "metadata": {}}}
    assert prune(obj, obj_schema(spec={"type": "object"})) == ["spec.kind", "spec.metadata"]


def test_embedded_resources_keep_their_meta_fields() -> None:
    embedded = {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "properties": {"spec": {"type": "object"}},
    }
    obj = {
        "template": {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"x": 1},
            "spec": {},
            "bogus": 1,
        }
    }
    assert prune(obj, obj_schema(template=embedded)) == ["template.bogus"]
    assert obj["template"] == {"apiVersion": "v1", "kind": "Pod", "metadata": {"x": 1}, "spec": {}}


def test_preserve_unknown_fields_keeps_unknowns_but_prunes_declared_parts() -> None:
    schema = obj_schema(
        spec={
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {"known": obj_schema(a={"type": "string"})},
        }
    )
    obj = {"spec": {"free": {"x": [1, {"y": 2}]}, "known": {"a": "ok", "b": "pruned"}}}
    assert prune(obj, schema) == ["spec.known.b"]
    assert obj == {"spec": {"free": {"x": [1, {"y": 2}]}, "known": {"a": "ok"}}}


def test_preserve_unknown_fields_at_the_root() -> None:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    obj = {"anything": {"goes": True}}
    assert prune(obj, schema) == []
    assert obj == {"anything": {"goes": True}}


def test_arrays_under_preserve_unknown_fields_keep_unknown_members_of_items() -> None:
    schema = obj_schema(
        list={
            "type": "array",
            "x-kubernetes-preserve-unknown-fields": True,
            "items": obj_schema(inner=obj_schema(a={"type": "string"})),
        }
    )
    obj = {"list": [{"free": 1, "inner": {"a": "x", "b": "y"}}]}
    assert prune(obj, schema) == ["list[0].inner.b"]
    assert obj == {"list": [{"free": 1, "inner": {"a": "x"}}]}


def test_objects_where_a_scalar_is_declared_lose_their_members() -> None:
    # kube prunes with the scalar's schema (no properties): the members go, the type error stays for
    # validation to report.
    obj = {"n": {"a": 1}}
    assert prune(obj, obj_schema(n={"type": "integer"})) == ["n.a"]
    assert obj == {"n": {}}


def test_additional_properties_true_keeps_keys_but_prunes_inside_objects() -> None:
    schema = obj_schema(m={"type": "object", "additionalProperties": True})
    obj = {"m": {"k": "v", "o": {"x": 1}}}
    assert prune(obj, schema) == ["m.o.x"]
    assert obj == {"m": {"k": "v", "o": {}}}


def test_paths_are_sorted_bytewise() -> None:
    obj = {"b": 1, "a": {"z": 1}, "B": 1, "a.": 1}
    assert prune(obj, obj_schema(a={"type": "object"})) == ["B", "a.", "a.z", "b"]


def test_nothing_to_prune_returns_an_empty_list_and_keeps_the_object() -> None:
    obj = {"spec": {"containers": [{"name": "a", "image": "b"}]}}
    before = copy.deepcopy(obj)
    assert prune(obj, CONTAINERS) == []
    assert obj == before


def crd_samples() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    schemas: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(glob.glob(str(FIXTURES / "crds" / "*.yaml"))):
        crd = load_yaml(Path(path))
        for version in crd["spec"]["versions"]:
            gv = f"{crd['spec']['group']}/{version['name']}"
            schemas[(gv, crd["spec"]["names"]["kind"])] = version["schema"]["openAPIV3Schema"]
    samples = []
    for path in sorted(glob.glob(str(FIXTURES / "custom-resources" / "*" / "*.yaml"))):
        for doc in load_yaml_all(Path(path)):
            key = (doc["apiVersion"], doc["kind"])
            if key in schemas:
                samples.append((f"{Path(path).name}:{doc['kind']}", doc, schemas[key]))
    return samples


@pytest.mark.parametrize(
    ("name", "obj", "schema"), crd_samples(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_published_examples_of_real_crds_have_no_unknown_fields(
    name: str, obj: dict[str, Any], schema: dict[str, Any]
) -> None:
    before = copy.deepcopy(obj)
    assert prune(obj, schema) == []
    assert obj == before
