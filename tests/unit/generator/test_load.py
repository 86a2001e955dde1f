"""generator.load: both input formats, short-form expansion, derived names, and errors at exact lines."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from generator.definition import Definition, DefinitionErrors, PrinterColumn, ScaleSubresource
from generator.load import Loaded, definition_files, load, load_definitions, load_text
from generator.load_compact import plural_of
from generator.schema_shorthand import CONDITION, QUANTITY_PATTERN
from generator.yamlsource import PURE_PYTHON_LOADER, read_documents
from tests.serverproc import FIXTURES

CRDS = FIXTURES / "crds"
FILE = Path("definitions/stable.example.com/crontab.yaml")
IMPLICIT = {
    "apiVersion": {"type": "string"},
    "kind": {"type": "string"},
    "metadata": {"type": "object"},
}


def yaml(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def load_one(text: str) -> Definition:
    loaded = load_text(yaml(text), FILE)
    assert len(loaded.definitions) == 1
    return loaded.definitions[0]


def errors_of(text: str) -> list[str]:
    with pytest.raises(DefinitionErrors) as caught:
        load_text(yaml(text), FILE)
    return [str(error) for error in caught.value.errors]


def compact(schema: str, extra: str = "") -> str:
    """A one-version compact definition whose schema block is ``schema`` (indented under ``schema:``)."""
    body = textwrap.indent(yaml(schema), " " * 6)
    return f"group: stable.example.com\nkind: CronTab\n{extra}versions:\n  v1:\n    schema:\n{body}"


def schema_of(schema: str) -> dict[str, Any]:
    return load_one(compact(schema)).versions[0].schema


def field_of(spec: str) -> dict[str, Any]:
    """The schema a single field spec expands to (as ``spec.f``)."""
    result: dict[str, Any] = schema_of(f"spec:\n  f: {spec}\n")["properties"]["spec"]["properties"][
        "f"
    ]
    return result


# --- derived names -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("singular", "plural"),
    [
        ("crontab", "crontabs"),
        ("policy", "policies"),
        ("key", "keys"),
        ("box", "boxes"),
        ("bus", "buses"),
        ("quiz", "quizes"),
        ("match", "matches"),
        ("mesh", "meshes"),
        ("configmap", "configmaps"),
    ],
)
def test_plural_of(singular: str, plural: str) -> None:
    assert plural_of(singular) == plural


def test_names_are_derived_from_kind() -> None:
    d = load_one(compact("spec: object\n"))
    assert (d.group, d.kind, d.plural, d.singular, d.list_kind) == (
        "stable.example.com",
        "CronTab",
        "crontabs",
        "crontab",
        "CronTabList",
    )
    assert d.scope == "Namespaced"
    assert d.source == FILE
    (v1,) = d.versions
    assert (v1.name, v1.served, v1.storage, v1.deprecated) == ("v1", True, True, False)


def test_explicit_names_and_plural_from_singular() -> None:
    d = load_one(
        compact(
            "spec: object\n",
            "singular: policy\nlistKind: Policies\nshortNames: [ct, cts]\ncategories: [all]\nscope: Cluster\n",
        )
    )
    assert (d.singular, d.plural, d.list_kind, d.scope) == (
        "policy",
        "policies",
        "Policies",
        "Cluster",
    )
    assert (d.short_names, d.categories) == (("ct", "cts"), ("all",))


@pytest.mark.parametrize("group", ["core", '""'])
def test_core_group_is_the_empty_group(group: str) -> None:
    text = compact("data: map[string]string\n").replace(
        "group: stable.example.com", f"group: {group}"
    )
    assert load_one(text).group == ""


# --- schema expansion ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("string", {"type": "string"}),
        ("integer", {"type": "integer"}),
        ("int32", {"type": "integer", "format": "int32"}),
        ("int64", {"type": "integer", "format": "int64"}),
        ("number", {"type": "number"}),
        ("float", {"type": "number", "format": "float"}),
        ("double", {"type": "number", "format": "double"}),
        ("boolean", {"type": "boolean"}),
        ("date-time", {"type": "string", "format": "date-time"}),
        ("date", {"type": "string", "format": "date"}),
        ("byte", {"type": "string", "format": "byte"}),
        (
            "int-or-string",
            {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": True,
            },
        ),
        (
            "quantity",
            {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": True,
                "pattern": QUANTITY_PATTERN,
            },
        ),
        ("any", {"x-kubernetes-preserve-unknown-fields": True}),
        ("object", {"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
        ('"[]string"', {"type": "array", "items": {"type": "string"}}),
        (
            '"[][]int32"',
            {
                "type": "array",
                "items": {"type": "array", "items": {"type": "integer", "format": "int32"}},
            },
        ),
        ("map[string]string", {"type": "object", "additionalProperties": {"type": "string"}}),
        (
            "map[string][]quantity",
            {
                "type": "object",
                "additionalProperties": {
                    "type": "array",
                    "items": {
                        "anyOf": [{"type": "integer"}, {"type": "string"}],
                        "x-kubernetes-int-or-string": True,
                        "pattern": QUANTITY_PATTERN,
                    },
                },
            },
        ),
        ("Condition", CONDITION),
        (
            '"[]Condition"',
            {
                "type": "array",
                "items": CONDITION,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["type"],
            },
        ),
    ],
)
def test_type_expressions(spec: str, expected: dict[str, Any]) -> None:
    assert field_of(spec) == expected


def test_quantity_pattern_is_controller_gens() -> None:
    assert (
        f"pattern: {QUANTITY_PATTERN}\n"
        in (CRDS / "batch.tutorial.kubebuilder.io_cronjobs.yaml").read_text()
    )


def test_condition_matches_the_kubernetes_openapi() -> None:
    openapi = json.loads(
        (FIXTURES / "kubernetes" / "openapi-v3" / "api__v1_openapi.json").read_text()
    )
    upstream = openapi["components"]["schemas"]["io.k8s.apimachinery.pkg.apis.meta.v1.Condition"]
    assert CONDITION["description"] == upstream["description"]
    assert CONDITION["required"] == upstream["required"]
    assert set(CONDITION["properties"]) == set(upstream["properties"])
    for name, prop in upstream["properties"].items():
        assert CONDITION["properties"][name]["description"] == prop["description"]


def test_whole_object_schema() -> None:
    schema = schema_of(
        """
        spec:
          image: string
          replicas:
            type: int32
            minimum: 1
            default: 1
            required: true
        status:
          phase:
            type: string
            enum: [Pending, Ready]
        """
    )
    assert schema == {
        "type": "object",
        "properties": {
            **IMPLICIT,
            "spec": {
                "type": "object",
                "properties": {
                    "image": {"type": "string"},
                    "replicas": {"type": "integer", "format": "int32", "minimum": 1, "default": 1},
                },
                "required": ["replicas"],
            },
            "status": {
                "type": "object",
                "properties": {"phase": {"type": "string", "enum": ["Pending", "Ready"]}},
            },
        },
    }


def test_description_goes_to_the_root_of_every_version() -> None:
    d = load_one(compact("spec: object\n", "description: A CronTab.\n"))
    assert d.versions[0].schema["description"] == "A CronTab."


def test_full_form_with_an_expression_type() -> None:
    assert field_of('{type: "[]string", maxItems: 3, description: Tags.}') == {
        "type": "array",
        "items": {"type": "string"},
        "maxItems": 3,
        "description": "Tags.",
    }


def test_full_form_object_with_properties_and_required_list() -> None:
    assert field_of(
        "{type: object, required: [a], properties: {a: string, b: {type: integer, required: true}}}"
    ) == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }


def test_full_form_array_with_items_and_map_with_additional_properties() -> None:
    assert field_of("{type: array, items: {name: string}, x-kubernetes-list-type: atomic}") == {
        "type": "array",
        "items": {"type": "object", "properties": {"name": {"type": "string"}}},
        "x-kubernetes-list-type": "atomic",
    }
    assert field_of("{type: object, additionalProperties: int32}") == {
        "type": "object",
        "additionalProperties": {"type": "integer", "format": "int32"},
    }


def test_full_form_bare_object_is_free_form() -> None:
    assert field_of("{type: object, description: Anything.}") == {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "description": "Anything.",
    }


def test_mapping_with_a_non_keyword_key_is_an_object_shorthand() -> None:
    assert field_of("{type: string, status: string}") == {
        "type": "object",
        "properties": {"type": {"type": "string"}, "status": {"type": "string"}},
    }


def test_empty_mapping_is_an_empty_object() -> None:
    assert field_of("{}") == {"type": "object"}


def test_top_level_required_goes_to_the_root() -> None:
    schema = schema_of("spec: {type: object, required: true, properties: {a: string}}\n")
    assert schema["required"] == ["spec"]


def test_timestamps_stay_strings() -> None:
    assert field_of("{type: date, default: 2024-01-01}")["default"] == "2024-01-01"


# --- compact format: versions, subresources, columns, conversion ------------------------------------------------

CRONTAB = """\
group: stable.example.com
kind: CronTab
subresources:
  status: true
  scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
