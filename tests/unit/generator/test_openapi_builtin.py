"""The built-in kinds' OpenAPI documents against kube 1.35's (tests/fixtures/kubernetes/openapi-v3, the
release-1.35 api/openapi-spec/v3 files): the same component names and group-version-kinds, and every field we
publish with kube's type (``$ref``s followed) and the Go types named as kube names them, so that `kubectl explain`
reads the same types from either server.
Every served group, the auth groups included, has a v3 document and its definitions in /openapi/v2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.serverproc import FIXTURES

GENERATED = Path(__file__).resolve().parents[3] / "generated" / "openapi"
KUBE = FIXTURES / "kubernetes" / "openapi-v3"
# our document, kube's document, the kinds both publish
DOCUMENTS = [
    (
        "api__v1",
        "api__v1_openapi",
        ["ConfigMap", "Event", "Namespace", "Secret", "Service", "ServiceAccount"],
        "io.k8s.api.core.v1.",
    ),
    (
        "apis__rbac.authorization.k8s.io__v1",
        "apis__rbac.authorization.k8s.io__v1_openapi",
        ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"],
        "io.k8s.api.rbac.v1.",
    ),
    (
        "apis__apiextensions.k8s.io__v1",
        "apis__apiextensions.k8s.io__v1_openapi",
        ["CustomResourceDefinition"],
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.",
    ),
]


def load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text())
    return document


def referred(node: dict[str, Any]) -> str | None:
    """The component a field refers to (``$ref`` or a lone ``allOf``), by name, in v3 or v2."""
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1:
        node = all_of[0]
    ref = node.get("$ref")
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def resolve(node: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    """A field's schema with a lone ``allOf: [$ref]`` or ``$ref`` followed."""
    name = referred(node)
    return node if name is None else resolve(schemas[name], schemas)


def shape(node: dict[str, Any], schemas: dict[str, Any]) -> str:
    """What `kubectl explain` calls the type: int-or-string, []T, map[string]T, object, or the JSON type."""
    node = resolve(node, schemas)
    if node.get("format") == "int-or-string" or node.get("x-kubernetes-int-or-string"):
        return "int-or-string"
    if node.get("type") == "array":
        return "[]" + shape(node.get("items", {}), schemas)
    if isinstance(node.get("additionalProperties"), dict):
        return "map[string]" + shape(node["additionalProperties"], schemas)
    return str(node.get("type", "object"))


def differences(
    ours: dict[str, Any],
    kube: dict[str, Any],
    mine: dict[str, Any],
    theirs: dict[str, Any],
    path: str,
    seen: frozenset[str] = frozenset(),
) -> list[str]:
    """Type differences along kube's schema; a recursive type (JSONSchemaProps) is walked once."""
    found = []
    component = referred(kube)
    if component in seen:
        return []
    if component is not None:
        seen |= {component}
    ours, kube = resolve(ours, mine), resolve(kube, theirs)
    if shape(ours, mine) != shape(kube, theirs):
        return [f"{path}: {shape(ours, mine)} here, {shape(kube, theirs)} in kube"]
    if ours.get("type") == "array":
        return differences(ours["items"], kube["items"], mine, theirs, f"{path}[]", seen)
    for name, field in ours.get("properties", {}).items():
        if name == "metadata":
            continue  # both refer to ObjectMeta; ours is apiforge's shared meta/v1
        if name not in kube.get("properties", {}):
            found.append(f"{path}.{name}: not in kube's schema")
            continue
        found += differences(field, kube["properties"][name], mine, theirs, f"{path}.{name}", seen)
    return found


@pytest.mark.parametrize(("ours", "theirs", "kinds", "prefix"), DOCUMENTS)
def test_built_in_kinds_have_kube_names_and_types(
    ours: str, theirs: str, kinds: list[str], prefix: str
) -> None:
    mine = load(GENERATED / f"{ours}.json")["components"]["schemas"]
    kube = load(KUBE / f"{theirs}.json")["components"]["schemas"]
    problems = []
    for kind in kinds:
        name = prefix + kind
        assert name in mine, f"{name} is not published under kube's name"
        assert (
            mine[name]["x-kubernetes-group-version-kind"]
            == (kube[name]["x-kubernetes-group-version-kind"])
        )
        problems += differences(mine[name], kube[name], mine, kube, kind)
    assert problems == []
    # the Go types the definitions name (openapiTypes) are kube's components, ServicePort, PolicyRule...
    named = {name for name in mine if name.startswith(prefix)}
    assert len(named) > 2 * len(kinds)
    assert named <= set(kube)


