"""generator.check: every rule, each error asserted with its file, line and field path."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from generator.check import check_definitions
from generator.definition import Definition, DefinitionErrors, Version
from generator.load import load_checked, load_text
from generator.sourcemap import SourceMap
from tests.serverproc import FIXTURES

CRDS = FIXTURES / "crds"
FILE = Path("definitions/stable.example.com/crontab.yaml")


def yaml(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def check_errors(text: str) -> list[str]:
    loaded = load_text(yaml(text), FILE)
    with pytest.raises(DefinitionErrors) as caught:
        check_definitions(loaded.definitions, loaded.sources)
    return [str(error) for error in caught.value.errors]


def passes(text: str) -> None:
    loaded = load_text(yaml(text), FILE)
    check_definitions(loaded.definitions, loaded.sources)


def one_version(schema: str, extra: str = "", version: str = "") -> str:
    """group (1), kind (2), ``extra`` lines, versions, v1, storage, schema, then ``schema`` indented."""
    body = textwrap.indent(yaml(schema), " " * 6)
    return f"group: stable.example.com\nkind: CronTab\n{extra}versions:\n  v1:\n    storage: true\n{version}    schema:\n{body}"


# --- the real CRDs ------------------------------------------------------------------------------------------------


def crd_files() -> list[Path]:
    return sorted(CRDS.rglob("*.yaml"))


@pytest.mark.parametrize("file", crd_files(), ids=lambda p: p.name)
def test_real_crds_pass(file: Path) -> None:
    """Every one, as kube-apiserver accepts them: the multi-version kubebuilder CronJob too, whose v2
    spec.schedule is an object where the hub (v1) has a string (strategy None converts by apiVersion and
    pruning, so conversion need not be total)."""
    loaded = load_text(file.read_text(), file)
    check_definitions(loaded.definitions, loaded.sources)


def test_a_full_compact_definition_passes() -> None:
    passes(
        """
        group: stable.example.com
        kind: CronTab
        shortNames: [ct]
        subresources:
          status: true
          scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}
        printerColumns:
          - {name: Spec, type: string, jsonPath: .spec.cronSpec}
          - {name: Replicas, type: integer, jsonPath: .spec.replicas}
          - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
          - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
          - {name: Owner, type: string, jsonPath: ".metadata.labels['owner']"}
        selectableFields: [.spec.cronSpec]
        versions:
          v1:
            storage: true
            schema:
              spec: {cronSpec: string, replicas: {type: int32, minimum: 0, default: 1}, extra: object}
              status: {replicas: int32, selector: string, conditions: "[]Condition"}
          v1beta1:
            schema:
              spec: {schedule: string, replicas: int32, extra: object}
              status: {replicas: int32, selector: string, conditions: "[]Condition"}
            printerColumns: []
            selectableFields: [.spec.schedule]
            conversion:
              rename: {spec.schedule: spec.cronSpec}
        """
    )


# --- versions -----------------------------------------------------------------------------------------------------


def test_exactly_one_storage_version_and_one_served() -> None:
    text = """\
        group: stable.example.com
        kind: CronTab
        versions:
          v1: {served: false, schema: {}}
          v2: {served: false, schema: {}}
        """
    assert check_errors(text) == [
        f"{FILE}:3: versions: exactly one version must have storage: true (it is the hub); none has",
        f"{FILE}:3: versions: at least one version must be served",
    ]
    text = text.replace("served: false", "storage: true")
    assert check_errors(text) == [
        f"{FILE}:5: versions.v2.storage: exactly one version may be stored; v1 already is"
    ]


def test_version_names_and_deprecation_warning() -> None:
    text = (
        "group: stable.example.com\nkind: CronTab\nversions:\n  v1beta:\n    storage: true\n    schema: {}\n"
        "  version2:\n    deprecationWarning: gone soon\n    schema: {}\n"
    )
    expected = "is not a Kubernetes version name; expected v<N>, v<N>alpha<M> or v<N>beta<M> (e.g. v1, v1beta1, v2alpha3)"
    assert check_errors(text) == [
        f'{FILE}:4: versions.v1beta: version "v1beta" {expected}',
        f'{FILE}:7: versions.version2: version "version2" {expected}',
        f"{FILE}:8: versions.version2.deprecationWarning: may only be set when deprecated is true",
    ]


# --- names --------------------------------------------------------------------------------------------------------


def test_group_and_kind_names() -> None:
    text = (
        one_version("spec: object\n")
        .replace("group: stable.example.com", "group: example")
        .replace("kind: CronTab", "kind: cronTab\nplural: Crontabs\nshortNames: [ct, ct, c_t]")
    )
    assert check_errors(text) == [
        f'{FILE}:1: group: group "example" needs at least one dot (e.g. example.example.com); "core" is the core '
        "group",
        f'{FILE}:2: kind: kind "cronTab" must be UpperCamelCase: a capital letter, then letters and digits '
        "(e.g. CronTab)",
        f'{FILE}:2: kind: listKind "cronTabList" must be UpperCamelCase: a capital letter, then letters and digits '
        "(e.g. CronTab)",
        f'{FILE}:3: plural: plural "Crontabs" must be a lowercase DNS-1123 label (letters, digits and "-", at most '
        "63)",
        f'{FILE}:4: shortNames[1]: "ct" is listed twice',
        f'{FILE}:4: shortNames[2]: "c_t" must be a lowercase DNS-1123 label',
    ]


def test_group_must_be_a_dns_subdomain() -> None:
    text = one_version("spec: object\n").replace(
        "group: stable.example.com", "group: Stable.Example.com"
    )
    assert check_errors(text) == [
        f'{FILE}:1: group: group "Stable.Example.com" is not a DNS-1123 subdomain (lowercase letters, digits, "-" '
        'and ".", e.g. stable.example.com)'
    ]


def write(directory: Path, name: str, text: str) -> None:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml(text))


def test_two_definitions_cannot_claim_a_kind_plural_or_short_name(tmp_path: Path) -> None:
    write(tmp_path, "a/crontab.yaml", one_version("spec: object\n", "shortNames: [ct]\n"))
    write(tmp_path, "b/crontab.yaml", one_version("spec: object\n", "plural: other\n"))
    write(
        tmp_path,
        "c/tab.yaml",
        one_version("spec: object\n").replace("CronTab", "Tab")
        + "---\n"
        + one_version("spec: object\n", "plural: crontabs\nshortNames: [x, ct]\n").replace(
            "CronTab", "Other"
        ),
    )
    write(
        tmp_path, "d/core.yaml", one_version("spec: object\n").replace("stable.example.com", "core")
    )
    with pytest.raises(DefinitionErrors) as caught:
        load_checked(tmp_path)
    a = tmp_path / "a/crontab.yaml"
    assert [str(e) for e in caught.value.errors] == [
        f'{tmp_path / "b/crontab.yaml"}:2: kind: kind "CronTab" of group stable.example.com is already claimed '
        f"by CronTab at {a}:2",
        f'{tmp_path / "c/tab.yaml"}:11: plural: plural "crontabs" of group stable.example.com is already claimed '
        f"by CronTab at {a}:2",
        f'{tmp_path / "c/tab.yaml"}:12: shortNames[1]: short name "ct" of group stable.example.com is already '
        f"claimed by CronTab at {a}:3",
    ]


# --- structural schemas -------------------------------------------------------------------------------------------

CRD_HEAD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec:
  group: stable.example.com
  names: {kind: CronTab, plural: crontabs}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
"""


