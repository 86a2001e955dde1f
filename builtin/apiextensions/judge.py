"""A CustomResourceDefinition judged as `apiforge generate` judges a CRD file: one implementation of the
rules (the generator's loader and checks: names, versions, structural schema, defaults, CEL, printer columns,
scale paths, selectable fields), run on the posted object: a CRD is served exactly when it generates."""

from __future__ import annotations

import re
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from apiserver.schema import Cause

if TYPE_CHECKING:
    from generator.definition import Definition, DefinitionError

__all__ = ["judge", "remembered"]


# field.ErrorType's reasons, by the text its messages start with (k8s.io/apimachinery/pkg/util/validation/field)
_REASONS = (
    ("Unsupported value", "FieldValueNotSupported"),
    ("Required value", "FieldValueRequired"),
    ("Forbidden", "FieldValueForbidden"),
    ("Duplicate value", "FieldValueDuplicate"),
    ("Too long", "FieldValueTooLong"),
    ("Too many", "FieldValueTooMany"),
)
_SCHEMA_MAPS = re.compile(
    r'\.(properties|patternProperties|definitions|dependencies)(?:\.([^.\[]+)|\["([^"]*)"\])'
)


def _kube_path(path: str, hoisted: bool) -> str:
    """kube's field path: map keys in brackets (``properties[spec]``); and, when every version has the same
    schema, kube's internal ``spec.validation`` that the v1 API's per-version schemas convert to."""
    path = _SCHEMA_MAPS.sub(lambda m: f".{m.group(1)}[{m.group(2) or m.group(3)}]", path)
    path = re.sub(r'\["([^"]*)"\]', r"[\1]", path)  # field.Path's Key: metadata.annotations[a.b/c]
    if hoisted:
        path = re.sub(r"^spec\.versions\[\d+\]\.schema\.", "spec.validation.", path)
    return path


def _hoisted(crd: dict[str, Any]) -> bool:
    """Whether kube reports schema errors under spec.validation: all versions declare one same schema."""
    versions = (crd.get("spec") or {}).get("versions")
    if not isinstance(versions, list) or not versions:
        return False
    schemas = [v.get("schema") if isinstance(v, dict) else None for v in versions]
    return all(schema == schemas[0] for schema in schemas)


def _cause(error: DefinitionError, hoisted: bool) -> Cause:
    reason = next(
        (r for prefix, r in _REASONS if error.message.startswith(prefix)), "FieldValueInvalid"
    )
    return Cause(reason, error.message, _kube_path(error.field_path, hoisted))


_REMEMBERED = 256
_judged: OrderedDict[bytes, tuple[Definition | None, list[Cause]]] = OrderedDict()
_UNJUDGED_METADATA = ("resourceVersion", "managedFields")


def _judged_key(crd: dict[str, Any]) -> bytes:
    """What the judgement depends on: the spec, the name, and which metadata and status keys are present
    (their values are not judged), so the controller reuses the judgement the create was admitted with
    even after the status changes."""
    metadata = crd.get("metadata")
    if isinstance(metadata, dict):
        metadata = {k: v for k, v in metadata.items() if k not in _UNJUDGED_METADATA}
    status = crd.get("status")
    shape = {
        **crd,
        "metadata": metadata,
        "status": sorted(status) if isinstance(status, dict) else status,
    }
    return orjson.dumps(shape, option=orjson.OPT_SORT_KEYS)


def remembered(crd: dict[str, Any]) -> tuple[Definition | None, list[Cause]] | None:
    """The judgement of ``crd`` if it is one of the last few judged (no thread needed to get it)."""
    found = _judged.get(_judged_key(crd))
    return None if found is None else (found[0], list(found[1]))


def judge(crd: dict[str, Any]) -> tuple[Definition | None, list[Cause]]:
    """The CRD's Definition (what the server builds its resource from), or None and why it is invalid.
    Remembered for the last few CRDs: a large CRD takes a few hundred milliseconds, and each is judged
    by the write that admits it and again by the controller that serves it."""
    key = _judged_key(crd)
    if key in _judged:
        _judged.move_to_end(key)
    else:
        _judged[key] = _judge(crd)
        while len(_judged) > _REMEMBERED:
            _judged.popitem(last=False)
    definition, causes = _judged[key]
    return definition, list(causes)  # callers add their own causes to the list


def _judge(crd: dict[str, Any]) -> tuple[Definition | None, list[Cause]]:
    # the generator's loader and checks, imported by the first CRD judged: a server that has none yet
    # (a test fixture's first start, `apiforge serve`) starts without them
    from generator.check import check_definitions
    from generator.definition import DefinitionErrors
    from generator.load_crd import load_crd
    from generator.sourcemap import SourceMap
    from generator.yamlsource import LineIndex, YamlDocument

    name = str((crd.get("metadata") or {}).get("name", ""))
    document = YamlDocument(Path(name), crd, LineIndex({}))
    definition, source, reader = load_crd(document)
    hoisted = _hoisted(crd)
    if reader.errors or definition is None:
        return None, [_cause(error, hoisted) for error in reader.errors]
    sources = SourceMap()
    sources.add(definition, source)
    try:
        check_definitions([definition], sources)
    except DefinitionErrors as found:
        return None, [_cause(error, hoisted) for error in found.errors]
    return definition, []
