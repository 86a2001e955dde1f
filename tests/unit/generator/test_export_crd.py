"""`apiforge export crds`, judged by the rules apiforge's run-time CRD path applies to a posted CRD
(builtin/apiextensions/judge.py): every exported CRD of every shipped and golden project is valid, and reads
back as the Definition it was exported from, everything a CRD can carry included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from builtin.apiextensions.judge import judge
from generator.definition import Definition, Version
from generator.export_crd import export_crds, exportable
from generator.export_webhook import WEBHOOK_FILE, WebhookService
from generator.load import load_checked
from tests.convertproject import DEFINITIONS as MOVES_DEFINITIONS
from tests.shipped import shipped_definitions

GOLDEN = Path(__file__).parent / "golden"
PROJECTS = {
    "definitions": shipped_definitions(),
    "convertproject": MOVES_DEFINITIONS,
    **{f"golden-{p.name}": p / "definitions" for p in sorted(GOLDEN.iterdir())},
}


def _version(version: Version) -> dict[str, Any]:
    """What a CRD can say of a version (not conversions, which go to the webhook, nor function columns)."""
    return {
        "name": version.name,
        "served": version.served,
        "storage": version.storage,
        "schema": version.schema,
        "deprecated": version.deprecated,
        "deprecation_warning": version.deprecation_warning,
        "status": version.status_subresource,
        "scale": version.scale_subresource,
        "columns": [c for c in version.printer_columns if not c.cell and c.format != "name"],
        "selectable_fields": version.selectable_fields,
    }


def _carried(definition: Definition) -> dict[str, Any]:
    return {
        "names": (definition.group, definition.kind, definition.plural, definition.singular),
        "list_kind": definition.list_kind,
        "scope": definition.scope,
        "short_names": definition.short_names,
        "categories": definition.categories,
        "versions": [_version(v) for v in definition.versions],
    }


@pytest.mark.parametrize("definitions", PROJECTS.values(), ids=PROJECTS.keys())
def test_every_exported_crd_is_judged_valid_and_reads_back_as_its_definition(
    definitions: Path, tmp_path: Path
) -> None:
    root = definitions.resolve()
    expected = {
        (d.group, d.plural): d
        for d in load_checked(definitions)
        if exportable(d) and d.source.resolve().is_relative_to(root)
    }
    written = export_crds(definitions, tmp_path, WebhookService())
    crds = [yaml.safe_load(f.read_text()) for f in written if f.name != WEBHOOK_FILE]
    assert len(crds) == len(expected) > 0
    for crd in crds:
        judged, causes = judge(crd)
        assert causes == [], crd["metadata"]["name"]
        assert judged is not None
        assert _carried(judged) == _carried(expected[(judged.group, judged.plural)])


def test_conversion_is_webhook_only_where_versions_move_fields(tmp_path: Path) -> None:
    strategies = {}
    for project in (
        "definitions",
        "golden-flat_rename",
        "golden-conversion_hooks",
        "golden-defaults",
    ):
        for file in export_crds(PROJECTS[project], tmp_path / project, WebhookService()):
            if file.name != WEBHOOK_FILE:
                conversion = yaml.safe_load(file.read_text())["spec"]["conversion"]
                strategies[project, file.stem] = conversion["strategy"]
    assert strategies == {
        ("definitions", "platform.example.com_computeclusters"): "None",  # one version
        ("definitions", "stable.example.com_crontabs"): "Webhook",  # v1beta1 renames spec.schedule
        ("golden-flat_rename", "example.com_gadgets"): "Webhook",
        ("golden-conversion_hooks", "example.com_gadgets"): "Webhook",
        ("golden-defaults", "example.com_gadgets"): "None",  # one version
    }
    assert not (tmp_path / "golden-defaults" / WEBHOOK_FILE).exists()
    assert (tmp_path / "golden-flat_rename" / WEBHOOK_FILE).exists()


def test_columns_a_function_computes_are_left_out(tmp_path: Path) -> None:
    project = PROJECTS["golden-printer_cells"]
    (file,) = export_crds(project, tmp_path, WebhookService())
    (version,) = yaml.safe_load(file.read_text())["spec"]["versions"]
    (definition,) = [d for d in load_checked(project) if d.group == "example.com"]
    declared = definition.versions[0].printer_columns
    exported = [c["name"] for c in version["additionalPrinterColumns"]]
    assert exported == [c.name for c in declared if not c.cell]
    assert len(exported) < len(declared)
