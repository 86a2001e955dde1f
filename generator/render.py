"""Render the IR into file contents (path → text), unit by unit (see units), in worker processes when there are
several units to render. Pure: nothing is read from or written to the output directory here.

datamodel-code-generator and the OpenAPI validator are imported only by the work that uses them (0.4 s and
0.2 s of imports). A run with few units to render (one added kind: its group-version and its group) renders
them here but for the group-versions' models, which one forked process writes meanwhile: its import of
datamodel-code-generator and the models (0.6 s) overlap this process's OpenAPI validation and templates."""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from functools import cache
from multiprocessing.context import BaseContext
from typing import Any

import jinja2

from generator.formatting import format_python
from generator.jsontext import dumps
from generator.naming import openapi_path_key
from generator.openapi import group_version_document
from generator.openapi_files import aggregate_files, fragments, v3_text
from generator.plan import GroupPlan, Plan, VersionPlan, snake
from generator.units import SHARED_UNIT, Job, Progress, Rendered, jobs, unit_key

# Below this many units to render, worker processes cost more than they save: spawned ones import the
# generator again (about a second); forked ones start at once, but one added kind (its group-version and its
# group: two units) took 0.6-0.7 s of CPU in two forked workers against 0.5 s in this process (2026-12-01).
PARALLEL_FROM_UNITS = 4

ModelsSource = Callable[[VersionPlan], str]
"""Where a group-version's models.py comes from: written here, or by another process (see _forked_models)."""


@cache
def _environment() -> jinja2.Environment:
    """One per process, so that each template is compiled once per run (0.01 s each), not once per unit."""
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
    environment.filters["json_value"] = json.loads  # a frozen setting (sorted JSON) as its value
    return environment


def _python_literal(value: Any) -> str:
    """A Python literal for JSON-like data (tuples stay tuples), stable for identical input."""
    return repr(value)


def _label(group: str, version: str = "") -> str:
    name = group or "core"
    return f"{name}/{version}" if version else name


def version_models(version: VersionPlan) -> str:
    """The group-version's models.py, by datamodel-code-generator (imported here: see the module docstring)."""
    from generator.models import render_models

    kinds = {kind.definition.kind: kind.version.schema for kind in version.kinds}
    return render_models(kinds, f"Pydantic models of {_label(version.group, version.name)}.")


def render_group_version(
    environment: jinja2.Environment, version: VersionPlan, models: ModelsSource = version_models
) -> dict[str, str]:
    """Every file of one group-version directory, keyed by path relative to the output directory; the models
    last, since ``models`` may wait for another process."""
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
    if any(kind.version.served for kind in version.kinds):
        files[f"{group_dir}/client.py"] = environment.get_template("client.py.j2").render(
            version=version
        )
    if version.has_protobuf:
        files[f"{group_dir}/protobuf.py"] = environment.get_template("protobuf.py.j2").render(
            version=version
        )
    kinds = {kind.definition.kind: kind.version.schema for kind in version.kinds}
    files[f"{group_dir}/schemas.json"] = dumps(kinds)
    files[f"{group_dir}/models.py"] = models(version)
    return files


def render_group(environment: jinja2.Environment, group: GroupPlan) -> dict[str, str]:
    """The files of one group but its versions': the package, the internal (hub) models, the REST bindings."""
    files: dict[str, str] = {}
    root = group.package
    files[f"{root}/__init__.py"] = environment.get_template("package_init.py.j2").render(
        docstring=f"The {_label(group.group)} API group."
    )
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
    from generator.models import META_MODELS_PATH, render_meta_models

    init = environment.get_template("package_init.py.j2")
    meta, version, _ = META_MODELS_PATH.split("/")
    return {
        f"{meta}/__init__.py": init.render(docstring="The meta/v1 types every API group shares."),
        f"{meta}/{version}/__init__.py": init.render(docstring="The meta/v1 group-version."),
        META_MODELS_PATH: render_meta_models(),
    }


def client_files(plan: Plan) -> dict[str, str]:
    """What `apiforge client --from-crd` packages, formatted: the meta/v1 models and, per group-version,
    its models and typed clients only (no server parts), keyed by path relative to the package."""
    environment = _environment()
    init = environment.get_template("package_init.py.j2")
    files = _meta_package(environment)
    for group in plan.groups:
        files[f"{group.package}/__init__.py"] = init.render(
            docstring=f"The {_label(group.group)} API group."
        )
        for version in group.versions:
            directory = version.package.replace(".", "/")
            files[f"{directory}/__init__.py"] = init.render(
                docstring=f"The {_label(version.group, version.name)} group-version."
            )
            files[f"{directory}/models.py"] = version_models(version)
            if any(kind.version.served for kind in version.kinds):
                files[f"{directory}/client.py"] = environment.get_template("client.py.j2").render(
                    version=version
                )
    return format_python(files)


def _render_version(
    environment: jinja2.Environment, version: VersionPlan, models: ModelsSource
) -> Rendered:
    """A group-version's files and, when it serves a kind, its OpenAPI document and entries (first: the
    models may come from another process, still writing them)."""
    if not any(kind.version.served for kind in version.kinds):
        return Rendered(render_group_version(environment, version, models))
    entries = fragments(group_version_document(version))
    files = render_group_version(environment, version, models)
    name = openapi_path_key(version.group, version.name).replace("/", "__")
    files[f"openapi/{name}.json"] = v3_text(entries)
    return Rendered(files, entries)


