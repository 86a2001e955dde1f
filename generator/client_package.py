"""`apiforge client --from-crd FILE... --out DIR`: a pip-installable package of typed clients for other
people's CustomResourceDefinitions (cert-manager, Gateway API...), usable against any cluster.

The package holds what the CRDs define (models, which double as apply configurations, and a client module per
group-version) and depends on the apiforge wheel for the runtime (``apiclient``: connections, informers,
``extract``; and the models' base class) rather than vendoring a copy: the runtime is one package that gets
its fixes by upgrading, and the generated code stays the same whatever version of it runs it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as installed_version
from pathlib import Path

import jinja2

from generator.check import check_definitions
from generator.definition import DefinitionError, DefinitionErrors
from generator.load import load_documents
from generator.plan import Plan, VersionPlan, build_plan
from generator.yamlsource import read_file

PACKAGE_VERSION = "0.1.0"


@dataclass(frozen=True)
class _Version:
    package: str
    accessors: tuple[str, ...]


def package_name(out_dir: Path) -> str:
    """The import name a package written to ``out_dir`` gets by default: the directory's name as a Python
    identifier."""
    name = re.sub(r"\W+", "_", out_dir.resolve().name).strip("_").lower()
    return name if name and not name[0].isdigit() else f"crds_{name}"


def load_crds(files: Sequence[Path]) -> Plan:
    """The checked definitions of ``files`` (CRDs, or apiforge's compact format), planned; raises
    DefinitionErrors with every error of every file."""
    documents = []
    errors: list[DefinitionError] = []
    for file in files:
        try:
            documents.extend(read_file(file))
        except DefinitionErrors as failure:
            errors.extend(failure.errors)
    if errors:
        raise DefinitionErrors(errors)
    loaded = load_documents(documents)
    if not loaded.definitions:
        raise DefinitionErrors([DefinitionError(files[0], 1, "", "no CustomResourceDefinition")])
    check_definitions(loaded.definitions, loaded.sources)
    return build_plan(loaded.definitions)


def write_client_package(files: Sequence[Path], out_dir: Path, package: str = "") -> list[Path]:
    """Write the package of ``files``' kinds into ``out_dir`` (import name ``package``, by default from the
    directory's name); returns the files written."""
    from generator.render import client_files

    plan = load_crds(files)
    package = package or package_name(out_dir)
    sources = {f"{package}/{path}": text for path, text in client_files(plan).items()}
    sources[f"{package}/__init__.py"] = f'"""Typed clients for {", ".join(_kinds(plan))}."""\n'
    sources[f"{package}/py.typed"] = ""
    sources.update(_project_files(plan, package))
    written = []
    for path, text in sorted(sources.items()):
        target = out_dir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        written.append(target)
    return written


def _kinds(plan: Plan) -> list[str]:
    return [f"{d.kind}.{d.group}" for group in plan.groups for d in group.definitions]


def _runtime() -> str:
    """The apiforge the package needs: this one's minor release series."""
    try:
        current = installed_version("apiforge")
    except PackageNotFoundError:  # run from a source tree that is not installed
        current = PACKAGE_VERSION
    major, minor = (int(part) for part in current.split(".")[:2])
    return f"apiforge>={major}.{minor},<{major}.{minor + 1}"


def _accessors(version: VersionPlan) -> tuple[str, ...]:
    return tuple(
        kind.definition.plural.replace("-", "_") for kind in version.kinds if kind.version.served
    )


def _project_files(plan: Plan, package: str) -> dict[str, str]:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("generator", "templates/clientpackage"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    versions = [
        _Version(version.package, _accessors(version))
        for group in plan.groups
        for version in group.versions
        if _accessors(version)
    ]
    first = next(kind for v in plan.groups[0].versions for kind in v.kinds if kind.version.served)
    context = {
        "package": package,
        "distribution": package.replace("_", "-"),
        "version": PACKAGE_VERSION,
        "runtime": _runtime(),
        "kinds": _kinds(plan),
        "groups": [group.group for group in plan.groups],
        "versions": versions,
        "first_accessor": first.definition.plural.replace("-", "_"),
        "first_namespace": '"default"' if first.definition.namespaced else "",
    }
    return {
        name: environment.get_template(f"{name}.j2").render(**context)
        for name in ("pyproject.toml", "README.md")
    }