printerColumns:
  - {name: Replicas, type: integer, jsonPath: .spec.replicas}
selectableFields: [.spec.image]
versions:
  v1:
    storage: true
    schema:
      spec: {cronSpec: string, image: string, replicas: integer}
      status: {replicas: integer}
  v1beta1:
    served: false
    deprecated: true
    deprecationWarning: use v1
    subresources: {status: {}}
    printerColumns: []
    selectableFields: []
    schema:
      spec: {schedule: string, image: string, replicas: integer}
      status: {replicas: integer}
    conversion:
      rename: {spec.schedule: spec.cronSpec}
      toHub: crontab.hooks:to_v1
      fromHub: crontab.hooks:from_v1
"""


def test_versions_share_and_override_subresources_columns_and_fields() -> None:
    v1, v1beta1 = load_one(CRONTAB).versions
    assert (v1.name, v1.storage, v1.served, v1.status_subresource) == ("v1", True, True, True)
    assert v1.scale_subresource == ScaleSubresource(".spec.replicas", ".status.replicas")
    assert v1.printer_columns == (PrinterColumn("Replicas", "integer", ".spec.replicas"),)
    assert v1.selectable_fields == (".spec.image",)
    assert (v1beta1.storage, v1beta1.served, v1beta1.deprecated) == (False, False, True)
    assert v1beta1.deprecation_warning == "use v1"
    assert (v1beta1.status_subresource, v1beta1.scale_subresource) == (True, None)
    assert (v1beta1.printer_columns, v1beta1.selectable_fields) == ((), ())
    conversion = v1beta1.conversion
    assert [(m.version_path, m.hub_path) for m in conversion.moves] == [
        (("spec", "schedule"), ("spec", "cronSpec"))
    ]
    assert (conversion.to_hub_hook, conversion.from_hub_hook) == (
        "crontab.hooks:to_v1",
        "crontab.hooks:from_v1",
    )


def test_storage_is_not_defaulted_when_there_are_several_versions() -> None:
    text = compact("spec: object\n").replace("versions:\n", "versions:\n  v2:\n    schema: {}\n")
    assert [v.storage for v in load_one(text).versions] == [False, False]


def test_several_documents_in_one_file() -> None:
    loaded = load_text(
        yaml(CRONTAB) + "---\n" + compact("spec: object\n").replace("CronTab", "Other"), FILE
    )
    assert [d.kind for d in loaded.definitions] == ["CronTab", "Other"]
    other = loaded.definitions[1]
    assert loaded.sources.locate(other, ("kind",)) == (31, "kind")


# --- errors: file, line, field path, what was expected ------------------------------------------------------------


def test_unknown_type_names_the_expected_ones() -> None:
    (error,) = errors_of(compact("spec:\n  replicas: integr\n"))
    assert error == (
        f'{FILE}:7: versions.v1.schema.spec.replicas: unknown type "integr"; expected one of string, integer, '
        "int32, int64, number, float, double, boolean, date-time, date, byte, int-or-string, quantity, any, "
        'object, Condition, []T, map[string]T; did you mean "integer"?'
    )


def test_unknown_type_inside_a_composite_and_a_full_form() -> None:
    errors = errors_of(compact('spec:\n  a: "[]strin"\n  b: {type: "map[string]nope"}\n'))
    assert [e.split("; expected")[0] for e in errors] == [
        f'{FILE}:7: versions.v1.schema.spec.a: unknown type "strin"',
        f'{FILE}:8: versions.v1.schema.spec.b.type: unknown type "nope"',
    ]


def test_unknown_top_level_key_suggests_the_close_one() -> None:
    assert errors_of(compact("spec: object\n", "plurl: crontabs\n")) == [
        f'{FILE}:3: plurl: unknown key "plurl"; did you mean "plural"?'
    ]


def test_unknown_key_without_a_close_one_lists_the_expected_keys() -> None:
    text = compact("spec: object\n").replace("  v1:\n", "  v1:\n    colour: blue\n")
    assert errors_of(text) == [
        f'{FILE}:5: versions.v1.colour: unknown key "colour"; expected one of conversion, deprecated, '
        "deprecationWarning, printerColumns, schema, selectableFields, served, storage, subresources"
    ]


def test_wrong_value_types() -> None:
    text = compact("spec: object\n", "scope: cluster\nshortNames: ct\n").replace(
        "  v1:\n", "  v1:\n    served: yes please\n"
    )
    assert errors_of(text) == [
        f'{FILE}:3: scope: expected one of Namespaced, Cluster, got "cluster"; did you mean "Cluster"?',
        f'{FILE}:4: shortNames: expected a list, got "ct"',
        f'{FILE}:7: versions.v1.served: expected true or false, got "yes please"',
    ]


def test_missing_required_keys() -> None:
    assert errors_of("group: stable.example.com\nversions:\n  v1: {}\n") == [
        f"{FILE}:1: kind: required key is missing",
        f"{FILE}:3: versions.v1.schema: required key is missing",
    ]


def test_duplicate_keys_and_invalid_yaml() -> None:
    assert errors_of("group: a.b\nkind: A\nkind: B\n") == [
        f'{FILE}:3: kind: duplicate key "kind" (first given at line 2)'
    ]
    with pytest.raises(DefinitionErrors) as caught:
        load_text("group: a.b\nkind: [A\nversions: {}\n", FILE)
    assert caught.value.errors[0].line == 3


def test_implicit_fields_cannot_be_declared() -> None:
    assert errors_of(compact("metadata: {name: string}\n")) == [
        f'{FILE}:6: versions.v1.schema.metadata: "metadata" is implicit in every object; declare only the other '
        "top-level fields (spec, status, ...)"
    ]


def test_misplaced_structure_keywords() -> None:
    assert errors_of(
        compact("spec:\n  a: {type: string, items: string}\n  b: {type: array}\n")
    ) == [
        f'{FILE}:7: versions.v1.schema.spec.a.items: "items" needs type "array"; type "string" already says '
        "what it holds",
        f'{FILE}:8: versions.v1.schema.spec.b.type: type "array" needs "items" (or write the type as "[]T")',
    ]


def test_map_keys_must_be_strings() -> None:
    assert errors_of(compact("spec:\n  a: map[int]string\n")) == [
        f"{FILE}:7: versions.v1.schema.spec.a: map keys must be strings (JSON object keys are), got "
        '"map[int]string"; use map[string]T'
    ]


def test_hint_when_a_field_spec_lacks_type() -> None:
    error, _ = errors_of(compact("spec:\n  a:\n    description: The a.\n    default: 1\n"))
    assert error.startswith(
        f'{FILE}:8: versions.v1.schema.spec.a.description: unknown type "The a."'
    )
    assert error.endswith(
        '; this mapping has no "type" key, so "description" was read as a property name '
        '(add "type" to describe a single field)'
    )


MISSPELT = 'unknown schema keyword "{}"; did you mean "{}"?'


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        pytest.param(
            "  a: {type: string, maxLenght: 5}\n",
            [(7, "a.maxLenght", "maxLenght", "maxLength")],
            id="flow",
        ),
        pytest.param(
            "  a:\n    type: string\n    maxLenght: 10\n    description: The a.\n    pattern: '^[a-z]+$'\n",
            [(9, "a.maxLenght", "maxLenght", "maxLength")],
            id="siblings-that-are-no-type-expressions",
        ),
        pytest.param(
            "  mode:\n    type: string\n    default: fast\n    enmu: [fast, slow]\n",
            [(10, "mode.enmu", "enmu", "enum")],
            id="after-a-default",
        ),
        pytest.param(
            "  mode:\n    type: string\n    minLength: 1\n    enmu: string\n",
            [(10, "mode.enmu", "enmu", "enum")],
            id="the-typo-itself-parses-as-a-type",
        ),
        pytest.param(
            "  a: {type: string, maxLenght: 5, patern: x}\n",
            [(7, "a.maxLenght", "maxLenght", "maxLength"), (7, "a.patern", "patern", "pattern")],
            id="two-typos",
        ),
    ],
)
def test_a_misspelt_keyword_is_one_error_on_it(
    field: str, expected: list[tuple[int, str, str, str]]
) -> None:
    """A mapping with ``type`` and a misspelt keyword describes one field: the typo is the one error
    (with the keyword meant), not one error per sibling keyword read as a property."""
    assert errors_of(compact("spec:\n" + field)) == [
        f"{FILE}:{line}: versions.v1.schema.spec.{path}: " + MISSPELT.format(typo, keyword)
        for line, path, typo, keyword in expected
    ]


def test_errors_without_a_cause_stay_in_line_order() -> None:
    text = compact("spec:\n  a: integr\n  b: strng\n  c: {type: string, maxLenght: 5}\n")
    assert [error.split(": ", 2)[1] for error in errors_of(text)] == [
        "versions.v1.schema.spec.a",
        "versions.v1.schema.spec.b",
        "versions.v1.schema.spec.c.maxLenght",
    ]


def test_required_true_only_on_properties_and_required_lists_name_properties() -> None:
    text = compact(
        "spec:\n  a: {type: array, items: {type: string, required: true}}\n"
        "  b: {type: object, required: [c], properties: {d: string}}\n"
    )
    assert errors_of(text) == [
        f"{FILE}:7: versions.v1.schema.spec.a.items.required: required: true marks a property of an object; "
        "this field is not an object property",
        f'{FILE}:8: versions.v1.schema.spec.b.required[0]: "c" is not a property of this object',
    ]


def test_keyword_value_shapes_and_unknown_extensions() -> None:
    assert errors_of(
        compact("spec:\n  a: {type: string, maxLength: -1, x-kubernetes-list-typ: set}\n")
    ) == [
        f"{FILE}:7: versions.v1.schema.spec.a.maxLength: expected a non-negative integer, got -1",
        f'{FILE}:7: versions.v1.schema.spec.a.x-kubernetes-list-typ: unknown key "x-kubernetes-list-typ"; '
        'did you mean "x-kubernetes-list-type"?',
    ]


def test_rename_paths_must_be_dotted_field_paths() -> None:
    text = yaml(CRONTAB).replace(
        "{spec.schedule: spec.cronSpec}", '{"spec..schedule": spec.cronSpec}'
    )
    with pytest.raises(DefinitionErrors) as caught:
        load_text(text, FILE)
    assert [str(e) for e in caught.value.errors] == [
        f'{FILE}:26: versions.v1beta1.conversion.rename["spec..schedule"]: expected a dotted field path such as '
        '"spec.schedule", got "spec..schedule"'
    ]


def test_documents_that_are_neither_format() -> None:
    assert errors_of(
        "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\n"
    ) == [
        f"{FILE}:1: apiVersion: apiextensions.k8s.io/v1beta1 is not supported; convert the CRD to v1"
    ]
    assert errors_of("apiVersion: v1\nkind: ConfigMap\n") == [
        f'{FILE}:1: apiVersion: unsupported apiVersion "v1" with kind "ConfigMap"; expected a compact definition '
        "(no apiVersion) or apiVersion: apiextensions.k8s.io/v1 with kind: CustomResourceDefinition"
    ]
    assert errors_of("- a\n") == [f"{FILE}:1: expected a mapping (a definition), got a list"]


# --- CustomResourceDefinition manifests ---------------------------------------------------------------------------

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
  annotations: {controller-gen.kubebuilder.io/version: v0.16.0}
spec:
  group: stable.example.com
  names: {kind: CronTab, plural: crontabs}
  scope: Namespaced
  preserveUnknownFields: false
  conversion: {strategy: None}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, properties: {replicas: {type: integer}}}
      subresources: {status: {}, scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.r}}
      additionalPrinterColumns:
        - {name: Replicas, type: integer, jsonPath: .spec.replicas, priority: 1}
      selectableFields: [{jsonPath: .spec.replicas}]
status: {storedVersions: [v1]}
"""