def test_int_or_string_is_kubes_named_type_in_v3_and_v2() -> None:
    """kubectl explain prints ``<IntOrString>`` from the referenced component's name (its template's
    typeGuess); /openapi/v2 carries it as kube's v2 does, a string of format int-or-string."""
    name = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
    mine = load(GENERATED / "api__v1.json")["components"]["schemas"]
    kube = load(KUBE / "api__v1_openapi.json")["components"]["schemas"]
    assert mine[name] == kube[name]
    port = mine["io.k8s.api.core.v1.ServicePort"]
    assert port["properties"]["targetPort"]["allOf"] == [{"$ref": f"#/components/schemas/{name}"}]
    swagger = load(GENERATED / "swagger.json")["definitions"]
    assert (swagger[name]["type"], swagger[name]["format"]) == ("string", "int-or-string")


@pytest.mark.parametrize(
    ("document", "kind"),
    [
        ("apis__authentication.k8s.io__v1", "io.k8s.api.authentication.v1.SelfSubjectReview"),
        ("apis__authentication.k8s.io__v1", "io.k8s.api.authentication.v1.TokenReview"),
        ("apis__authorization.k8s.io__v1", "io.k8s.api.authorization.v1.SubjectAccessReview"),
        (
            "apis__authorization.k8s.io__v1",
            "io.k8s.api.authorization.v1.SelfSubjectRulesReview",
        ),
    ],
)
def test_the_auth_groups_are_published(document: str, kind: str) -> None:
    assert kind in load(GENERATED / f"{document}.json")["components"]["schemas"]
    assert kind in load(GENERATED / "swagger.json")["definitions"]


def reference_differences(
    ours: dict[str, Any],
    kube: dict[str, Any],
    mine: dict[str, Any],
    theirs: dict[str, Any],
    path: str,
    seen: set[str],
) -> list[str]:
    """Where kube's field refers to a named type (ObjectReference, Time, LabelSelector) and ours does not, or
    to another; the walk follows kube's schema into ours, each named type once."""
    name = referred(kube)
    if name is not None:
        if referred(ours) != name:
            return [f"{path}: {referred(ours)} here, {name} in kube"]
        if name in seen:
            return []
        seen.add(name)
        ours, kube = mine[name], theirs[name]
    if "items" in kube:
        return reference_differences(ours["items"], kube["items"], mine, theirs, f"{path}[]", seen)
    found = []
    for field, schema in ours.get("properties", {}).items():
        if field in kube.get("properties", {}):
            found += reference_differences(
                schema, kube["properties"][field], mine, theirs, f"{path}.{field}", seen
            )
    return found


@pytest.mark.parametrize(("ours", "theirs", "kinds", "prefix"), DOCUMENTS)
def test_fields_refer_to_kube_s_named_types_in_v3_and_v2(
    ours: str, theirs: str, kinds: list[str], prefix: str
) -> None:
    """kube publishes the Go types its kinds share as components of their own and refers to them
    (io.k8s.api.core.v1.ObjectReference, meta/v1 Time and MicroTime, LabelSelector, JSONSchemaProps): our
    documents refer to the same names, in /openapi/v3 and in /openapi/v2's definitions."""
    kube = load(KUBE / f"{theirs}.json")["components"]["schemas"]
    swagger = load(GENERATED / "swagger.json")["definitions"]
    for mine in (load(GENERATED / f"{ours}.json")["components"]["schemas"], swagger):
        problems = []
        for kind in kinds:
            name = prefix + kind
            problems += reference_differences(mine[name], kube[name], mine, kube, kind, set())
        assert problems == []


def test_events_v1_refers_to_core_s_shared_types() -> None:
    """events.k8s.io/v1 Event's fields are core's Go types, as kube publishes them (k8s.io/api events/v1
    types.go): regarding and related an ObjectReference, deprecatedSource an EventSource, eventTime a
    MicroTime; its series is events/v1's own EventSeries. The core types are kube's schemas, descriptions
    included."""
    schemas = load(GENERATED / "apis__events.k8s.io__v1.json")["components"]["schemas"]
    event = schemas["io.k8s.api.events.v1.Event"]["properties"]
    assert {field: referred(event[field]) for field in event if referred(event[field])} == {
        "metadata": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "regarding": "io.k8s.api.core.v1.ObjectReference",
        "related": "io.k8s.api.core.v1.ObjectReference",
        "deprecatedSource": "io.k8s.api.core.v1.EventSource",
        "series": "io.k8s.api.events.v1.EventSeries",
        "eventTime": "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
        "deprecatedFirstTimestamp": "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
        "deprecatedLastTimestamp": "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    }
    series = schemas["io.k8s.api.events.v1.EventSeries"]["properties"]
    assert referred(series["lastObservedTime"]) == "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"
    kube = load(KUBE / "api__v1_openapi.json")["components"]["schemas"]
    for name in ("io.k8s.api.core.v1.ObjectReference", "io.k8s.api.core.v1.EventSource"):
        assert schemas[name] == kube[name]