def crd(schema: str) -> str:
    """A CRD whose openAPIV3Schema (line 13 onwards) is ``schema``."""
    return CRD_HEAD + textwrap.indent(yaml(schema), " " * 10)


SCHEMA_PATH = "spec.versions[0].schema.openAPIV3Schema"


def test_structural_rules() -> None:
    errors = check_errors(
        crd(
            """
            type: object
            properties:
              metadata: {type: object, properties: {labels: {type: object}}}
              spec:
                type: object
                properties:
                  untyped: {description: no type}
                  both: {type: object, properties: {a: {type: string}}, additionalProperties: {type: string}}
                  tags: {type: array, items: {type: string}, uniqueItems: true}
                  ref: {$ref: "#/definitions/Foo"}
                  bad: {type: strin}
                  keep: {type: object, x-kubernetes-preserve-unknown-fields: false}
                  list: {type: array, x-kubernetes-list-type: map, items: {type: object, properties: {k: {type: string}}}}
                  keyed: {type: array, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [k], items: {type: object, properties: {k: {type: string}}}}
                  junctor: {type: object, properties: {a: {type: string}}, anyOf: [{type: object}, {properties: {b: {type: string}}}]}
                  ios: {x-kubernetes-int-or-string: true, anyOf: [{type: integer}, {type: string}]}
                  embedded: {type: string, x-kubernetes-embedded-resource: true}
                  regex: {type: string, pattern: "(?=x)"}
            """
        )
    )
    p = f"{SCHEMA_PATH}.properties"
    s = f"{p}.spec.properties"
    assert errors == [
        f"{FILE}:15: {p}.metadata: must not specify anything other than name and generateName",
        f"{FILE}:19: {s}.untyped.type: type is required for object fields (unless "
        "x-kubernetes-preserve-unknown-fields or x-kubernetes-int-or-string is true)",
        f"{FILE}:20: {s}.both.additionalProperties: additionalProperties and properties are mutual exclusive",
        f"{FILE}:21: {s}.tags.uniqueItems: uniqueItems cannot be set to true since the runtime complexity becomes "
        "quadratic",
        f"{FILE}:22: {s}.ref.$ref: $ref is not supported",
        f"{FILE}:22: {s}.ref.type: type is required for object fields (unless x-kubernetes-preserve-unknown-fields "
        "or x-kubernetes-int-or-string is true)",
        f'{FILE}:23: {s}.bad.type: Unsupported value: "strin": supported values: "array", "boolean", '
        '"integer", "number", "object", "string"',
        f"{FILE}:24: {s}.keep.x-kubernetes-preserve-unknown-fields: must be true or undefined",
        f"{FILE}:25: {s}.list.x-kubernetes-list-map-keys: must not be empty if x-kubernetes-list-type is map",
        f"{FILE}:26: {s}.keyed.items.properties.k: this property is in x-kubernetes-list-map-keys, so it must "
        "have a default or be a required property",
        f"{FILE}:27: {s}.junctor.anyOf[0].type: must be empty to be structural",
        f'{FILE}:27: {s}.junctor.anyOf[1].properties.b: "b" must also be declared in the structural schema '
        "(outside allOf/anyOf/oneOf/not)",
        f"{FILE}:29: {s}.embedded.type: must be object if x-kubernetes-embedded-resource is true",
        f"{FILE}:29: {s}.embedded.properties: must not be empty if x-kubernetes-embedded-resource is true "
        "without x-kubernetes-preserve-unknown-fields",
        f"{FILE}:30: {s}.regex.pattern: lookarounds and backreferences are not supported by Kubernetes (Go RE2) "
        "regular expressions",
    ]


