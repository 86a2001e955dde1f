"""What ``apiforge new`` and ``apiforge init`` write: a commented compact definition that loads and checks as
written, and the layout of a new API project around it.

The scaffold is a user's first contact with the format, so it shows each common part once (a storage version
with a small spec and status, the status subresource, printer columns, the standard conditions) with a comment
saying why it is there; docs/definitions.md has the rest. A project (definitions/, a Makefile with generate,
check and run targets calling the installed `apiforge`, a README, a .gitignore) is what a team commits to use
apiforge in its own repository, as kubebuilder's `init` lays one out.
"""

from __future__ import annotations

from pathlib import Path

import jinja2

from generator.check import group_problem, kind_problem
from generator.load_compact import plural_of
from generator.load_crd import SCOPES

__all__ = ["ProjectExists", "definition_path", "scaffold_definition", "scaffold_project"]

# the files of a new project beside its definitions/, by template (package data, as the generator's templates)
_PROJECT_FILES = {
    "Makefile": "Makefile.j2",
    "README.md": "README.md.j2",
    ".gitignore": "gitignore.j2",
}


class ProjectExists(Exception):
    """The directory of a new project already holds something: ``apiforge init`` never writes over files."""


def definition_path(definitions_dir: Path, group: str, kind: str) -> Path:
    """Where ``apiforge new`` puts the definition of ``kind``: one directory per group."""
    return definitions_dir / group / f"{kind.lower()}.yaml"


def scaffold_project(directory: Path, group: str, kind: str, scope: str) -> list[Path]:
    """Lay out a new API project in ``directory`` (created if missing) with one example kind; returns the
    files written. Raises ValueError for a bad group, kind or scope and ProjectExists for a directory that
    is not empty, before writing anything."""
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ProjectExists(f"{directory} is not an empty directory")
    definition = scaffold_definition(group, kind, scope)
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("generator", "templates/project"),
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    values = {
        "name": directory.resolve().name,
        "api_version": "v1" if group in ("", "core") else f"{group}/v1",
        "kind": kind,
        "plural": plural_of(kind.lower()),
    }
    files = {
        definition_path(Path("definitions"), group, kind): definition,
        **{
            Path(target): environment.get_template(template).render(values)
            for target, template in _PROJECT_FILES.items()
        },
    }
    written = []
    for relative, text in files.items():
        target = directory / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        written.append(target)
    return written


def scaffold_definition(group: str, kind: str, scope: str) -> str:
    """The YAML text of a new definition of ``kind`` in ``group`` ("" or "core": the core group).

    Raises ValueError naming every problem with the arguments.
    """
    core = group in ("", "core")
    problems = [] if core else [group_problem(group)]
    problems += [kind_problem(kind)]
    if scope not in SCOPES:
        problems.append(f'scope "{scope}" must be one of {", ".join(SCOPES)}')
    if any(problems):
        raise ValueError("; ".join(p for p in problems if p))
    singular = kind.lower()
    plural = plural_of(singular)
    group_line = (
        "group: core                      # the core group (served under /api/v1)"
        if core
        else (f"group: {group}")
    )
    return f"""\
# {kind}: an apiforge resource definition in the compact format (reference: docs/definitions.md).
# `make generate` compiles it into generated/; errors name the file, line and field to fix.
{group_line}
kind: {kind}
# plural ({plural}), singular ({singular}) and listKind ({kind}List) are derived from kind; set them to override.
scope: {scope}
description: {kind} is an example resource; say here what one {kind} represents.
# shortNames: [...]              # short names for kubectl, unique within the group
# categories: [all]              # `kubectl get all` lists resources of category all

subresources:
  status: true                   # .status is written through /status only; spec changes bump generation

printerColumns:                  # the columns of `kubectl get` (in every version unless a version overrides them)
  - name: Replicas
    type: integer
    jsonPath: .spec.replicas
  - name: Ready
    type: string
    jsonPath: .status.conditions[?(@.type=="Ready")].status
  - name: Age
    type: date
    jsonPath: .metadata.creationTimestamp

versions:
  v1:
    storage: true                # objects are stored in this version; other versions convert to and from it
    schema:
      spec:
        type: object
        description: The desired state of the {kind}, written by its users.
        properties:
          replicas:
            type: int32
            description: How many replicas to run.
            minimum: 0
            default: 1
          paused: boolean          # short form: a field name and its type
      status:
        type: object
        description: The observed state of the {kind}, written by its controller.
        properties:
          observedGeneration: int64
          conditions: "[]Condition"  # metav1.Condition entries, keyed by type
"""
