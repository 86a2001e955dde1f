"""A parser of CEL expressions into the AST cel-go's cost estimator walks.

The evaluator (cel-rust, the ``common-expression-language`` package) exposes no syntax tree and no cost
tracking, so the cost estimator (:mod:`apiserver.schema.celcost`) needs its own parse. This follows the CEL
grammar (github.com/google/cel-spec doc/langdef.md, "Syntax") and expands the macros as cel-go's parser does
(parser/macro.go: ``has``, ``all``, ``exists``, ``exists_one``, ``map``, ``filter``), so the tree has the
shape cel-go's checker costs. Rules are first compiled by cel-rust, so this parser only needs to be right on
valid expressions; on anything it cannot read it raises :class:`CelParseError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import count
from typing import Final

__all__ = [
    "ACCUMULATOR",
    "Call",
    "CelParseError",
    "Comprehension",
    "CreateList",
    "CreateMap",
    "Expr",
    "Ident",
    "Literal",
    "Select",
    "parse",
    "tokens",
]

ACCUMULATOR: Final = "@result"
"""The accumulator variable of expanded macros (cel-go's parser.AccumulatorName)."""


class CelParseError(ValueError):
    """An expression this parser cannot read."""


_ids = count(1)


@dataclass(eq=False)
class Expr:
    """A node; ``id`` keys the estimator's per-node tables, as cel-go's expression ids do."""

    id: int = field(default_factory=lambda: next(_ids), init=False)
    at: int = field(default=-1, init=False)
    """Where cel-go locates the node in the source (an identifier's first character, a call's ``(``, a
    selection's ``.``), as an offset in code points; -1 for the nodes macros make."""


@dataclass(eq=False)
class Literal(Expr):
    """``kind``: bool, int, uint, double, string, bytes or null; ``size`` as cel-go's computeExprSize
    (code points of a string, bytes of a bytes literal, 1 for scalars)."""

    kind: str = ""
    size: int = 1
    value: object = None


@dataclass(eq=False)
class Ident(Expr):
    name: str = ""


@dataclass(eq=False)
class Select(Expr):
    operand: Expr = field(default_factory=Expr)
    name: str = ""
    test_only: bool = False


@dataclass(eq=False)
class Call(Expr):
    """Operators are calls too, under cel-go's names (``_+_``, ``_==_``, ``!_``, ``_[_]``, ``@in``...)."""

    function: str = ""
    args: tuple[Expr, ...] = ()
    target: Expr | None = None


@dataclass(eq=False)
class CreateList(Expr):
    elements: tuple[Expr, ...] = ()


@dataclass(eq=False)
class CreateMap(Expr):
    entries: tuple[tuple[Expr, Expr], ...] = ()


@dataclass(eq=False)
class Comprehension(Expr):
    """``iter_var2``: the second variable of a two-variable comprehension (the value; ``iter_var`` is then
    the index or key), empty otherwise."""

    iter_var: str = ""
    iter_var2: str = ""
    iter_range: Expr = field(default_factory=Expr)
    accu_var: str = ACCUMULATOR
    accu_init: Expr = field(default_factory=Expr)
    loop_condition: Expr = field(default_factory=Expr)
    loop_step: Expr = field(default_factory=Expr)
    result: Expr = field(default_factory=Expr)


# -- tokens ------------------------------------------------------------------------------------------------

_TOKEN: Final = re.compile(
    r"""
    (?P<space>\s+|//[^\n]*)
    |(?P<number>0[xX][0-9a-fA-F]+[uU]?|(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|[0-9]+[uU]?)
    |(?P<string>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
    |(?P<ident>[_a-zA-Z][_a-zA-Z0-9]*)
    |(?P<op>\|\||&&|==|!=|<=|>=|\.\?|[-+*/%!<>?:.,()\[\]{}])
    """,
    re.VERBOSE | re.DOTALL,
)
_ESCAPE: Final = re.compile(
    r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)", re.DOTALL
)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    text: str
    start: int = -1