SPEC_RULES = f"{SCHEMA_PATH}.properties.spec.x-kubernetes-validations"


def spec_rules_errors(rules: str) -> list[str]:
    """The errors of a CRD whose spec (fields a: string, l: list of integers) has the rules ``rules``
    (YAML list entries; the first starts on line 18)."""
    rules = textwrap.indent(yaml(rules), " " * 4)
    schema = "type: object\nproperties:\n  spec:\n    type: object\n    x-kubernetes-validations:\n"
    fields = (
        "    properties:\n      a: {type: string}\n      l: {type: array, items: {type: integer}}\n"
    )
    return check_errors(crd(schema + rules + fields))


def test_cel_rules_and_message_expressions_must_compile() -> None:
    """kube compiles them when the CRD is created and reports field.Invalid of the whole rule (its Go
    struct as JSON); the error carries the column inside the rule (kube's schema/cel/compilation.go)."""
    errors = spec_rules_errors(
        """
        - rule: "self.a >"
        - rule: "has(self.a)"
          messageExpression: "'a is ' +"
        """
    )
    rules = SPEC_RULES
    first = (  # Go's encoding/json escapes <, > and &
        '{"Rule":"self.a \\u003e","Message":"","MessageExpression":"","Reason":null,"FieldPath":"",'
        '"OptionalOldSelf":null}'
    )
    second = (
        '{"Rule":"has(self.a)","Message":"","MessageExpression":"\'a is \' +","Reason":null,'
        '"FieldPath":"","OptionalOldSelf":null}'
    )
    assert [e.split(" ERROR: ")[0] for e in errors] == [
        f"{FILE}:18: {rules}[0].rule: Invalid value: {first}: compilation failed: Failed to parse"
        " expression 'self.a >':",
        f"{FILE}:20: {rules}[1].messageExpression: Invalid value: {second}: messageExpression"
        " compilation failed: Failed to parse expression ''a is ' +':",
    ]
    assert "<input>:1:9: Syntax error" in errors[0]


