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

from collections.abc import Collection, Iterator, Mapping
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


Fields = Mapping[str, Collection[str]]
"""Variables of an object type and their fields (an admission policy's ``variables``)."""


def undeclared(
    source: str,
    variables: Collection[str],
    functions: Collection[str],
    fields: Fields | None = None,
) -> str | None:
    """cel-go's report of the names ``source`` uses that are neither ``variables``, nor standard or
    ``functions`` functions, nor fields of the ``fields`` variables, and of the calls of global functions
    as methods (None: there are none, or the expression is beyond this parser)."""
    try:
        ast = parse(source)
    except CelParseError:
        return None
    names = _Names(frozenset(functions) | STANDARD, fields or {})
    found = sorted(set(names.references(ast, frozenset(variables))))
    if not found:
        return None
    return "\n".join(_display(source, at, message) for at, message in found)


class _Names:
    """The walk: which functions exist and which fields the object variables have."""

    def __init__(self, functions: frozenset[str], fields: Fields) -> None:
        self.functions = functions
        self.fields = fields

    def references(self, e: Expr, scope: frozenset[str]) -> Iterator[tuple[int, str]]:
        """(offset, message) of each undeclared reference under ``e``; ``scope``: the variables in
        scope."""
        if isinstance(e, Ident):
            if e.name not in scope and e.name not in _TYPE_NAMES:
                yield e.at, _undeclared(e.name)
        elif isinstance(e, Select):
            yield from self.select(e, scope)
        elif isinstance(e, CreateList):
            for element in e.elements:
                yield from self.references(element, scope)
        elif isinstance(e, CreateMap):
            for key, value in e.entries:
                yield from self.references(key, scope)
                yield from self.references(value, scope)
        elif isinstance(e, Comprehension):
            yield from self.references(e.iter_range, scope)
            yield from self.references(e.accu_init, scope)
            inner = scope | {e.accu_var, e.iter_var, e.iter_var2} - {""}
            for part in (e.loop_condition, e.loop_step):
                yield from self.references(part, inner)
            yield from self.references(e.result, scope | {e.accu_var})
        elif isinstance(e, Call):
            yield from self.call(e, scope)

    def select(self, e: Select, scope: frozenset[str]) -> Iterator[tuple[int, str]]:
        operand = e.operand
        yield from self.references(operand, scope)
        if isinstance(operand, Ident) and operand.name in scope:  # has(): at its (
            known = self.fields.get(operand.name)
            if known is not None and e.name not in known:
                yield e.at, f"undefined field '{e.name}'"

    def call(self, e: Call, scope: frozenset[str]) -> Iterator[tuple[int, str]]:
        for arg in e.args:
            yield from self.references(arg, scope)
        name = e.function
        if not name[:1].isalpha() or "@" in name:  # an operator, or a macro's own (cel.@mapInsert)
            return
        member = name.rpartition(".")[2]  # the parser names sets.contains(...) so
        target = e.target
        if isinstance(target, Ident) and target.name in _NAMESPACES and target.name not in scope:
            if name not in self.functions:  # no qualified function: cel-go checks the qualifier
                yield target.at, _undeclared(target.name)
        elif target is not None:
            yield from self.references(target, scope)
        if member not in self.functions:
            yield e.at, _undeclared(member)
        elif member in _GLOBAL_ONLY and target is not None and not e.args:
            receiver = _library_type(target)
            if receiver:  # cel-go's noMatchingOverload, the signature as formatFunctionDeclType
                yield e.at, f"found no matching overload for '{member}' applied to '{receiver}.()'"


_GLOBAL_ONLY: Final = frozenset({"sign"})
"""Library functions kube declares as global overloads only (k8s.io/apiserver/pkg/cel/library/quantity.go:
``sign(quantity)``), so that a member call of them has no overload."""
_QUANTITY: Final = "kubernetes.Quantity"


def _library_type(e: Expr) -> str:
    """The type of a library value made by a call whose result type is known ("" otherwise)."""
    if isinstance(e, Call) and e.target is None and e.function == "quantity":
        return _QUANTITY
    if isinstance(e, Call) and e.function in ("add", "sub") and e.target is not None:
        return _library_type(e.target)
    return ""


def _undeclared(name: str) -> str:
    return f"undeclared reference to '{name}' (in container '')"


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
