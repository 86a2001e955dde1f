"""Render the IR into file contents (path → text). Pure: no file is read or written here."""

from __future__ import annotations

import json
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import black
import jinja2
from black.mode import TargetVersion

from generator.models import META_MODELS_PATH, render_meta_models, render_models
from generator.naming import openapi_path_key
from generator.openapi import aggregate_document, group_version_document
from generator.openapi_v2 import swagger_document
from generator.plan import GroupPlan, Plan, VersionPlan, snake

# Below this many groups to render, starting worker processes (each importing the generators) costs more
# than it saves.
PARALLEL_FROM_GROUPS = 4
BLACK_MODE = black.Mode(line_length=100, target_versions={TargetVersion.PY311})


def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        # the templates ship inside the package, so an installed apiforge renders without its repository
        loader=jinja2.PackageLoader("generator", "templates"),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    environment.filters["py"] = _python_literal
    environment.globals["resource_constant"] = lambda d: snake(d.kind).upper()
    # "package.module:Name" → the dotted name the generated module reaches it by (it imports the module)
    environment.filters["attribute"] = lambda reference: reference.replace(":", ".")
    return environment


def _python_literal(value: Any) -> str:
    """A Python literal for JSON-like data (tuples stay tuples), stable for identical input."""
    return repr(value)


def format_python(source: str) -> str:
    return black.format_str(source, mode=BLACK_MODE)


def _json(document: Any) -> str:
    return json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _label(group: str, version: str = "") -> str:
    name = group or "core"
    return f"{name}/{version}" if version else name


def render_group_version(environment: jinja2.Environment, version: VersionPlan) -> dict[str, str]:
    """Every file of one group-version directory, keyed by path relative to the output directory."""
    group_dir = version.package.replace(".", "/")
    label = _label(version.group, version.name)
    files: dict[str, str] = {}
    files[f"{group_dir}/__init__.py"] = environment.get_template("package_init.py.j2").render(
        docstring=f"The {label} group-version."
    )
    for module in ("schemas", "defaults", "validation", "conversion"):
        files[f"{group_dir}/{module}.py"] = environment.get_template(f"{module}.py.j2").render(
            version=version
        )
    if version.has_protobuf:
        files[f"{group_dir}/protobuf.py"] = environment.get_template("protobuf.py.j2").render(
            version=version
        )
    kinds = {kind.definition.kind: kind.version.schema for kind in version.kinds}
    files[f"{group_dir}/schemas.json"] = _json(kinds)
    files[f"{group_dir}/models.py"] = render_models(kinds, f"Pydantic models of {label}.")
    return files


def render_group(environment: jinja2.Environment, group: GroupPlan) -> dict[str, str]:
    """Every file of one group: its versions, the internal (hub) models and the REST bindings."""
    files: dict[str, str] = {}
    root = group.package
    files[f"{root}/__init__.py"] = environment.get_template("package_init.py.j2").render(
        docstring=f"The {_label(group.group)} API group."
    )
    for version in group.versions:
        files.update(render_group_version(environment, version))
    files[f"{root}/internal/__init__.py"] = environment.get_template("package_init.py.j2").render(
        docstring=f"The internal (hub) version of each kind of the {_label(group.group)} group."
    )
    files[f"{root}/internal/models.py"] = environment.get_template("internal_models.py.j2").render(
        group=group
    )
    files[f"{root}/rest.py"] = environment.get_template("rest.py.j2").render(group=group)
    return files


def _meta_package(environment: jinja2.Environment) -> dict[str, str]:
    """The shared meta/v1 models (ObjectMeta, ListMeta, Condition...), which every group-version imports."""
    init = environment.get_template("package_init.py.j2")
    meta, version, _ = META_MODELS_PATH.split("/")
    return {
        f"{meta}/__init__.py": init.render(docstring="The meta/v1 types every API group shares."),
        f"{meta}/{version}/__init__.py": init.render(docstring="The meta/v1 group-version."),
        META_MODELS_PATH: render_meta_models(),
    }


def render_openapi(group: GroupPlan) -> dict[str, str]:
    """The OpenAPI v3 document of each served group-version of ``group``, validated as it is built."""
    files: dict[str, str] = {}
    for version in group.versions:
        if any(kind.version.served for kind in version.kinds):
            name = openapi_path_key(version.group, version.name).replace("/", "__")
            files[f"openapi/{name}.json"] = _json(group_version_document(version))
    return files


def render_unit(group: GroupPlan) -> dict[str, str]:
    """One group's files, formatted: the unit of caching and of parallel work."""
    rendered = render_group(_environment(), group)
    files = {
        path: format_python(text) if path.endswith(".py") else text
        for path, text in rendered.items()
    }
    files.update(render_openapi(group))
    return files


def render_plan(
    plan: Plan, cached: dict[str, dict[str, str]] | None = None
) -> dict[str, dict[str, str]]:
    """All generated files grouped by the unit that produced them (a group package, or "" for shared files).

    ``cached`` maps a unit to its previous files; a unit found there is reused as is, not re-rendered. Groups
    to render go to worker processes when there are several: rendering is CPU-bound (model generation, black,
    OpenAPI validation).
    """
    units: dict[str, dict[str, str]] = {}
    todo = [group for group in plan.groups if cached is None or group.package not in cached]
    for group in plan.groups:
        if cached is not None and group.package in cached:
            units[group.package] = cached[group.package]
    workers = min(len(todo), os.cpu_count() or 1)
    if workers > 1 and len(todo) >= PARALLEL_FROM_GROUPS:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            for group, files in zip(todo, pool.map(render_unit, todo), strict=True):
                units[group.package] = files
    else:
        for group in todo:
            units[group.package] = render_unit(group)
    environment = _environment()
    shared = {
        "__init__.py": environment.get_template("package_init.py.j2").render(
            docstring="Output of `apiforge generate`: committed, never edited by hand."
        ),
        "server.py": environment.get_template("server.py.j2").render(plan=plan),
        **_meta_package(environment),
    }
    shared = {path: format_python(text) for path, text in shared.items()}
    documents = [
        json.loads(text)
        for unit in (units[group.package] for group in plan.groups)
        for path, text in sorted(unit.items())
        if path.startswith("openapi/")
    ]
    shared["openapi/aggregate.json"] = _json(aggregate_document(documents))
    shared["openapi/swagger.json"] = _json(
        swagger_document(documents)
    )  # /openapi/v2 (kubectl 1.27, 1.28)
    units[""] = shared
    return units