def test_root_rules() -> None:
    assert check_errors(
        crd("type: array\nitems: {type: string}\nadditionalProperties: {type: string}\n")
    ) == [
        f"{FILE}:13: {SCHEMA_PATH}.type: must be object at the root",
        f"{FILE}:15: {SCHEMA_PATH}.additionalProperties: additionalProperties is not allowed at the root of a "
        "schema",
        f"{FILE}:15: {SCHEMA_PATH}.additionalProperties: must not be used at the root",
    ]


def test_compact_schemas_are_checked_too() -> None:
    text = one_version(
        "spec:\n  a: {type: object, additionalProperties: string, properties: {b: string}}\n"
    )
    assert check_errors(text) == [
        f"{FILE}:8: versions.v1.schema.spec.a.additionalProperties: additionalProperties and properties are "
        "mutual exclusive"
    ]


# --- defaults -----------------------------------------------------------------------------------------------------


def test_defaults_must_be_valid_against_their_schema() -> None:
    # Judged by the runtime's pruning, defaulting and validation, so the messages are kube-apiserver's.
    errors = check_errors(
        one_version(
            """
            spec:
              a: {type: integer, minimum: 1, default: 0}
              b: {type: string, enum: [x, y], default: z}
              c: {type: string, pattern: "^[a-z]+$", default: "ABC"}
              d: {type: boolean, default: "yes"}
              e: {type: object, properties: {f: string}, default: {f: ok, g: 1}}
              h: {type: "[]int32", maxItems: 1, default: [1, 2]}
              i: {type: string, format: email, default: nope}
              j: {type: object, properties: {k: {type: string, required: true}}, default: {}}
              l: {type: object, properties: {k: {type: string, required: true, default: x}}, default: {}}
              m: {type: string, maxLength: 2, default: abc}
            """
        )
    )
    s = "versions.v1.schema.spec"
    assert errors == [
        f"{FILE}:8: {s}.a.default: invalid default: Invalid value: 0: in body should be greater than or "
        "equal to 1",
        f'{FILE}:9: {s}.b.default: invalid default: Unsupported value: "z": supported values: "x", "y"',
        f"{FILE}:10: {s}.c.default: invalid default: Invalid value: \"ABC\": in body should match '^[a-z]+$'",
        f'{FILE}:11: {s}.d.default: invalid default: Invalid value: "string": in body must be of type boolean: '
        '"string"',
        f'{FILE}:12: {s}.e.default: invalid default: unknown field "g" (it would be pruned)',
        f"{FILE}:13: {s}.h.default: invalid default: Too many: 2: must have at most 1 item",
        f'{FILE}:14: {s}.i.default: invalid default: Invalid value: "nope": in body must be of type email: '
        '"nope"',
        f"{FILE}:15: {s}.j.default: invalid default: k: Required value",
        f"{FILE}:17: {s}.m.default: invalid default: Too long: may not be more than 2 bytes",
    ]


def test_defaults_are_only_judged_in_structural_schemas() -> None:
    text = one_version(
        "spec:\n  a: {type: integer, minimum: 1, default: 0, x-kubernetes-map-type: atomic}\n"
    )
    assert check_errors(text) == [
        f"{FILE}:8: versions.v1.schema.spec.a.type: must be object if x-kubernetes-map-type is specified"
    ]


def test_defaults_are_forbidden_in_top_level_metadata() -> None:
    text = crd("type: object\nproperties:\n  metadata: {type: object, default: {}}\n")
    assert check_errors(text) == [
        f"{FILE}:15: {SCHEMA_PATH}.properties.metadata.default: must not be set in top-level metadata"
    ]


# --- printer columns, scale, selectable fields --------------------------------------------------------------------


