"""Undeclared references in a CEL expression, found and worded as cel-go's checker finds and words them
(checker/checker.go ``checkIdent`` and ``checkCall``, common/errors.go ``ToDisplayString``).

The evaluator (cel-rust) compiles an expression without declarations: a name it does not know fails only
when the expression runs, if ever. kube type-checks every expression against its environment when the CRD
or the policy is written and refuses one naming a variable or function the environment lacks
(``undeclared reference to 'bar' (in container '')``). So does :func:`undeclared`, over
:mod:`apiserver.schema.celparse`'s tree: an identifier is located at its first character, a call at its
``(``, as cel-go's parser locates them (parser/parser.go ``VisitIdentOrGlobalCall``,
``VisitSelectOrCall``)."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Final

from apiserver.schema.cellibs import ROOTS
from apiserver.schema.celparse import (
    NAMESPACES,
    Call,
    CelParseError,
    Comprehension,
    CreateList,
    CreateMap,
    Expr,
    Ident,
    Select,
    parse,
)

__all__ = ["STANDARD", "undeclared"]

STANDARD: Final = frozenset(
    {
        "bool", "bytes", "contains", "double", "duration", "dyn", "endsWith", "getDate",
        "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours", "getMilliseconds",
        "getMinutes", "getMonth", "getSeconds", "hasValue", "int", "matches", "none", "of",
        "ofNonZeroValue", "or", "orValue", "size", "startsWith", "string", "timestamp", "type", "uint",
        "value",
    }
)  # fmt: skip
"""The CEL standard functions (and optional-value methods) the evaluator has."""
_TYPE_NAMES: Final = frozenset(
    {"bool", "bytes", "double", "int", "list", "map", "null_type", "string", "type", "uint"}
)
"""Identifiers every CEL environment declares: the type names (``type(self) == string``)."""
_NAMESPACES: Final = frozenset({*ROOTS, *NAMESPACES, "optional"})
"""Names that qualify a function (``format.dns1123Label()``, ``optional.of(x)``) rather than name a value."""


def undeclared(source: str, variables: Collection[str], functions: Collection[str]) -> str | None:
    """cel-go's report of the names ``source`` uses that are neither ``variables``, nor standard or
    ``functions`` functions (None: there are none, or the expression is beyond this parser)."""
    try:
        ast = parse(source)
    except CelParseError:
        return None
    found = sorted(set(_references(ast, frozenset(variables), frozenset(functions) | STANDARD)))
    if not found:
        return None
    return "\n".join(
        _display(source, at, f"undeclared reference to '{name}' (in container '')")
        for at, name in found
    )


def _references(
    e: Expr, scope: frozenset[str], functions: frozenset[str]
) -> Iterator[tuple[int, str]]:
    """(offset, name) of each undeclared reference under ``e``; ``scope``: the variables in scope."""
    if isinstance(e, Ident):
        if e.name not in scope and e.name not in _TYPE_NAMES:
            yield e.at, e.name
    elif isinstance(e, Select):
        yield from _references(e.operand, scope, functions)
    elif isinstance(e, CreateList):
        for element in e.elements:
            yield from _references(element, scope, functions)
    elif isinstance(e, CreateMap):
        for key, value in e.entries:
            yield from _references(key, scope, functions)
            yield from _references(value, scope, functions)
    elif isinstance(e, Comprehension):
        yield from _references(e.iter_range, scope, functions)
        yield from _references(e.accu_init, scope, functions)
        inner = scope | {e.accu_var, e.iter_var, e.iter_var2} - {""}
        for part in (e.loop_condition, e.loop_step):
            yield from _references(part, inner, functions)
        yield from _references(e.result, scope | {e.accu_var}, functions)
    elif isinstance(e, Call):
        yield from _call(e, scope, functions)


def _call(e: Call, scope: frozenset[str], functions: frozenset[str]) -> Iterator[tuple[int, str]]:
    for arg in e.args:
        yield from _references(arg, scope, functions)
    name = e.function
    if not name[:1].isalpha() or "@" in name:  # an operator, or a macro's own (cel.@mapInsert)
        return
    member = name.rpartition(".")[2]  # the parser names sets.contains(...) so
    target = e.target
    if isinstance(target, Ident) and target.name in _NAMESPACES and target.name not in scope:
        if (
            name not in functions
        ):  # not a qualified function: cel-go checks the qualifier as a value
            yield target.at, target.name
    elif target is not None:
        yield from _references(target, scope, functions)
    if member not in functions:
        yield e.at, member


def _display(source: str, at: int, message: str) -> str:
    """common.Error.ToDisplayString: the location (1-based column), the line and a caret under it."""
    line_start = source.rfind("\n", 0, at) + 1
    line_end = source.find("\n", at)
    line = source[line_start : len(source) if line_end < 0 else line_end].replace("\t", " ")
    column = at - line_start
    number = source.count("\n", 0, at) + 1
    dots = "".join("." if ord(c) < 0x80 else "\uff0e" for c in line[:column])
    caret = "^" if column >= len(line) or ord(line[column]) < 0x80 else "\uff3e"
    return f"ERROR: <input>:{number}:{column + 1}: {message}\n | {line}\n | {dots}{caret}"
