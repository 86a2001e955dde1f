"""Generated models: the shared meta/v1 types (ObjectMeta, ListMeta, Condition...) are emitted once, in
meta/v1/models.py, and every group-version imports them under the names it had before."""

from __future__ import annotations

import ast
import copy
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import generated.core.v1.models as core_v1
import generated.meta.v1.models as meta_v1
import generated.stable_example_com.v1.models as crontab_v1
from generator.models import render_models
from generator.pipeline import GenerateConfig, generate
from generator.schema_shorthand import CONDITION
from tests.serverproc import REPO

SHARED = {
    "ObjectMeta",
    "ListMeta",
    "ManagedFieldsEntry",
    "OwnerReference",
    "Condition",
    "ConditionStatus",
}
GROUP_VERSION_MODELS = sorted(
    path
    for path in (REPO / "generated").glob("*/*/models.py")
    if path.parts[-3] != "meta" and path.parts[-2] != "internal"
)


def _classes(source: str) -> set[str]:
    return {node.name for node in ast.parse(source).body if isinstance(node, ast.ClassDef)}


def _shared_imports(source: str) -> dict[str, str]:
    """Local name → shared name, for every import from the meta/v1 module."""
    return {
        alias.asname or alias.name: alias.name
        for node in ast.parse(source).body
        if isinstance(node, ast.ImportFrom) and node.level == 3 and node.module == "meta.v1.models"
        for alias in node.names
    }


def test_meta_module_defines_every_shared_type() -> None:
    assert _classes((REPO / "generated" / "meta" / "v1" / "models.py").read_text()) == SHARED


@pytest.mark.parametrize("path", GROUP_VERSION_MODELS, ids=lambda p: "/".join(p.parts[-3:-1]))
def test_group_versions_import_the_shared_types_instead_of_defining_them(path: Path) -> None:
    source = path.read_text()
    assert not _classes(source) & SHARED
    assert _shared_imports(source)["ObjectMeta"] == "ObjectMeta"


def test_names_a_group_version_had_still_import_as_the_shared_types() -> None:
    assert core_v1.ObjectMeta is meta_v1.ObjectMeta
    assert core_v1.OwnerReference is meta_v1.OwnerReference
    assert core_v1.ManagedFieldsEntry is meta_v1.ManagedFieldsEntry
    assert core_v1.Status is meta_v1.ConditionStatus
    # kube's NamespaceCondition is not metav1.Condition (no observedGeneration): a model of its own
    assert core_v1.NamespaceStatusConditionsItem is not meta_v1.Condition
    assert (
        "observedGeneration"
        not in core_v1.NamespaceStatusConditionsItem.model_json_schema()["properties"]
    )
    assert core_v1.ServiceStatusConditionsItem is meta_v1.Condition
    assert crontab_v1.CronTabStatusConditionsItem is meta_v1.Condition


def test_shared_condition_validates_as_the_schema_does() -> None:
    condition = {
        "type": "Ready",
        "status": "True",
        "lastTransitionTime": "2024-01-01T00:00:00Z",
        "reason": "Ok",
        "message": "",
    }
    crontab = {"metadata": {"name": "a"}, "status": {"conditions": [condition]}}
    model = crontab_v1.CronTab.model_validate(crontab)
    assert model.model_dump(mode="json", exclude_unset=True) == crontab
    with pytest.raises(ValueError, match="status"):
        crontab_v1.CronTab.model_validate(
            {"status": {"conditions": [{**condition, "status": "Maybe"}]}}
        )


def test_only_a_schema_equal_to_the_standard_condition_is_shared() -> None:
    odd = copy.deepcopy(CONDITION)
    odd["description"] = "A condition of our own."
    kind = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"standard": CONDITION, "odd": {"type": "array", "items": odd}},
            }
        },
    }
    source = render_models({"Widget": kind}, "Widget models.")
    assert "WidgetSpecOddItem" in _classes(source)
    assert "WidgetSpecStandard" not in _classes(source)
    assert _shared_imports(source)["Condition"] == "Condition"
    assert "WidgetSpecStandard = Condition" in source


def test_a_kind_named_like_a_shared_type_keeps_its_name(tmp_path: Path) -> None:
    """A kind called Condition with standard conditions: the kind keeps the name, the shared type is imported
    under another, and the old alias names the shared type."""
    definitions = tmp_path / "definitions"
    definitions.mkdir()
    (definitions / "condition.yaml").write_text(
        textwrap.dedent(
            """\
            group: example.com
            kind: Condition
            versions:
              v1:
                storage: true
                schema:
                  spec:
                    size: integer
                  status:
                    conditions: "[]Condition"
            """
        )
    )
    generate(GenerateConfig(definitions, tmp_path / "generated"))
    condition = {
        "type": "Ready",
        "status": "True",
        "lastTransitionTime": "2024-01-01T00:00:00Z",
        "reason": "Ok",
        "message": "m",
    }
    obj = {"metadata": {"name": "a"}, "spec": {"size": 1}, "status": {"conditions": [condition]}}
    script = textwrap.dedent(
        f"""\
        import json
        from generated.example_com.v1 import models
        from generated.meta.v1.models import Condition
        obj = models.Condition.model_validate(json.loads({json.dumps(obj)!r}))
        assert models.Condition is not Condition
        assert type(obj.status.conditions[0]) is Condition
        assert models.ConditionStatusConditionsItem is Condition
        print(json.dumps(obj.model_dump(mode="json", exclude_unset=True)))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": f"{tmp_path}:{REPO}", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == obj
