"""The in-process admission hooks a definition names exist: each ``package.module:function`` is found
without running it (the module's file located with importlib's finder, its top level read with ``ast``),
so a typo fails generation with the definition's line rather than the server's start."""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from generator.check_conversion import HOOK_REFERENCE
from generator.definition import Definition, JsonPath

__all__ = ["check_admission_hooks"]


def _top_level_names(source: str) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


@contextmanager
def _importable_from(project: Path) -> Iterator[None]:
    """The project's directory on the import path while its hooks are looked up, as the server has it
    (it runs from there)."""
    entry = str(project)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        sys.path.remove(entry)


def _problem(reference: str) -> str | None:
    if not HOOK_REFERENCE.match(reference):
        return f'"{reference}" must be a "package.module:function" reference'
    module, _, function = reference.partition(":")
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError) as error:
        return f'module "{module}" cannot be found: {error}'
    if spec is None:
        return f'module "{module}" not found (the server imports it from the project directory)'
    origin = spec.origin
    if origin is None or not origin.endswith(".py"):
        return None  # a namespace or compiled module: checked when the server imports it
    try:
        names = _top_level_names(Path(origin).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError) as error:
        return f'module "{module}" cannot be read: {error}'
    if function not in names:
        return f'module "{module}" defines no "{function}"'
    return None


def check_admission_hooks(definition: Definition, report: Callable[[JsonPath, str], None]) -> None:
    """``definitions/<group>/<kind>.yaml``: the project is the directory holding ``definitions``."""
    if not definition.server.admission_hooks:
        return
    with _importable_from(Path(definition.source).resolve().parents[2]):
        _check(definition, report)


def _check(definition: Definition, report: Callable[[JsonPath, str], None]) -> None:
    seen: set[str] = set()
    for index, hook in enumerate(definition.server.admission_hooks):
        here: JsonPath = ("admissionHooks", index)
        if hook.name in seen:
            report((*here, "name"), f'duplicate hook name "{hook.name}"')
        seen.add(hook.name)
        problem = _problem(hook.function)
        if problem is not None:
            report((*here, "function"), problem)