def _tokens(source: str) -> list[_Token]:
    out: list[_Token] = []
    position = 0
    while position < len(source):
        match = _TOKEN.match(source, position)
        if match is None:
            raise CelParseError(f"unexpected character at {position}: {source[position]!r}")
        kind = match.lastgroup or ""
        if kind != "space":
            out.append(_Token(kind, match.group(), position))
        position = match.end()
    out.append(_Token("end", "", position))
    return out


def tokens(source: str) -> list[tuple[str, str]]:
    """Each token's kind (number, string, ident, op; "end" last) and text, spaces and comments left
    out: for a rewrite of an expression that must not touch what is inside its string literals."""
    return [(t.kind, t.text) for t in _tokens(source)]


def _string_literal(text: str) -> Literal:
    prefix = re.match(r"[rRbB]*", text)
    flags = prefix.group().lower() if prefix else ""
    body = text[len(flags) :]
    quote = 3 if body[:3] in ('"""', "'''") else 1
    content = body[quote:-quote]
    is_bytes = "b" in flags
    if "r" not in flags:
        # each escape is one character (one byte in a bytes literal)
        content = _ESCAPE.sub("\0", content)
    if is_bytes:
        return Literal(kind="bytes", size=len(content.encode()), value=content)
    return Literal(kind="string", size=len(content), value=content)


def _number_literal(text: str) -> Literal:
    if text[-1] in "uU":
        return Literal(kind="uint", value=int(text[:-1], 0))
    if text.lower().startswith("0x"):
        return Literal(kind="int", value=int(text, 16))
    if any(ch in text for ch in ".eE"):
        return Literal(kind="double", value=float(text))
    return Literal(kind="int", value=int(text))


# -- the grammar -------------------------------------------------------------------------------------------

_RELATIONS: Final = {
    "<": "_<_",
    "<=": "_<=_",
    ">": "_>_",
    ">=": "_>=_",
    "==": "_==_",
    "!=": "_!=_",
    "in": "@in",
}
_ADDITIVE: Final = {"+": "_+_", "-": "_-_"}
_MULTIPLICATIVE: Final = {"*": "_*_", "/": "_/_", "%": "_%_"}
NOT_STRICTLY_FALSE: Final = "@not_strictly_false"


