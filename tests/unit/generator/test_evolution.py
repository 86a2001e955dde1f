"""`apiforge check`'s rules on a table of before/after definitions: each breaking or suspect change is flagged
with its rule, severity, file and line, and additive changes pass. The rules follow
openshift/crd-schema-checker's comparators and kubernetes-sigs/kube-api-linter's conventions; ratcheting is
staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/validation/ratcheting.go."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from apiforge.cli import main
from generator.evolution import Finding, compare
from generator.evolution_revision import from_directory
from tests.convertproject import DEFINITIONS as CONVERT_DEFINITIONS
from tests.serverproc import free_port

Definition = dict[str, Any]

BASE: Definition = {
    "group": "evo.example.com",
    "kind": "Gizmo",
    "printerColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
    "versions": {
        "v1": {
            "storage": True,
            "schema": {
                "spec": {
                    "type": "object",
                    "required": False,
                    "x-kubernetes-validations": [{"rule": "self.size <= 10"}],
                    "properties": {
                        "size": {
                            "type": "integer",
                            "minimum": 0,
                            "maximum": 10,
                            "default": 1,
                            "required": False,
                        },
                        "name": {"type": "string", "maxLength": 20, "required": True},
                        "mode": {"type": "string", "enum": ["fast", "slow"], "required": False},
                        "tags": {
                            "type": "[]string",
                            "x-kubernetes-list-type": "set",
                            "required": False,
                        },
                        "ports": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["port"],
                            "items": {"port": {"type": "integer", "required": True}},
                            "required": False,
                        },
                        "note": {"type": "string", "required": False},
                    },
                },
                "status": {
                    "type": "object",
                    "required": False,
                    "properties": {"conditions": {"type": "[]Condition", "required": False}},
                },
            },
        },
    },
}


def spec(definition: Definition, version: str = "v1") -> dict[str, Any]:
    props: dict[str, Any] = definition["versions"][version]["schema"]["spec"]["properties"]
    return props


Edit = Callable[[Definition], object]


def change(edit: Edit, base: Definition = BASE) -> Definition:
    new = copy.deepcopy(base)
    edit(new)
    return new


def write(directory: Path, definition: Definition) -> Path:
    target = directory / "evo.example.com" / "gizmo.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(yaml.safe_dump(definition, sort_keys=False))
    return target


def findings(tmp_path: Path, new: Definition, old: Definition = BASE) -> list[Finding]:
    write(tmp_path / "old", old)
    write(tmp_path / "new", new)
    return compare(from_directory(tmp_path / "old"), from_directory(tmp_path / "new"))


def with_version(definition: Definition, name: str, storage: bool) -> None:
    v1 = definition["versions"]["v1"]
    definition["versions"][name] = {**copy.deepcopy(v1), "storage": storage}
    v1["storage"] = not storage


def two_versions(definition: Definition) -> None:
    with_version(definition, "v2", storage=False)


def renamed_version(definition: Definition) -> None:
    """v2 calls spec.name spec.title, and says so: converting loses nothing."""
    two_versions(definition)
    fields = spec(definition, "v2")
    fields["title"] = fields.pop("name")
    definition["versions"]["v2"]["conversion"] = {"rename": {"spec.title": "spec.name"}}


TWO_VERSIONS = change(two_versions)

BREAKING: list[tuple[str, Edit, str, str, Definition]] = [
    ("field removed", lambda d: spec(d).pop("note"), "field-removed", "spec.note", BASE),
    ("version removed", lambda d: d["versions"].pop("v2"), "version-removed", "", TWO_VERSIONS),
    (
        "version no longer served",
        lambda d: d["versions"]["v2"].update(served=False),
        "version-removed",
        "",
        TWO_VERSIONS,
    ),
    (
        "enum value removed",
        lambda d: spec(d)["mode"].update(enum=["fast"]),
        "enum-value-removed",
        "spec.mode",
        BASE,
    ),
    (
        "type changed",
        lambda d: spec(d)["note"].update(type="integer"),
        "type-changed",
        "spec.note",
        BASE,
    ),
    (
        "new required field",
        lambda d: spec(d).update(owner={"type": "string", "required": True}),
        "required-added",
        "spec.owner",
        BASE,
    ),
    (
        "existing field made required",
        lambda d: spec(d)["note"].update(required=True),
        "required-added",
        "spec.note",
        BASE,
    ),
    (
        "maxLength lowered",
        lambda d: spec(d)["name"].update(maxLength=10),
        "validation-tightened",
        "spec.name",
        BASE,
    ),
    (
        "pattern added",
        lambda d: spec(d)["note"].update(pattern="^[a-z]+$"),
        "validation-tightened",
        "spec.note",
        BASE,
    ),
    (
        "minimum raised",
        lambda d: spec(d)["size"].update(minimum=1),
        "validation-tightened",
        "spec.size",
        BASE,
    ),
    (
        "maximum lowered",
        lambda d: spec(d)["size"].update(maximum=5),
        "validation-tightened",
        "spec.size",
        BASE,
    ),
    (
        "new CEL rule",
        lambda d: spec(d)["note"].update({"x-kubernetes-validations": [{"rule": "self != 'x'"}]}),
        "validation-tightened",
        "spec.note",
        BASE,
    ),
    (
        "default changed",
        lambda d: spec(d)["size"].update(default=2),
        "default-changed",
        "spec.size",
        BASE,
    ),
    (
        "default removed",
        lambda d: spec(d)["size"].pop("default"),
        "default-changed",
        "spec.size",
        BASE,
    ),
    (
        "storage version moved, old one removed",
        lambda d: (d["versions"].pop("v1"), d["versions"]["v2"].update(storage=True)),
        "storage-version-changed",
        "",
        TWO_VERSIONS,
    ),
    (
        "list type changed",
        lambda d: spec(d)["tags"].update({"x-kubernetes-list-type": "atomic"}),
        "list-type-changed",
        "spec.tags",
        BASE,
    ),
    (
        "list map keys changed",
        lambda d: (
            spec(d)["ports"]["items"].update(protocol={"type": "string", "required": True}),
            spec(d)["ports"].update({"x-kubernetes-list-map-keys": ["port", "protocol"]}),
        ),
        "list-type-changed",
        "spec.ports",
        BASE,
    ),
    (
        "CEL rule over the cost budget",
        lambda d: spec(d).update(
            items={
                "type": "[]string",
                "x-kubernetes-list-type": "atomic",
                "required": False,
                "x-kubernetes-validations": [
                    {"rule": "self.all(x, self.all(y, self.all(z, x + y + z != '')))"}
                ],
            }
        ),
        "cel-cost",
        "spec.items",
        BASE,
    ),
    ("kind scope changed", lambda d: d.update(scope="Cluster"), "scope-changed", "", BASE),
    (
        "what generate refuses",
        lambda d: d["versions"]["v1"].update(
            subresources={
                "scale": {"specReplicasPath": ".spec.none", "statusReplicasPath": ".status.none"}
            }
        ),
        "invalid-definition",
        "",
        BASE,
    ),
]

WARNINGS: list[tuple[str, Edit, str, str, Definition]] = [
    (
        "printer column removed",
        lambda d: d.update(printerColumns=[]),
        "printer-column-removed",
        "",
        BASE,
    ),
    (
        "storage version moved, old one still served",
        lambda d: (
            d["versions"]["v1"].update(storage=False),
            d["versions"]["v2"].update(storage=True),
        ),
        "storage-version-changed",
        "",
        TWO_VERSIONS,
    ),
    (
        "default added to an existing field",
        lambda d: spec(d)["note"].update(default="n"),
        "default-changed",
        "spec.note",
        BASE,
    ),
    (
        "new field neither optional nor required",
        lambda d: spec(d).update(owner="string"),
        "optional-or-required",
        "spec.owner",
        BASE,
    ),
    (
        "new list without a list type",
        lambda d: spec(d).update(aliases={"type": "[]string", "required": False}),
        "list-type-missing",
        "spec.aliases",
        BASE,
    ),
    (
        "new conditions not shaped as metav1.Condition",
        lambda d: d["versions"]["v1"]["schema"]["status"]["properties"].update(
            phases={
                "type": "object",
                "required": False,
                "properties": {
                    "conditions": {
                        "type": "array",
                        "x-kubernetes-list-type": "atomic",
                        "required": False,
                        "items": {
                            "type": "object",
                            "properties": {"type": {"type": "string", "required": True}},
                        },
                    }
                },
            }
        ),
        "conditions-shape",
        "status.phases.conditions",
        BASE,
    ),
    (
        "new floating-point field",
        lambda d: spec(d).update(ratio={"type": "number", "required": False}),
        "no-floats",
        "spec.ratio",
        BASE,
    ),
]

ADDITIVE: list[tuple[str, Edit]] = [
    ("optional field", lambda d: spec(d).update(owner={"type": "string", "required": False})),
    ("enum value", lambda d: spec(d)["mode"].update(enum=["fast", "slow", "auto"])),
    ("looser bound", lambda d: spec(d)["name"].update(maxLength=40)),
    ("new served version", two_versions),
    ("new version with a declared rename", renamed_version),
    (
        "printer column",
        lambda d: d["printerColumns"].append(
            {"name": "Note", "type": "string", "jsonPath": ".spec.note"}
        ),
    ),
    ("short name", lambda d: d.update(shortNames=["gz"])),
    ("description", lambda d: spec(d)["note"].update(description="A note.")),
]


def the(found: list[Finding], rule: str) -> list[Finding]:
    return [f for f in found if f.rule == rule]


@pytest.mark.parametrize(
    ("edit", "rule", "field", "old"),
    [pytest.param(*case[1:], id=case[0]) for case in BREAKING],
)
def test_each_breaking_change_is_flagged(
    tmp_path: Path, edit: Edit, rule: str, field: str, old: Definition
) -> None:
    found = findings(tmp_path, change(edit, old), old)
    flagged = the(found, rule)
    assert flagged, [f.text() for f in found]
    assert {f.severity for f in flagged} == {"breaking"}
    assert field in {f.field for f in flagged} or not field
    for finding in flagged:
        assert finding.file.endswith("evo.example.com/gizmo.yaml") and finding.line > 1


@pytest.mark.parametrize(
    ("edit", "rule", "field", "old"),
    [pytest.param(*case[1:], id=case[0]) for case in WARNINGS],
)
def test_each_suspect_change_is_a_warning(
    tmp_path: Path, edit: Edit, rule: str, field: str, old: Definition
) -> None:
    found = findings(tmp_path, change(edit, old), old)
    flagged = the(found, rule)
    assert flagged, [f.text() for f in found]
    assert {f.severity for f in flagged} == {"warning"}
    assert field in {f.field for f in flagged} or not field
    assert not the(found, "invalid-definition")


@pytest.mark.parametrize("edit", [pytest.param(edit, id=name) for name, edit in ADDITIVE])
def test_additive_changes_pass(tmp_path: Path, edit: Edit) -> None:
    assert findings(tmp_path, change(edit)) == []


def test_tightened_validation_says_what_ratcheting_lets_through(tmp_path: Path) -> None:
    (finding,) = findings(tmp_path, change(lambda d: spec(d)["name"].update(maxLength=10)))
    assert "maxLength changed from 20 to 10" in finding.message
    assert "validation ratcheting" in finding.message
    lines = (tmp_path / "new/evo.example.com/gizmo.yaml").read_text().splitlines()
    assert lines[finding.line - 1].strip() == "maxLength: 10"


def test_a_removed_kind_is_reported_in_the_old_revision(tmp_path: Path) -> None:
    write(tmp_path / "old", BASE)
    (tmp_path / "new").mkdir()
    (finding,) = compare(from_directory(tmp_path / "old"), from_directory(tmp_path / "new"))
    assert (finding.rule, finding.severity) == ("kind-removed", "breaking")
    assert finding.file == f"{tmp_path / 'old'}/evo.example.com/gizmo.yaml"


def test_the_command_exits_1_on_breaking_findings_and_prints_json(tmp_path: Path) -> None:
    write(tmp_path / "old", BASE)
    write(tmp_path / "new", change(lambda d: spec(d).pop("note")))
    runner = CliRunner()
    args = ["check", "--definitions", str(tmp_path / "new"), "--against", str(tmp_path / "old")]
    result = runner.invoke(main, [*args, "--format", "json"])
    assert result.exit_code == 1, result.output
    (finding,) = json.loads(result.stdout)
    assert finding["rule"] == "field-removed" and finding["field"] == "spec.note"
    assert finding["kind"] == "Gizmo.evo.example.com" and finding["version"] == "v1"
    text = runner.invoke(main, args)
    assert text.exit_code == 1
    assert f"{tmp_path / 'new'}/evo.example.com/gizmo.yaml:" in text.stdout
    assert (
        ": breaking: field-removed: Gizmo.evo.example.com/v1: spec.note was removed" in text.stdout
    )


def test_the_command_exits_0_on_an_additive_change(tmp_path: Path) -> None:
    write(tmp_path / "old", BASE)
    write(tmp_path / "new", change(two_versions))
    result = CliRunner().invoke(
        main, ["check", "--definitions", str(tmp_path / "new"), "--against", str(tmp_path / "old")]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == ""


def test_against_a_git_ref(tmp_path: Path) -> None:
    """The old revision read from a commit, nothing checked out; findings name the file as ``REF:path``."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write(tmp_path / "definitions", BASE)
    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=tmp_path, check=True)
    write(tmp_path / "definitions", change(lambda d: d.pop("printerColumns")))
    result = CliRunner().invoke(
        main,
        [
            "check",
            "--definitions",
            str(tmp_path / "definitions"),
            "--against",
            "HEAD",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    (finding,) = json.loads(result.stdout)
    assert finding["rule"] == "printer-column-removed"
    assert finding["file"] == f"{tmp_path / 'definitions'}/evo.example.com/gizmo.yaml"


def test_an_unknown_ref_is_an_error(tmp_path: Path) -> None:
    write(tmp_path / "definitions", BASE)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    result = CliRunner().invoke(
        main, ["check", "--definitions", str(tmp_path / "definitions"), "--against", "no-such-ref"]
    )
    assert result.exit_code == 2
    assert "no-such-ref" in result.stderr


def crd(*versions: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gizmos.evo.example.com"},
        "spec": {
            "group": "evo.example.com",
            "names": {"plural": "gizmos", "kind": "Gizmo"},
            "scope": "Namespaced",
            "versions": list(versions),
        },
    }


def crd_version(name: str, storage: bool, *fields: str) -> dict[str, Any]:
    properties = {field: {"type": "integer"} for field in fields}
    spec_schema = {"type": "object", "properties": properties}
    schema = {"type": "object", "properties": {"spec": spec_schema}}
    return {"name": name, "served": True, "storage": storage, "schema": {"openAPIV3Schema": schema}}


def test_a_version_that_cannot_hold_a_field_loses_it_in_conversion(tmp_path: Path) -> None:
    """A CRD without a webhook converts by pruning (kube's strategy None): a sample with every field set,
    sent to v2 and back, loses what v2 does not declare. A warning: kube allows it, clients of v2 lose data."""
    write(tmp_path / "old", crd(crd_version("v1", True, "size", "count")))
    write(
        tmp_path / "new",
        crd(crd_version("v1", True, "size", "count"), crd_version("v2", False, "count")),
    )
    found = compare(from_directory(tmp_path / "old"), from_directory(tmp_path / "new"))
    assert [(f.rule, f.severity, f.version, f.field) for f in found] == [
        ("conversion-lossy", "warning", "v2", "spec.size")
    ]
    assert "does not survive conversion to v2 and back" in found[0].message


def size_only(definition: Definition) -> None:
    """BASE cut down to what crd_version("v1", True, "size") declares: spec.size."""
    definition.pop("printerColumns")
    schema = definition["versions"]["v1"]["schema"]
    del schema["status"], schema["spec"]["x-kubernetes-validations"]
    schema["spec"]["properties"] = {"size": {"type": "integer", "required": False}}


COMPACT_GIZMO = change(size_only)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(COMPACT_GIZMO, crd(crd_version("v1", True, "size")), id="compact to CRD"),
        pytest.param(crd(crd_version("v1", True, "size")), COMPACT_GIZMO, id="CRD to compact"),
    ],
)
def test_the_same_kind_in_the_other_format_changes_nothing(
    tmp_path: Path, old: Definition, new: Definition
) -> None:
    """A compact definition's schema declares apiVersion, kind and metadata at its root and this CRD's does
    not; kube keeps them at the root either way (pruning's isResourceRoot,
    staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning/algorithm.go), so nothing was
    removed or added. The old revision is what `apiforge check --server` reads: a server's CRDs."""
    assert [f.text() for f in findings(tmp_path, new, old)] == []