def test_crd_maps_to_a_definition() -> None:
    d = load_one(CRD)
    assert (d.group, d.kind, d.plural, d.singular, d.list_kind) == (
        "stable.example.com",
        "CronTab",
        "crontabs",
        "crontab",
        "CronTabList",
    )
    (v1,) = d.versions
    assert v1.schema["properties"]["spec"] == {
        "type": "object",
        "properties": {"replicas": {"type": "integer"}},
    }
    assert (v1.status_subresource, v1.scale_subresource) == (
        True,
        ScaleSubresource(".spec.replicas", ".status.r"),
    )
    assert v1.printer_columns == (
        PrinterColumn("Replicas", "integer", ".spec.replicas", priority=1),
    )
    assert v1.selectable_fields == (".spec.replicas",)


def test_crd_conversion_webhooks_are_kept_for_the_generated_kind() -> None:
    """Strategy Webhook: the versions convert by calling it (no pruning of their own), strategy None by
    pruning to each version's schema."""
    text = CRD.replace(
        "{strategy: None}",
        "{strategy: Webhook, webhook: {conversionReviewVersions: [v1], "
        "clientConfig: {url: 'https://converter.example/convert'}}}",
    )
    definition = load_one(text)
    assert definition.conversion_webhook == {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {"url": "https://converter.example/convert"},
    }
    assert not any(version.conversion.prune for version in definition.versions)
    plain = load_one(CRD)
    assert plain.conversion_webhook is None
    assert all(version.conversion.prune for version in plain.versions)


