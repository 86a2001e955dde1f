"""What ``apiforge new`` writes: a commented compact definition that loads and checks as written.

The scaffold is a user's first contact with the format, so it shows each common part once (a storage version
with a small spec and status, the status subresource, printer columns, the standard conditions) with a comment
saying why it is there; docs/definitions.md has the rest.
"""

from __future__ import annotations

from generator.check import group_problem, kind_problem
from generator.load_compact import plural_of
from generator.load_crd import SCOPES

__all__ = ["scaffold_definition"]


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