class _Parser:
    def __init__(self, source: str) -> None:
        self.tokens = _tokens(source)
        self.at = 0

    def peek(self) -> _Token:
        return self.tokens[self.at]

    def take(self) -> _Token:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def accept(self, text: str) -> bool:
        if self.peek().text == text and self.peek().kind in ("op", "ident"):
            self.at += 1
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.accept(text):
            raise CelParseError(f"expected {text!r}, found {self.peek().text!r}")

    def expr(self) -> Expr:
        condition = self.binary(0)
        if self.accept("?"):
            then = self.binary(0)
            self.expect(":")
            other = self.expr()
            return Call(function="_?_:_", args=(condition, then, other))
        return condition

    _LEVELS: Final = (
        {"||": "_||_"},
        {"&&": "_&&_"},
        _RELATIONS,
        _ADDITIVE,
        _MULTIPLICATIVE,
    )

    def binary(self, level: int) -> Expr:
        if level == len(self._LEVELS):
            return self.unary()
        operators = self._LEVELS[level]
        left = self.binary(level + 1)
        while self.peek().kind in ("op", "ident") and self.peek().text in operators:
            function = operators[self.take().text]
            right = self.binary(level + 1)
            left = Call(function=function, args=(left, right))
        return left

    def unary(self) -> Expr:
        if self.accept("!"):
            return Call(function="!_", args=(self.unary(),))
        if self.accept("-"):
            operand = self.unary()
            if isinstance(operand, Literal) and operand.kind in ("int", "double"):
                return operand  # cel-go folds a negated number literal into the literal
            return Call(function="-_", args=(operand,))
        return self.member()

    def member(self) -> Expr:
        node = self.primary()
        while True:
            if self.accept("."):
                dot = self.tokens[self.at - 1].start
                name = self.take()
                if name.kind != "ident":
                    raise CelParseError(f"expected a field name, found {name.text!r}")
                opening = self.peek().start
                if self.accept("("):
                    node = _located(_macro(name.text, node, self.arguments(")")), opening)
                else:
                    node = _located(Select(operand=node, name=name.text), dot)
            elif self.accept("["):
                self.accept("?")  # an optional index costs as an index
                index = self.expr()
                self.expect("]")
                node = Call(function="_[_]", args=(node, index))
            elif self.accept(".?"):  # an optional selection costs as a selection
                name = self.take()
                if name.kind != "ident":
                    raise CelParseError(f"expected a field name, found {name.text!r}")
                node = Select(operand=node, name=name.text)
            else:
                return node

    def arguments(self, close: str) -> tuple[Expr, ...]:
        args: list[Expr] = []
        while not self.accept(close):
            args.append(self.expr())
            if not self.accept(","):
                self.expect(close)
                break
        return tuple(args)

    def primary(self) -> Expr:
        token = self.take()
        if token.kind == "number":
            return _number_literal(token.text)
        if token.kind == "string":
            return _string_literal(token.text)
        if token.kind == "ident":
            if token.text in ("true", "false"):
                return Literal(kind="bool", value=token.text == "true")
            if token.text == "null":
                return Literal(kind="null")
            opening = self.peek().start
            if self.accept("("):
                return _located(_global_macro(token.text, self.arguments(")")), opening)
            return _located(Ident(name=token.text), token.start)
        if token.text == ".":
            name = self.take()
            return Ident(name=name.text)
        if token.text == "(":
            inner = self.expr()
            self.expect(")")
            return inner
        if token.text == "[":
            return CreateList(elements=self.arguments("]"))
        if token.text == "{":
            entries: list[tuple[Expr, Expr]] = []
            while not self.accept("}"):
                key = self.expr()
                self.expect(":")
                entries.append((key, self.expr()))
                if not self.accept(","):
                    self.expect("}")
                    break
            return CreateMap(entries=tuple(entries))
        raise CelParseError(f"unexpected {token.text or 'end of expression'!r}")


def _located(node: Expr, at: int) -> Expr:
    node.at = at
    return node


def _ident_name(node: Expr) -> str:
    if not isinstance(node, Ident):
        raise CelParseError("a macro's variable must be a simple name")
    return node.name


def _accu() -> Ident:
    return Ident(name=ACCUMULATOR)


NAMESPACES: Final = frozenset({"ip", "sets", "strings"})
"""Libraries whose functions are called by a qualified name (``sets.contains``), which cel-go resolves to
one global function, not to a method of a variable."""


def _global_macro(name: str, args: tuple[Expr, ...]) -> Expr:
    if name == "has" and len(args) == 1:
        target = args[0]
        if not isinstance(target, Select):
            raise CelParseError("invalid argument to has() macro")
        return Select(operand=target.operand, name=target.name, test_only=True)
    return Call(function=name, args=args)


def _macro(name: str, target: Expr, args: tuple[Expr, ...]) -> Expr:
    """cel-go's receiver macros (parser/macro.go; the two-variable ones of ext/comprehensions.go),
    expanded into comprehensions."""
    if name == "existsOne" and len(args) == 2:
        name = "exists_one"
    if (name in ("all", "exists", "exists_one", "filter") and len(args) == 2) or (
        name == "map" and len(args) in (2, 3)
    ):
        var = _ident_name(args[0])
        return _COMPREHENSIONS[name if len(args) == 2 else "map3"](var, target, args[1:])
    two = _TWO_VARIABLES.get(name)
    if two is not None and len(args) in two[1]:
        first, second = _ident_name(args[0]), _ident_name(args[1])
        comprehension = two[0](first, target, args[2:])
        comprehension.iter_var2 = second
        return comprehension
    if isinstance(target, Ident) and target.name in NAMESPACES:
        return Call(function=f"{target.name}.{name}", args=args)
    return Call(function=name, args=args, target=target)