def test_crd_unknown_keys_are_errors_everywhere() -> None:
    text = (
        CRD.replace("  scope: Namespaced", "  scpoe: Namespaced")
        .replace(
            "type: object\n          properties:",
            "type: object\n          desciption: x\n          properties:",
        )
        .replace("{jsonPath: .spec.replicas}]", "{path: .spec.replicas}]")
    )
    assert errors_of(text) == [
        f"{FILE}:6: spec.scope: required key is missing",
        f'{FILE}:9: spec.scpoe: unknown key "scpoe"; did you mean "scope"?',
        f'{FILE}:19: spec.versions[0].schema.openAPIV3Schema.desciption: unknown key "desciption"; did you mean '
        '"description"?',
        f'{FILE}:25: spec.versions[0].selectableFields[0].path: unknown key "path"; expected one of jsonPath',
        f"{FILE}:25: spec.versions[0].selectableFields[0].jsonPath: required key is missing",
    ]


def test_crd_name_and_preserve_unknown_fields() -> None:
    text = CRD.replace("name: crontabs.stable", "name: crontab.stable").replace(
        "preserveUnknownFields: false", "preserveUnknownFields: true"
    )
    assert errors_of(text) == [
        f'{FILE}:4: metadata.name: must be "crontabs.stable.example.com" (spec.names.plural + "." + spec.group)',
        f"{FILE}:10: spec.preserveUnknownFields: preserveUnknownFields: true is not supported "
        "(apiextensions.k8s.io/v1 requires false); use x-kubernetes-preserve-unknown-fields: true on the schema "
        "nodes that need it",
    ]