def render_job(job: Job, models: ModelsSource = version_models) -> Rendered:
    """One unit, its Python not yet formatted (a run formats all its Python at once): the work of a worker."""
    environment = _environment()
    if isinstance(job, VersionPlan):
        return _render_version(environment, job, models)
    if isinstance(job, GroupPlan):
        return Rendered(render_group(environment, job))
    return Rendered(_meta_package(environment))


def _context() -> BaseContext:
    """fork when this process runs no other thread (the workers start with the generator imported, in
    milliseconds), else spawn (each worker imports it again, about a second)."""
    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _timed(job: Job, models: ModelsSource = version_models) -> tuple[Rendered, float]:
    started = time.perf_counter()
    rendered = render_job(job, models)
    return rendered, time.perf_counter() - started


def _report(progress: Progress | None, job: Job, seconds: float) -> None:
    if progress is not None and isinstance(job, VersionPlan):
        kinds = f"{len(job.kinds)} kind{'s' if len(job.kinds) != 1 else ''}"
        progress(f"rendered {_label(job.group, job.name)} ({kinds}) {seconds:.1f} s")


def _in_workers(
    todo: list[Job], workers: int, context: BaseContext, progress: Progress | None
) -> dict[int, Rendered]:
    """Every job in a pool of worker processes. The heavy libraries are imported first, so that forked
    workers start with them (once per run, not once per worker: 0.6 s each)."""
    import openapi_spec_validator  # noqa: F401 (generator.openapi's validator)

    import generator.models  # noqa: F401

    results: dict[int, Rendered] = {}
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(_timed, job): index for index, job in enumerate(todo)}
        for future in as_completed(futures):
            index = futures[future]
            results[index], seconds = future.result()
            _report(progress, todo[index], seconds)
    return results


@contextmanager
def _forked_models(versions: list[VersionPlan], fork: bool) -> Iterator[ModelsSource]:
    """The group-versions' models, written by one forked process while this one renders the rest (``fork``),
    else here, when asked for."""
    if not fork or not versions:
        yield version_models
        return
    # What datamodel-code-generator (there) and the OpenAPI validator (here) both import, imported once,
    # before the fork: pydantic, 0.1-0.2 s of the 0.4 and 0.2 s their imports take.
    import pydantic.dataclasses
    import pydantic.json_schema
    import pydantic.networks
    import pydantic.root_model  # noqa: F401

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork")) as pool:
        pending: dict[str, Future[str]] = {
            version.package: pool.submit(version_models, version) for version in versions
        }
        yield lambda version: pending[version.package].result()


def _here(todo: list[Job], fork: bool, progress: Progress | None) -> dict[int, Rendered]:
    """Every job in this process, the group-versions last (their models come from _forked_models)."""
    versions = [job for job in todo if isinstance(job, VersionPlan)]
    results: dict[int, Rendered] = {}
    with _forked_models(versions, fork) as models:
        for index in sorted(range(len(todo)), key=lambda i: isinstance(todo[i], VersionPlan)):
            results[index], seconds = _timed(todo[index], models)
            _report(progress, todo[index], seconds)
    return results


def _render_jobs(todo: list[Job], workers: int, progress: Progress | None) -> list[Rendered]:
    """Each job's rendering, in ``todo``'s order; each group-version is reported as it is done."""
    cores = workers or os.cpu_count() or 1  # ``workers=1`` asks for no other process
    context = _context()
    if min(len(todo), cores) > 1 and len(todo) >= PARALLEL_FROM_UNITS:
        results = _in_workers(todo, min(len(todo), cores), context, progress)
    else:
        results = _here(todo, cores > 1 and context.get_start_method() == "fork", progress)
    return [results[index] for index in range(len(todo))]


def _shared_sources(environment: jinja2.Environment, plan: Plan) -> dict[str, str]:
    return {
        "__init__.py": environment.get_template("package_init.py.j2").render(
            docstring="Output of `apiforge generate`: committed, never edited by hand."
        ),
        "server.py": environment.get_template("server.py.j2").render(plan=plan),
    }


def render_plan(
    plan: Plan,
    cached: dict[str, Rendered] | None = None,
    workers: int = 0,
    progress: Progress | None = None,
) -> dict[str, Rendered]:
    """All generated files by the unit that produced them (see units).

    ``cached`` maps a unit to its previous rendering, reused as is; the others are rendered, by ``workers``
    processes (0: one per core) when there are several: rendering is CPU-bound (model generation, OpenAPI
    validation and serialisation), each group-version reported to ``progress`` when done. The shared unit is
    rendered every time: it depends on every other.
    """
    cached = cached or {}
    todo = [job for job in jobs(plan) if unit_key(job) not in cached]
    rendered = dict(zip(map(unit_key, todo), _render_jobs(todo, workers, progress), strict=True))
    shared = _shared_sources(_environment(), plan)
    python = {path: text for unit in rendered.values() for path, text in unit.files.items()}
    python = {path: text for path, text in {**python, **shared}.items() if path.endswith(".py")}
    formatted = format_python(python)
    units: dict[str, Rendered] = {}
    for job in jobs(plan):
        key = unit_key(job)
        if key in cached:
            units[key] = cached[key]
        else:
            unit = rendered[key]
            units[key] = Rendered(
                {p: formatted.get(p, t) for p, t in unit.files.items()}, unit.openapi
            )
    served = [
        (version.package, units[version.package].openapi)
        for group in plan.groups
        for version in group.versions
        if units[version.package].openapi
    ]
    units[SHARED_UNIT] = Rendered({**{p: formatted[p] for p in shared}, **aggregate_files(served)})
    return units
