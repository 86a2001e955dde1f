"""A CustomResourceDefinition judged as `apiforge generate` judges a CRD file: one implementation of the
rules (the generator's loader and checks: names, versions, structural schema, defaults, CEL, printer columns,
scale paths, selectable fields), run on the posted object in the run-time mode (a conversion webhook is
allowed, and strategy None need not be total, as kube-apiserver prunes what the other version lacks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from apiserver.schema import Cause
from generator.check import check_definitions
from generator.definition import Definition, DefinitionError, DefinitionErrors
from generator.load_crd import load_crd
from generator.sourcemap import SourceMap
from generator.yamlsource import LineIndex, YamlDocument

__all__ = ["judge"]


def _cause(error: DefinitionError) -> Cause:
    return Cause("FieldValueInvalid", error.message, error.field_path)


def judge(crd: dict[str, Any]) -> tuple[Definition | None, list[Cause]]:
    """The CRD's Definition (what the server builds its resource from), or None and why it is invalid."""
    name = str((crd.get("metadata") or {}).get("name", ""))
    document = YamlDocument(Path(name), crd, LineIndex({}))
    definition, source, reader = load_crd(document, run_time=True)
    if reader.errors or definition is None:
        return None, [_cause(error) for error in reader.errors]
    sources = SourceMap()
    sources.add(definition, source)
    try:
        check_definitions([definition], sources, run_time=True)
    except DefinitionErrors as found:
        return None, [_cause(error) for error in found.errors]
    return definition, []