def test_field_references_must_exist_with_a_fitting_type() -> None:
    errors = check_errors(
        one_version(
            """
            spec: {replicas: string, tags: "[]string", labels: "map[string]string", free: object}
            status: {ready: integer}
            """,
            """\
subresources:
  scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .spec.ready, labelSelectorPath: .status.nope}
printerColumns:
  - {name: A, type: integer, jsonPath: .spec.replicas}
  - {name: B, type: date, jsonPath: .status.ready}
  - {name: C, type: string, jsonPath: .spec.missing}
  - {name: D, type: string, jsonPath: spec.replicas}
  - {name: E, type: string, jsonPath: ".spec.tags[0].x"}
  - {name: F, type: string, jsonPath: ".spec.free.anything[*].goes"}
  - {name: G, type: string, jsonPath: ".spec.labels.app"}
  - {name: H, type: number, jsonPath: ".status.ready"}
selectableFields: [.spec.tags, .spec.replicas, .spec.replicas, .spec.free.x, ".spec.tags[0]"]
""",
        )
    )
    assert errors == [
        f"{FILE}:4: subresources.scale.specReplicasPath: .spec.replicas is string in version v1; scale "
        "specReplicasPath needs integer",
        f'{FILE}:4: subresources.scale.statusReplicasPath: ".spec.ready" must be a path under .status',
        f"{FILE}:4: subresources.scale.labelSelectorPath: .status.nope does not exist in the schema of version v1",
        f'{FILE}:6: printerColumns[0].jsonPath: .spec.replicas is string in version v1; printer column "A" of '
        "type integer needs integer or int-or-string",
        f'{FILE}:7: printerColumns[1].jsonPath: .status.ready is integer in version v1; printer column "B" of '
        "type date needs string",
        f"{FILE}:8: printerColumns[2].jsonPath: .spec.missing does not exist in the schema of version v1",
        f'{FILE}:9: printerColumns[3].jsonPath: JSONPath "spec.replicas" must be a simple json path starting with .',
        f"{FILE}:10: printerColumns[4].jsonPath: .spec.tags[*] is string, not an object in the schema of "
        "version v1",
        f"{FILE}:14: selectableFields[0]: .spec.tags is array in version v1; a selectable field needs string, "
        "integer or boolean",
        f'{FILE}:14: selectableFields[2]: ".spec.replicas" is listed twice',
        f"{FILE}:14: selectableFields[3]: .spec.free.x must be declared in the schema of version v1, not "
        "preserved",
        f'{FILE}:14: selectableFields[4]: ".spec.tags[0]" must be a simple dotted path such as .spec.replicas',
    ]


def test_columns_computed_by_a_function() -> None:
    """A column names a function (``cell:``) or a JSONPath, not both nor neither; only a built-in kind (kube's
    own printers, such as the events' NAME in -o wide) places the name column itself."""
    columns = """\
printerColumns:
  - {name: A, type: string, cell: builtin.printers:age}
  - {name: C, type: string, cell: builtin.printers:age, jsonPath: .spec.replicas}
  - {name: D, type: string}
"""
    with pytest.raises(DefinitionErrors) as caught:
        load_text(yaml(one_version("spec: {replicas: int32}", columns)), FILE)
    assert [str(error) for error in caught.value.errors] == [
        f"{FILE}:5: printerColumns[1]: expected exactly one of jsonPath and cell",
        f"{FILE}:6: printerColumns[2]: expected exactly one of jsonPath and cell",
    ]
    columns = """\
printerColumns:
  - {name: B, type: string, cell: not a reference}
  - {name: E, type: string, format: name, jsonPath: .metadata.name}
"""
    assert check_errors(one_version("spec: {replicas: int32}", columns)) == [
        f'{FILE}:4: printerColumns[0].cell: "not a reference" must be a "package.module:name" reference',
        f'{FILE}:5: printerColumns[1].format: only a builtin kind may declare a column of format "name"',
    ]
    passes(one_version("{}", f"builtin: true\n{columns.replace('not a reference', 'a.b:c')}"))


def test_crds_have_no_cell_columns() -> None:
    """``cell`` and the ``name`` format are the compact format's: a CRD is judged as apiextensions judges it."""
    crd = (
        CRD_HEAD
        + "          type: object\n      additionalPrinterColumns:\n"
        + "        - {name: A, type: string, jsonPath: .metadata.name, format: name, cell: x.y:z}\n"
    )
    with pytest.raises(DefinitionErrors) as caught:
        load_text(crd, FILE)
    assert [str(error) for error in caught.value.errors] == [
        f'{FILE}:15: spec.versions[0].additionalPrinterColumns[0].cell: unknown key "cell"; expected one '
        "of description, format, jsonPath, name, priority, type",
        f"{FILE}:15: spec.versions[0].additionalPrinterColumns[0].format: expected one of int32, int64, "
        'float, double, byte, date, date-time, password, got "name"',
    ]


