"""The OpenAPI documents as a whole: valid with their paths (generation validates their schemas only, see
openapi._validate_schemas), and the files written entry by entry byte for byte what dumping the whole
documents writes."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from generator.jsontext import document, dumps, entries
from generator.load import load_checked, load_text
from generator.openapi import INFO, group_version_document, validate_document
from generator.openapi_files import aggregate_files, fragments, v3_text
from generator.openapi_v2 import swagger_document
from generator.plan import Plan, build_plan
from tests.serverproc import REPO


@pytest.fixture(scope="module")
def shipped() -> Plan:
    """The repository's definitions and the built-in ones."""
    return build_plan(load_checked(REPO / "definitions"))


def served_documents(plan: Plan) -> list[dict[str, Any]]:
    return [
        group_version_document(version)
        for group in plan.groups
        for version in group.versions
        if any(kind.version.served for kind in version.kinds)
    ]


def test_every_shipped_document_is_valid_with_its_paths(shipped: Plan) -> None:
    documents = served_documents(shipped)
    assert len(documents) >= 6
    for document_ in documents:
        validate_document(document_)


SCALE = """\
  scale:
    specReplicasPath: .spec.replicas
    statusReplicasPath: .status.replicas
"""
VERB_SETS = ((), ("create",), ("get", "list", "watch"), ("create", "delete", "patch", "update"))


def _definition(scope: str, status: bool, scale: bool, verbs: tuple[str, ...]) -> str:
    subresources = ("  status: true\n" if status else "") + (SCALE if scale else "")
    return (
        "group: matrix.example.com\nkind: Gadget\n"
        f"scope: {scope}\n"
        + (f"verbs: [{', '.join(verbs)}]\n" if verbs else "")
        + (f"subresources:\n{subresources}" if subresources else "")
        + "versions:\n  v1:\n    storage: true\n    schema:\n      spec:\n        replicas: int32\n"
        "      status:\n        replicas: int32\n"
    )


@pytest.mark.parametrize(
    ("scope", "status", "scale", "verbs"),
    list(itertools.product(("Namespaced", "Cluster"), (False, True), (False, True), VERB_SETS)),
)
def test_every_combination_of_scope_subresources_and_verbs_gives_a_valid_document(
    scope: str, status: bool, scale: bool, verbs: tuple[str, ...]
) -> None:
    plan = build_plan(load_text(_definition(scope, status, scale, verbs)).definitions)
    (group,) = plan.groups
    (version,) = group.versions
    validate_document(group_version_document(version))


def test_a_group_version_file_is_its_document_dumped_whole(shipped: Plan) -> None:
    for document_ in served_documents(shipped):
        assert v3_text(fragments(document_)) == dumps(document_)


def test_the_aggregates_are_the_merged_documents_dumped_whole(shipped: Plan) -> None:
    """What render wrote before the aggregates were joined from entries: every path and schema merged into
    one v3 document, and swagger_document of the v3 documents."""
    documents = served_documents(shipped)
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for document_ in documents:
        paths.update(document_["paths"])
        schemas.update(document_["components"]["schemas"])
    merged = {
        "openapi": "3.0.0",
        "info": INFO,
        "paths": paths,
        "components": {"schemas": schemas},
    }
    files = aggregate_files([(str(i), fragments(d)) for i, d in enumerate(documents)])
    assert files["openapi/aggregate.json"] == dumps(merged)
    assert files["openapi/swagger.json"] == dumps(swagger_document(documents))


def test_one_entry_twice_with_different_values_is_refused(shipped: Plan) -> None:
    document_ = served_documents(shipped)[0]
    clash = fragments(document_)
    name = next(iter(clash["schemas"]))
    other = {**clash, "schemas": {**clash["schemas"], name: json.dumps("something else")}}
    with pytest.raises(ValueError, match=name):
        aggregate_files([("a", clash), ("b", other)])


@pytest.mark.parametrize(
    "members",
    [
        {},
        {"b": [], "a": {}, "é": 'ü\n\t"\\\u0001', "z": [1, 2.5, None, True, {"y": {}, "x": [[]]}]},
        {"\u2028key": {"deep": {"deeper": {"deepest": [{"k": "v"}]}}}, "": 0},
    ],
)
def test_entries_join_to_what_dumps_writes(members: dict[str, Any]) -> None:
    skeleton = {"top": "value", "nested": {"keep": [1]}}
    whole = {**skeleton, "section": members, "nested": {"keep": [1], "inner": members}}
    text = document(
        skeleton, {("section",): entries(members, 1), ("nested", "inner"): entries(members, 2)}
    )
    assert text == dumps(whole)


def test_built_in_kinds_refer_to_kubes_int_or_string_and_quantity() -> None:
    """kube-openapi publishes Go's intstr.IntOrString and resource.Quantity as named components, and kubectl
    explain prints a field's type from the name it refers to (``<IntOrString>``, ``<Quantity>``); a CRD's
    schema keeps its inline int-or-string, as apiextensions publishes it."""
    text = (
        "group: core\nkind: Widget\nbuiltin: true\nversions:\n  v1:\n    storage: true\n    schema:\n"
        "      spec:\n        port: {type: int-or-string, description: Which port.}\n"
        "        size: quantity\n"
    )
    (group,) = build_plan(load_text(text).definitions).groups
    schemas = group_version_document(group.versions[0])["components"]["schemas"]
    spec = schemas["io.k8s.api.core.v1.Widget"]["properties"]["spec"]["properties"]
    ref = "#/components/schemas/io.k8s.apimachinery.pkg."
    assert spec["port"] == {
        "allOf": [{"$ref": f"{ref}util.intstr.IntOrString"}],
        "description": "Which port.",
    }
    assert spec["size"] == {"allOf": [{"$ref": f"{ref}api.resource.Quantity"}]}
    assert schemas["io.k8s.apimachinery.pkg.api.resource.Quantity"]["oneOf"] == [
        {"type": "string"},
        {"type": "number"},
    ]
    custom = build_plan(
        load_text(
            text.replace(
                "group: core\nkind: Widget\nbuiltin: true", "group: example.com\nkind: Widget"
            )
        ).definitions
    )
    custom_schemas = group_version_document(custom.groups[0].versions[0])["components"]["schemas"]
    port = custom_schemas["com.example.v1.Widget"]["properties"]["spec"]["properties"]["port"]
    assert port["x-kubernetes-int-or-string"] is True
