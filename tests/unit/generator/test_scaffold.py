"""generator.scaffold: what `apiforge new` writes loads and checks as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.check import check_definitions
from generator.load import load_text
from generator.scaffold import scaffold_definition


@pytest.mark.parametrize(
    ("group", "kind", "scope", "expected_group", "plural"),
    [
        ("stable.example.com", "CronTab", "Namespaced", "stable.example.com", "crontabs"),
        ("platform.example.com", "Policy", "Cluster", "platform.example.com", "policies"),
        ("core", "Box", "Namespaced", "", "boxes"),
        ("", "Widget", "Cluster", "", "widgets"),
    ],
)
def test_scaffold_loads_and_checks(
    group: str, kind: str, scope: str, expected_group: str, plural: str
) -> None:
    text = scaffold_definition(group, kind, scope)
    loaded = load_text(text, Path(f"definitions/{group or 'core'}/{kind.lower()}.yaml"))
    check_definitions(loaded.definitions, loaded.sources)
    (definition,) = loaded.definitions
    assert (definition.group, definition.kind, definition.scope, definition.plural) == (
        expected_group,
        kind,
        scope,
        plural,
    )
    (v1,) = definition.versions
    assert (v1.name, v1.storage, v1.served, v1.status_subresource) == ("v1", True, True, True)
    assert [c.name for c in v1.printer_columns] == ["Replicas", "Ready", "Age"]
    spec = v1.schema["properties"]["spec"]["properties"]
    assert spec["replicas"] == {
        "type": "integer",
        "format": "int32",
        "description": "How many replicas to run.",
        "minimum": 0,
        "default": 1,
    }
    assert (
        v1.schema["properties"]["status"]["properties"]["conditions"]["x-kubernetes-list-type"]
        == "map"
    )


def test_scaffold_is_commented_and_deterministic() -> None:
    text = scaffold_definition("stable.example.com", "CronTab", "Namespaced")
    assert text == scaffold_definition("stable.example.com", "CronTab", "Namespaced")
    assert text.startswith("# CronTab: an apiforge resource definition in the compact format")
    assert "docs/definitions.md" in text
    assert (
        "# plural (crontabs), singular (crontab) and listKind (CronTabList) are derived from kind"
        in text
    )
    assert text.endswith("\n")


def test_scaffold_rejects_invalid_arguments() -> None:
    with pytest.raises(ValueError) as caught:
        scaffold_definition("example", "cronTab", "Namespace")
    assert str(caught.value) == (
        'group "example" needs at least one dot (e.g. example.example.com); "core" is the core group; '
        'kind "cronTab" must be UpperCamelCase: a capital letter, then letters and digits (e.g. CronTab); '
        'scope "Namespace" must be one of Namespaced, Cluster'
    )