def test_openapi_types_name_object_fields_of_built_in_kinds() -> None:
    """``openapiTypes`` publishes a sub-schema as a named component (kube's ServicePort); it must name an
    object field of every version with a Go type's name, and only a built-in kind has Go types."""
    schema = (
        "spec: {size: int32, ports: {type: array, items: {type: object, properties: {p: int32}}}}"
    )
    assert check_errors(one_version(schema, "openapiTypes: {spec: WidgetSpec}\n")) == [
        f"{FILE}:3: openapiTypes.spec: only a builtin kind may name OpenAPI types"
    ]
    types = """\
builtin: true
openapiTypes:
  spec: lowercase
  spec.ports[]: WidgetPort
  spec.size: WidgetSize
  spec.missing: Missing
  "spec..x": Bad
"""
    assert check_errors(one_version(schema, types)) == [
        f'{FILE}:5: openapiTypes.spec: "lowercase" is not a type name such as ServicePort',
        f'{FILE}:7: openapiTypes["spec.size"]: spec.size is no object with properties in version v1',
        f'{FILE}:8: openapiTypes["spec.missing"]: spec.missing is no object with properties in version v1',
        f'{FILE}:9: openapiTypes["spec..x"]: "spec..x" is not a field path such as spec.ports[]',
    ]


def test_go_types_name_string_fields_of_built_in_kinds() -> None:
    """``goTypes`` names the Go type of a named string field (kube's ServiceType), which the Go decoder's
    errors show; it must name a string field of every version, and only a built-in kind has Go types."""
    schema = "spec: {kind: string, size: int32}"
    assert check_errors(one_version(schema, "goTypes: {spec.kind: WidgetKind}\n")) == [
        f'{FILE}:3: goTypes["spec.kind"]: only a builtin kind may name Go types'
    ]
    types = "builtin: true\ngoTypes:\n  spec.kind: WidgetKind\n  spec.size: WidgetSize\n"
    assert check_errors(one_version(schema, types)) == [
        f'{FILE}:6: goTypes["spec.size"]: spec.size is no string in version v1'
    ]


# --- conversion ---------------------------------------------------------------------------------------------------

TWO_VERSIONS = """\
group: stable.example.com
kind: CronTab
versions:
  v1:
    storage: true
    schema:
      spec: {cronSpec: string, image: string, ports: "[]int32"}
  v1beta1:
    schema:
      spec: {schedule: string, image: string, extra: string, ports: "[]int32"}
    conversion:
      rename: {spec.schedule: spec.cronSpec}
"""


def test_every_field_needs_a_counterpart_in_the_hub() -> None:
    assert check_errors(TWO_VERSIONS) == [
        f"{FILE}:10: versions.v1beta1.schema.spec.extra: field spec.extra of v1beta1 has no counterpart in hub "
        "version v1; add a rename or a toHub/fromHub hook"
    ]


def test_every_hub_field_needs_a_counterpart_in_the_version() -> None:
    text = TWO_VERSIONS.replace("extra: string, ", "").replace(
        "image: string}", "image: string, suspend: boolean}"
    )
    assert check_errors(
        text.replace("cronSpec: string, ", "cronSpec: string, suspend: boolean, ", 1)
    ) == [
        f"{FILE}:7: versions.v1.schema.spec.suspend: field spec.suspend of hub version v1 has no counterpart in "
        "v1beta1; add a rename or a toHub/fromHub hook"
    ]


def test_hooks_waive_the_direction_they_handle() -> None:
    passes(TWO_VERSIONS + "      toHub: crontab.hooks:to_hub\n")
    hub_extra = TWO_VERSIONS.replace("extra: string, ", "").replace(
        "cronSpec: string,", "cronSpec: string, x: int32,"
    )
    assert check_errors(hub_extra + "      toHub: crontab.hooks:to_hub\n") == [
        f"{FILE}:7: versions.v1.schema.spec.x: field spec.x of hub version v1 has no counterpart in v1beta1; add a "
        "rename or a toHub/fromHub hook"
    ]
    passes(hub_extra + "      fromHub: crontab.hooks:from_hub\n")