def test_crd_printer_column_types_and_formats() -> None:
    text = CRD.replace("type: integer, jsonPath", "type: int, format: int3, jsonPath")
    assert errors_of(text) == [
        f"{FILE}:23: spec.versions[0].additionalPrinterColumns[0].type: expected one of string, integer, number, "
        'boolean, date, got "int"; did you mean "integer"?',
        f"{FILE}:23: spec.versions[0].additionalPrinterColumns[0].format: expected one of int32, int64, float, "
        'double, byte, date, date-time, password, got "int3"; did you mean "int32"?',
    ]


def test_crd_status_subresource_takes_no_settings() -> None:
    assert errors_of(CRD.replace("status: {}, scale", "status: {enabled: true}, scale")) == [
        f'{FILE}:21: spec.versions[0].subresources.status.enabled: unknown key "enabled"; this mapping takes no '
        "keys (write {})"
    ]


def crd_files() -> list[Path]:
    return sorted(CRDS.rglob("*.yaml"))


@pytest.mark.parametrize("file", crd_files(), ids=lambda p: p.name)
def test_every_real_crd_loads(file: Path) -> None:
    features = {f["file"]: f for f in json.loads((CRDS / "FEATURES.json").read_text())}
    (d,) = load_text(file.read_text(), file).definitions
    expected = features[str(file.relative_to(CRDS))]
    assert (d.group, d.kind, d.scope) == (expected["group"], expected["kind"], expected["scope"])
    assert ",".join(v.name + ("*" if v.storage else "") for v in d.versions) == expected["versions"]
    assert sum(len(v.printer_columns) for v in d.versions) == expected["printer_columns"]
    assert sum(len(v.selectable_fields) for v in d.versions) == expected["selectable_fields"]
    assert ",".join(d.short_names) == expected["short"]
    assert ",".join(d.categories) == expected["categories"]
    assert any(v.status_subresource for v in d.versions) == ("status" in expected["subresources"])
    assert any(v.scale_subresource for v in d.versions) == ("scale" in expected["subresources"])