def _all(var: str, target: Expr, args: tuple[Expr, ...]) -> Comprehension:
    return Comprehension(
        iter_var=var,
        iter_range=target,
        accu_init=Literal(kind="bool", value=True),
        loop_condition=Call(function=NOT_STRICTLY_FALSE, args=(_accu(),)),
        loop_step=Call(function="_&&_", args=(_accu(), args[0])),
        result=_accu(),
    )


def _exists(var: str, target: Expr, args: tuple[Expr, ...]) -> Comprehension:
    return Comprehension(
        iter_var=var,
        iter_range=target,
        accu_init=Literal(kind="bool", value=False),
        loop_condition=Call(
            function=NOT_STRICTLY_FALSE, args=(Call(function="!_", args=(_accu(),)),)
        ),
        loop_step=Call(function="_||_", args=(_accu(), args[0])),
        result=_accu(),
    )


def _exists_one(var: str, target: Expr, args: tuple[Expr, ...]) -> Comprehension:
    one = Literal(kind="int", value=1)
    return Comprehension(
        iter_var=var,
        iter_range=target,
        accu_init=Literal(kind="int", value=0),
        loop_condition=Literal(kind="bool", value=True),
        loop_step=Call(
            function="_?_:_",
            args=(args[0], Call(function="_+_", args=(_accu(), one)), _accu()),
        ),
        result=Call(function="_==_", args=(_accu(), Literal(kind="int", value=1))),
    )


def _appending(var: str, target: Expr, item: Expr, condition: Expr | None) -> Comprehension:
    step: Expr = Call(function="_+_", args=(_accu(), CreateList(elements=(item,))))
    if condition is not None:
        step = Call(function="_?_:_", args=(condition, step, _accu()))
    return Comprehension(
        iter_var=var,
        iter_range=target,
        accu_init=CreateList(),
        loop_condition=Literal(kind="bool", value=True),
        loop_step=step,
        result=_accu(),
    )


Expander = Callable[[str, Expr, tuple[Expr, ...]], Comprehension]
_COMPREHENSIONS: Final[dict[str, Expander]] = {
    "all": _all,
    "exists": _exists,
    "exists_one": _exists_one,
    "map": lambda var, target, args: _appending(var, target, args[0], None),
    "map3": lambda var, target, args: _appending(var, target, args[1], args[0]),
    "filter": lambda var, target, args: _appending(var, target, Ident(name=var), args[0]),
}


def _map_insert(var: str, target: Expr, args: tuple[Expr, ...], entry: bool) -> Comprehension:
    """transformMap and transformMapEntry: each step inserts into the accumulated map
    (``cel.@mapInsert``), under an optional filter."""
    value = args[-1]
    insert_args = (_accu(), value) if entry else (_accu(), Ident(name=var), value)
    step: Expr = Call(function="cel.@mapInsert", args=insert_args)
    if len(args) == 2:
        step = Call(function="_?_:_", args=(args[0], step, _accu()))
    return Comprehension(
        iter_var=var,
        iter_range=target,
        accu_init=CreateMap(),
        loop_condition=Literal(kind="bool", value=True),
        loop_step=step,
        result=_accu(),
    )


_TWO_VARIABLES: Final[dict[str, tuple[Expander, tuple[int, ...]]]] = {
    "all": (_all, (3,)),
    "exists": (_exists, (3,)),
    "existsOne": (_exists_one, (3,)),
    "transformList": (
        lambda var, target, args: _appending(
            var, target, args[-1], args[0] if len(args) == 2 else None
        ),
        (3, 4),
    ),
    "transformMap": (lambda var, target, args: _map_insert(var, target, args, False), (3, 4)),
    "transformMapEntry": (lambda var, target, args: _map_insert(var, target, args, True), (3, 4)),
}
"""The two-variable macros (cel-go ext/comprehensions.go): the expansion, and how many arguments."""


def parse(source: str) -> Expr:
    """The AST of ``source``, macros expanded; raises CelParseError."""
    parser = _Parser(source)
    node = parser.expr()
    if parser.peek().kind != "end":
        raise CelParseError(f"unexpected {parser.peek().text!r}")
    return node