def test_the_shipped_conversions_and_their_hooks_are_lossless() -> None:
    """Renames into and out of nested objects and the Ticket's hooks (tests/convertproject, imported from
    the repository's root as `apiforge check` imports a project's) bring every field back."""
    revision = from_directory(CONVERT_DEFINITIONS)
    assert [f.text() for f in compare(revision, revision) if f.rule.startswith("conversion")] == []


TICKET = """\
group: hooks.example.com
kind: Ticket
versions:
  v1:
    storage: true
    schema:
      spec:
        title: {type: string, required: false}
        priority: {type: integer, required: false}
  v1alpha1:
    schema:
      spec:
        title: {type: string, required: false}
        level: {type: string, required: false}
    conversion:
      toHub: lossyhooks:to_hub
      fromHub: lossyhooks:from_hub
"""

HOOKS = """\
def to_hub(obj):
    level = obj.get("spec", {}).get("level")
    if level is not None:
        obj["spec"]["priority"] = int(level)
    return obj


def from_hub(obj):
    return obj  # forgets to write spec.level: the priority is lost on the way back
"""


def test_a_hook_that_drops_a_field_is_lossy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "definitions").mkdir()
    (tmp_path / "definitions" / "ticket.yaml").write_text(TICKET)
    (tmp_path / "lossyhooks.py").write_text(HOOKS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "empty").mkdir()
    found = compare(from_directory(tmp_path / "empty"), from_directory(tmp_path / "definitions"))
    lossy = the(found, "conversion-lossy")
    assert [(f.version, f.field, f.severity) for f in lossy] == [
        ("v1alpha1", "spec.priority", "warning")
    ]