def test_the_pure_python_loader_reads_the_same() -> None:
    file = CRDS / "cert-manager.io_certificates.yaml"
    fast = read_documents(file, file.read_text())
    slow = read_documents(file, file.read_text(), PURE_PYTHON_LOADER)
    assert fast == slow


# --- directories and locations ------------------------------------------------------------------------------------


def test_directory_loading_is_sorted_and_collects_every_error(tmp_path: Path) -> None:
    (tmp_path / "b.example.com").mkdir()
    (tmp_path / "a.example.com").mkdir()
    (tmp_path / "b.example.com" / "widget.yml").write_text(
        compact("spec: object\n").replace("CronTab", "Widget")
    )
    (tmp_path / "a.example.com" / "gadget.yaml").write_text(
        compact("spec: object\n").replace("CronTab", "Gadget")
    )
    (tmp_path / "README.md").write_text("not a definition\n")
    # the project's own, after the built-in kinds every project has
    assert [d.kind for d in load_definitions(tmp_path) if not d.server.builtin] == [
        "Gadget",
        "Widget",
    ]
    assert definition_files(tmp_path) == [
        tmp_path / "a.example.com/gadget.yaml",
        tmp_path / "b.example.com/widget.yml",
    ]

    (tmp_path / "b.example.com" / "widget.yml").write_text("kind: [\n")
    (tmp_path / "a.example.com" / "gadget.yaml").write_text(compact("spec: strng\n"))
    with pytest.raises(DefinitionErrors) as caught:
        load(tmp_path)
    assert [(e.file.name, e.line) for e in caught.value.errors] == [
        ("gadget.yaml", 6),
        ("widget.yml", 2),
    ]


