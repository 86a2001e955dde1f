"""CEL's optional field and index selection (``self.?spec.?name``, ``self.labels[?'app']``; cel-go's
``cel.OptionalTypes()``, enabled by kube-apiserver since 1.28), for an evaluator (cel-rust) whose parser
refuses them. Before compiling, each is rewritten into a method call::

    self.?spec.name.orValue('')  ->  self.__opt_select__("spec").__opt_select__("name").orValue('')
    self.labels[?'app']          ->  self.labels.__opt_index__('app')

As in cel-go, the selections and indices that follow an optional one in the same chain are optional too;
a method call (``orValue``, ``hasValue``, ``value``...) ends the chain."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from apiserver.schema.celruntime import evaluator

SELECT: Final = "__opt_select__"
INDEX: Final = "__opt_index__"
Token = tuple[str, str]


def _present(receiver: Any) -> tuple[bool, Any]:
    """The value under an optional receiver (absent: False), or a plain receiver."""
    optional = evaluator().OptionalValue
    if isinstance(receiver, optional):
        return (True, receiver.value()) if receiver.has_value() else (False, None)
    return True, receiver


def _select(receiver: Any, name: Any) -> Any:
    present, value = _present(receiver)
    if present and isinstance(value, dict) and name in value:
        return evaluator().OptionalValue.of(value[name])
    return evaluator().OptionalValue.none()


def _index(receiver: Any, key: Any) -> Any:
    present, value = _present(receiver)
    if present and isinstance(value, dict) and key in value:
        return evaluator().OptionalValue.of(value[key])
    is_index = isinstance(key, int) and not isinstance(key, bool)
    if present and isinstance(value, list) and is_index and 0 <= key < len(value):
        return evaluator().OptionalValue.of(value[key])
    return evaluator().OptionalValue.none()


FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {SELECT: _select, INDEX: _index}


def _closing(toks: list[Token], start: int) -> int:
    """The index of the ``]`` matching the ``[`` at ``start``."""
    depth = 0
    for index in range(start, len(toks)):
        kind, text = toks[index]
        if kind == "op" and text in ("(", "[", "{"):
            depth += 1
        elif kind == "op" and text in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return index
    raise ValueError("unbalanced brackets")


def _ends_operand(token: Token | None) -> bool:
    return token is not None and (
        token[0] in ("ident", "string", "number") or token[1] in (")", "]", "}")
    )


def rewrite_tokens(toks: list[Token]) -> list[Token]:
    out: list[Token] = []
    chain = False
    index = 0
    while index < len(toks):
        kind, text = toks[index]
        after = toks[index + 1] if index + 1 < len(toks) else ("", "")
        called = index + 2 < len(toks) and toks[index + 2] == ("op", "(")
        if (
            kind == "op"
            and (text == ".?" or (text == "." and chain and not called))
            and after[0] == "ident"
        ):
            out += [
                ("op", "."),
                ("ident", SELECT),
                ("op", "("),
                ("string", json.dumps(after[1])),
                ("op", ")"),
            ]
            chain, index = True, index + 2
            continue
        if kind == "op" and text == "[" and _ends_operand(out[-1] if out else None):
            optional = after == ("op", "?")
            if optional or chain:
                end = _closing(toks, index)
                inner = rewrite_tokens(toks[index + (2 if optional else 1) : end])
                out += [("op", "."), ("ident", INDEX), ("op", "("), *inner, ("op", ")")]
                chain, index = True, end + 1
                continue
        if not (kind == "op" and text == "." and chain):
            chain = False
        out.append((kind, text))
        index += 1
    return out