def test_a_hook_that_cannot_be_imported_leaves_the_conversion_unchecked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "definitions").mkdir()
    (tmp_path / "definitions" / "ticket.yaml").write_text(
        TICKET.replace("lossyhooks", "nosuchhooks")
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "empty").mkdir()
    found = compare(from_directory(tmp_path / "empty"), from_directory(tmp_path / "definitions"))
    (unchecked,) = the(found, "conversion-unchecked")
    assert unchecked.severity == "warning" and unchecked.version == "v1alpha1"
    assert "ModuleNotFoundError: No module named 'nosuchhooks'" in unchecked.message


@pytest.mark.parametrize(
    "args",
    [
        pytest.param([], id="no old revision"),
        pytest.param(["--against", "x", "--server", "https://h"], id="two"),
    ],
)
def test_exactly_one_old_revision_is_named(args: list[str]) -> None:
    result = CliRunner().invoke(main, ["check", *args])
    assert result.exit_code == 2
    assert "give either --against REF or --server URL/--kubeconfig FILE" in result.stderr


@pytest.mark.parametrize(
    ("option", "error"),
    [
        pytest.param("--server", "ConnectError: ", id="no answer"),
        pytest.param(
            "--kubeconfig", "ConfigError: kubeconfig: no context named ''", id="no context"
        ),
    ],
)
def test_a_server_that_cannot_be_read_is_an_error_not_a_finding(
    tmp_path: Path, option: str, error: str
) -> None:
    """Exit 2, as for any revision that cannot be read: exit 1 would tell CI that the change breaks."""
    write(tmp_path / "definitions", BASE)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\n")
    value = f"http://127.0.0.1:{free_port()}" if option == "--server" else str(kubeconfig)
    result = CliRunner().invoke(
        main, ["check", "--definitions", str(tmp_path / "definitions"), option, value]
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: cannot read the server: {error}")


def test_what_a_git_ref_had_is_named_ref_colon_path(tmp_path: Path) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write(tmp_path / "definitions", BASE)
    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=tmp_path, check=True)
    (tmp_path / "definitions" / "evo.example.com" / "gizmo.yaml").unlink()
    result = CliRunner().invoke(
        main, ["check", "--definitions", str(tmp_path / "definitions"), "--against", "HEAD"]
    )
    assert result.exit_code == 1
    assert result.stdout.startswith(
        "HEAD:definitions/evo.example.com/gizmo.yaml:2: breaking: kind-removed: Gizmo.evo.example.com: "
    )