def test_missing_directory() -> None:
    with pytest.raises(DefinitionErrors, match="no such definitions directory"):
        load(Path("/nonexistent/definitions"))


def test_source_map_locates_compact_definition_paths() -> None:
    loaded: Loaded = load_text(CRONTAB, FILE)
    d = loaded.definitions[0]
    locate = loaded.sources.locate
    assert locate(d, ("plural",)) == (2, "kind")
    assert locate(d, ("versions", "v1", "storage")) == (11, "versions.v1.storage")
    assert locate(d, ("versions", "v1", "printerColumns", 0, "jsonPath")) == (
        7,
        "printerColumns[0].jsonPath",
    )
    assert locate(
        d, ("versions", "v1beta1", "schema", "properties", "spec", "properties", "image")
    ) == (
        23,
        "versions.v1beta1.schema.spec.image",
    )
    assert locate(d, ("versions", "v1", "schema", "properties", "apiVersion")) == (
        12,
        "versions.v1.schema",
    )
    assert locate(d, ("versions", "v1beta1", "conversion", "rename", "spec.schedule")) == (
        26,
        'versions.v1beta1.conversion.rename["spec.schedule"]',
    )


def test_source_map_locates_crd_definition_paths() -> None:
    loaded = load_text(CRD, FILE)
    d = loaded.definitions[0]
    locate = loaded.sources.locate
    assert locate(d, ("singular",)) == (8, "spec.names.kind")
    assert locate(
        d, ("versions", "v1", "schema", "properties", "spec", "properties", "replicas")
    ) == (
        20,
        "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.replicas",
    )
    assert locate(d, ("versions", "v1", "schema", "properties", "spec", "items")) == (
        20,
        "spec.versions[0].schema.openAPIV3Schema.properties.spec.items",
    )
    assert locate(d, ("versions", "v1", "printerColumns", 0, "jsonPath")) == (
        23,
        "spec.versions[0].additionalPrinterColumns[0].jsonPath",
    )
    assert locate(d, ("versions", "v1", "selectableFields", 0)) == (
        24,
        "spec.versions[0].selectableFields[0].jsonPath",
    )