def test_a_type_change_needs_both_hooks() -> None:
    text = TWO_VERSIONS.replace("extra: string, ", "").replace(
        'ports: "[]int32"}\n    conversion', 'ports: "[]string"}\n    conversion'
    )
    assert check_errors(text) == [
        f"{FILE}:10: versions.v1beta1.schema.spec.ports: field spec.ports[] of v1beta1 is string but "
        "spec.ports[] of hub version v1 is integer; add a rename or a toHub/fromHub hook"
    ]
    passes(text + "      toHub: crontab.hooks:to_hub\n      fromHub: crontab.hooks:from_hub\n")


def test_renames_must_name_fields_of_the_same_type() -> None:
    text = TWO_VERSIONS.replace("extra: string, ", "").replace(
        "rename: {spec.schedule: spec.cronSpec}",
        "rename: {spec.schedule: spec.cronSpec, spec.image: spec.ports, spec.nope: spec.image, spec.ports.x: spec.y}",
    )
    errors = check_errors(text)
    r = f"{FILE}:12: versions.v1beta1.conversion.rename"
    assert errors[:3] == [
        f'{r}["spec.image"]: spec.image is string but spec.ports of hub version v1 is array; a rename moves a value '
        "unchanged, so use a toHub/fromHub hook",
        f'{r}["spec.nope"]: spec.nope does not exist in v1beta1',
        f'{r}["spec.ports.x"]: spec.ports of v1beta1 is an array or map; renames cannot reach inside one, use a '
        "toHub/fromHub hook",
    ]
    assert len(errors) == 3  # totality is only judged once the renames are sound


def test_hooks_must_be_references_and_the_hub_converts_nothing() -> None:
    text = TWO_VERSIONS.replace("extra: string, ", "") + "      toHub: hooks.to_hub\n"
    text = text.replace(
        "    storage: true\n", "    storage: true\n    conversion: {toHub: a.b:c}\n"
    )
    assert check_errors(text) == [
        f"{FILE}:6: versions.v1.conversion: the storage version is the hub; declare conversion on the other versions",
        f'{FILE}:14: versions.v1beta1.conversion.toHub: "hooks.to_hub" must be a "package.module:function" '
        "reference",
    ]


def test_preserved_hub_fields_hold_anything() -> None:
    passes(
        TWO_VERSIONS.replace(
            'ports: "[]int32"}\n  v1beta1', 'ports: "[]int32", extra: any}\n  v1beta1'
        ).replace("extra: string", "extra: {type: object, properties: {a: string}}")
    )


# --- locations ----------------------------------------------------------------------------------------------------


def test_unknown_definitions_are_reported_at_line_one() -> None:
    definition = Definition(
        source=FILE,
        group="stable.example.com",
        kind="CronTab",
        plural="crontabs",
        singular="crontab",
        list_kind="CronTabList",
        scope="Namespaced",
        versions=(Version("v1", served=True, storage=False, schema={"type": "object"}),),
    )
    with pytest.raises(DefinitionErrors) as caught:
        check_definitions([definition], SourceMap())
    assert [str(e) for e in caught.value.errors] == [
        f"{FILE}:1: versions: exactly one version must have storage: true (it is the hub); none has"
    ]


def test_a_field_can_move_out_of_an_object() -> None:
    passes(
        """
        group: stable.example.com
        kind: CronTab
        versions:
          v1:
            storage: true
            schema: {spec: {image: string}}
          v1beta1:
            schema: {spec: {template: {image: string}}}
            conversion: {rename: {spec.template.image: spec.image}}
        """
    )


DOCS = Path(__file__).resolve().parents[3] / "docs" / "definitions.md"


def test_complete_examples_of_the_reference_load_and_check() -> None:
    blocks = DOCS.read_text().split("```yaml\n")[1:]
    examples = [block.split("```")[0] for block in blocks if block.startswith("# file: ")]
    assert examples
    for example in examples:
        file = Path(example.splitlines()[0].removeprefix("# file: "))
        loaded = load_text(example, file)
        check_definitions(loaded.definitions, loaded.sources)


def test_printer_columns_take_kubes_jsonpath_grammar() -> None:
    """client-go's util/jsonpath: slices, recursive descent, escaped dots and unions are accepted (the
    schema checks the steps before the first it cannot follow); what its parser refuses is refused with
    its words."""
    text = one_version(
        'spec: {labels: "map[string]int32", tags: "[]string"}\n',
        "printerColumns:\n"
        "  - {name: A, type: integer, jsonPath: '.spec.labels[*]'}\n"
        "  - {name: B, type: string, jsonPath: '.spec.tags[0:2]'}\n"
        "  - {name: C, type: string, jsonPath: '..tags'}\n"
        "  - {name: D, type: string, jsonPath: '.metadata.labels.example\\.com/x'}\n"
        "  - {name: E, type: string, jsonPath: '.spec.tags[0,1]'}\n"
        "  - {name: F, type: string, jsonPath: '.spec.tags['}\n"
        "  - {name: G, type: string, jsonPath: '.spec.tags[x]'}\n",
    )
    assert check_errors(text) == [
        f'{FILE}:9: printerColumns[5].jsonPath: JSONPath ".spec.tags[" is an unrecognized column'
        " definition: unterminated array",
        f'{FILE}:10: printerColumns[6].jsonPath: JSONPath ".spec.tags[x]" is an unrecognized column'
        " definition: invalid array index x",
    ]


def test_cel_functions_kube_does_not_enable_are_refused() -> None:
    """kube's strings extension is at version 2 (environment/base.go): format() and strings.quote() are
    provided, reverse() (version 3) and cel-go's lists extension (slice) are not: cel-go's checker refuses
    each call at its ``(`` (kube 1.34's answer, as the oracle gave it for the crd-cel scenario)."""
    errors = spec_rules_errors(
        """
        - rule: "strings.quote(self.a) != '%s'.format([self.a]) && self.a.substring(1) != ''"
        - rule: "self.a.reverse() != '' && self.l.slice(0, 1).size() < 2"
        """
    )
    source = "self.a.reverse() != '' && self.l.slice(0, 1).size() < 2"
    value = (
        '{"Rule":"self.a.reverse() != \'\' \\u0026\\u0026 self.l.slice(0, 1).size() \\u003c 2",'
        '"Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}'
    )
    assert errors == [
        f"{FILE}:19: {SPEC_RULES}[1].rule: Invalid value: {value}: compilation failed:"
        " ERROR: <input>:1:15: undeclared reference to 'reverse' (in container '')\n"
        f" | {source}\n | {'.' * 14}^\n"
        "ERROR: <input>:1:39: undeclared reference to 'slice' (in container '')\n"
        f" | {source}\n | {'.' * 38}^"
    ]


def test_cel_rules_over_their_cost_limits_are_refused_with_kubes_words() -> None:
    """apiextensions' static cost checks (validation.go: StaticEstimatedCostLimit per rule times its
    cardinality, StaticEstimatedCRDCostLimit for the schema): an O(n^2) rule over an unbounded list is over
    both, and each limit is reported where kube reports it; a linear rule on the same list is within its
    own limit (1,572,863 integers fit in 3 MiB: 6,291,454) but, being over 1% of the total's, is named as
    one of the costliest contributors, as kube names it."""
    errors = spec_rules_errors(
        """
        - rule: "self.l.all(x, x >= 0)"
        - rule: "self.l.all(x, self.l.all(y, x <= y || true))"
        """
    )
    advice = (
        " (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays,"
        " maps, and strings are declared)"
    )
    assert errors == [
        f"{FILE}:12: {SCHEMA_PATH}: Forbidden: x-kubernetes-validations estimated rule cost total for entire"
        f" OpenAPIv3 schema exceeds budget by factor of more than 100x{advice}",
        f"{FILE}:18: {SPEC_RULES}[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit"
        " for entire OpenAPIv3 schema",
        f"{FILE}:19: {SPEC_RULES}[1].rule: Forbidden: estimated rule cost exceeds budget by factor of more than"
        f" 100x{advice}",
        f"{FILE}:19: {SPEC_RULES}[1].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit"
        " for entire OpenAPIv3 schema",
    ]


def test_a_kind_stored_as_another_resource_converts_through_hooks() -> None:
    """``storedAs``: the hub is the other resource's storage version, which only toHub/fromHub hooks reach
    (kube's hand-written events.k8s.io conversions)."""
    stored_as = "storedAs: {group: core, version: v1, resource: events}\n"
    text = one_version("spec: {type: object, properties: {image: string}}", extra=stored_as)
    assert check_errors(text) == [
        f"{FILE}:5: versions.v1: a kind stored as another resource converts through toHub and "
        "fromHub hooks"
    ]
    passes(
        one_version(
            "spec: {type: object, properties: {image: string}}",
            extra=stored_as,
            version="    conversion: {toHub: a.b:c, fromHub: a.b:d}\n",
        )
    )
