"""Kubernetes' JSONPath (k8s.io/client-go/util/jsonpath, parser.go and jsonpath.go), which kube-apiserver
evaluates a CRD's printer columns with (``{`` + jsonPath + ``}``, missing keys allowed): fields with escaped
dots (``.metadata.labels.strimzi\\.io/cluster``), quoted keys (``['a.b']``), indices and slices
(``[0]``, ``[-1]``, ``[1:3]``, ``[*]``), unions (``[0,2]``, ``['a','b']``), filters
(``[?(@.type=="Ready")]``, ``[?(@.x)]``, ``<``, ``>=``...), wildcards (``.*``) and recursive descent
(``..name``). The parser is a port of client-go's, so what it refuses, and the words it refuses it with,
are kube's.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

__all__ = [
    "Array",
    "Field",
    "Filter",
    "JSONPathError",
    "ListNode",
    "Recursive",
    "Union",
    "Wildcard",
    "compile_path",
    "find",
    "parse",
]


class JSONPathError(ValueError):
    """A template kube's parser refuses, or an evaluation kube's fails (the message is kube's)."""


# -- nodes (client-go node.go) ------------------------------------------------------------------------


@dataclass(frozen=True)
class ListNode:
    nodes: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Field:
    name: str


@dataclass(frozen=True)
class Identifier:
    name: str


@dataclass(frozen=True)
class Number:
    value: int | float


@dataclass(frozen=True)
class Bool:
    value: bool


@dataclass(frozen=True)
class Param:
    known: bool
    value: int
    derived: bool = False


@dataclass(frozen=True)
class Array:
    params: tuple[Param, Param, Param]


@dataclass(frozen=True)
class Filter:
    left: ListNode
    right: ListNode
    operator: str


@dataclass(frozen=True)
class Wildcard:
    pass


@dataclass(frozen=True)
class Recursive:
    pass


@dataclass(frozen=True)
class Union:
    lists: tuple[ListNode, ...]


# -- the parser (client-go parser.go) -----------------------------------------------------------------

_DICT_KEY: Final = re.compile(r"^'([^']*)'$")
_SLICE: Final = re.compile(r"^(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?$")
_FILTER: Final = re.compile(r"^([^!<>=]+)([!<>=]+)(.+?)$", re.DOTALL)
_TERMINATORS: Final = frozenset(" \t\r\n.,[]$@{}")
_ESCAPES: Final = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _is_alphanumeric(ch: str) -> bool:
    return ch == "_" or ch.isalpha() or unicodedata.category(ch) == "Nd"


def _go_rune(ch: str) -> str:
    """Go's %#U: U+0041 'A' (the character only when printable)."""
    return f"U+{ord(ch):04X} '{ch}'" if ch.isprintable() else f"U+{ord(ch):04X}"


def _is_terminator(ch: str) -> bool:
    return ch == "" or ch in _TERMINATORS


def _unquote(text: str) -> str:
    """client-go's UnquoteExtend (strconv.Unquote, single quotes too)."""
    if len(text) < 2 or text[0] != text[-1] or text[0] not in "\"'":
        raise JSONPathError("invalid syntax")
    quote, body, out = text[0], text[1:-1], []
    index = 0
    while index < len(body):
        ch = body[index]
        if ch == quote:
            raise JSONPathError("invalid syntax")
        if ch != "\\":
            out.append(ch)
            index += 1
            continue
        escape = body[index + 1 : index + 2]
        if escape in _ESCAPES:
            out.append(_ESCAPES[escape])
        elif escape in ("\\", quote):
            out.append(escape)
        elif escape in ("x", "u", "U"):
            width = {"x": 2, "u": 4, "U": 8}[escape]
            digits = body[index + 2 : index + 2 + width]
            if len(digits) != width or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise JSONPathError("invalid syntax")
            out.append(chr(int(digits, 16)))
            index += width
        elif escape[:1].isdigit():
            digits = body[index + 1 : index + 4]
            if len(digits) != 3 or not all(c in "01234567" for c in digits):
                raise JSONPathError("invalid syntax")
            out.append(chr(int(digits, 8)))
            index += 2
        else:
            raise JSONPathError("invalid syntax")
        index += 2
    return "".join(out)


class _Parser:
    def __init__(self, text: str) -> None:
        self.input = text
        self.pos = 0
        self.start = 0
        self.root = ListNode()

    def next(self) -> str:
        if self.pos >= len(self.input):
            return ""
        ch = self.input[self.pos]
        self.pos += 1
        return ch

    def backup(self, ch: str) -> None:
        if ch:
            self.pos -= 1

    def peek(self) -> str:
        return self.input[self.pos] if self.pos < len(self.input) else ""

    def consume(self) -> str:
        value = self.input[self.start : self.pos]
        self.start = self.pos
        return value

    def parse_text(self) -> None:
        while True:
            if self.input.startswith("{", self.pos):
                if self.pos > self.start:
                    self.root.nodes.append(Text(self.consume()))
                self.pos += 1
                self.consume()
                current = ListNode()
                self.root.nodes.append(current)
                self.inside(current)
                return
            if self.next() == "":
                break
        if self.pos > self.start:
            self.root.nodes.append(Text(self.consume()))

    def inside(self, cur: ListNode) -> None:
        """parseInsideAction, as a loop (Go recurses after each node)."""
        while True:
            rest = self.input[self.pos :]
            if rest.startswith("}"):
                self.pos += 1
                self.consume()
                self.parse_text()
                return
            if rest.startswith("[?("):
                self.parse_filter(cur)
                continue
            if rest.startswith(".."):
                self.parse_recursive(cur)
                continue
            ch = self.next()
            if ch == "" or ch in "\r\n":
                raise JSONPathError("unclosed action")
            if ch in " @$":
                self.consume()
            elif ch == "[":
                self.parse_array(cur)
            elif ch in "\"'":
                self.parse_quote(cur, ch)
            elif ch == ".":
                self.parse_field(cur)
            elif ch in "+-" or unicodedata.category(ch) == "Nd":
                self.backup(ch)
                self.parse_number(cur)
            elif _is_alphanumeric(ch):
                self.backup(ch)
                self.parse_identifier(cur)
            else:
                raise JSONPathError(f"unrecognized character in action: {_go_rune(ch)}")

    def parse_identifier(self, cur: ListNode) -> None:
        while True:
            ch = self.next()
            if _is_terminator(ch):
                self.backup(ch)
                break
        value = self.consume()
        cur.nodes.append(Bool(value == "true") if value in ("true", "false") else Identifier(value))

    def parse_recursive(self, cur: ListNode) -> None:
        if cur.nodes and isinstance(cur.nodes[-1], Recursive):
            raise JSONPathError("invalid multiple recursive descent")
        self.pos += 2
        self.consume()
        cur.nodes.append(Recursive())
        if self.peek() and _is_alphanumeric(self.peek()):
            self.parse_field(cur)

    def parse_number(self, cur: ListNode) -> None:
        if self.peek() in ("+", "-") and self.peek():
            self.next()
        while True:
            ch = self.next()
            if ch != "." and not (ch and unicodedata.category(ch) == "Nd"):
                self.backup(ch)
                break
        value = self.consume()
        if re.fullmatch(r"[+-]?[0-9]+", value):
            cur.nodes.append(Number(int(value)))
            return
        try:
            cur.nodes.append(Number(float(value)))
        except ValueError:
            raise JSONPathError(f"cannot parse number {value}") from None

    def parse_array(self, cur: ListNode) -> None:
        while True:
            ch = self.next()
            if ch in ("", "\n"):
                raise JSONPathError("unterminated array")
            if ch == "]":
                break
        text = self.consume()[1:-1]
        if text == "*":
            text = ":"
        parts = text.split(",")
        if len(parts) > 1:
            lists = tuple(_action(f"[{part.strip(' ')}]") for part in parts)
            cur.nodes.append(Union(lists))
            return
        key = _DICT_KEY.match(text)
        if key is not None:
            cur.nodes.extend(_action(f".{key.group(1)}").nodes)
            return
        found = _SLICE.match(text)
        if found is None:
            raise JSONPathError(f"invalid array index {text}")
        params: list[Param] = []
        for index, raw in enumerate(found.groups()):
            raw = raw or ""
            if raw:
                digits = raw[1:] if index > 0 else raw
                if index > 0 and digits == "":
                    params.append(Param(False, 0))
                else:
                    try:
                        params.append(Param(True, int(digits)))
                    except ValueError:
                        raise JSONPathError(f"array index {digits} is not a number") from None
            elif index == 1:
                params.append(Param(True, params[0].value + 1, derived=True))
            else:
                params.append(Param(False, 0))
        cur.nodes.append(Array((params[0], params[1], params[2])))

    def parse_filter(self, cur: ListNode) -> None:
        self.pos += 3
        self.consume()
        begin = end = False
        pair = ""
        while True:
            ch = self.next()
            if ch in ("", "\n"):
                raise JSONPathError("unterminated filter")
            if ch in "\"'":
                if not begin:
                    begin, pair = True, ch
                    continue
                if self.input[self.pos - 2] != "\\" and ch == pair:
                    end = True
            elif ch == ")" and begin == end:
                break
        if self.next() != "]":
            raise JSONPathError("unclosed array expect ]")
        text = self.consume()[:-2]
        found = _FILTER.match(text)
        if found is None:
            cur.nodes.append(Filter(_action(text), ListNode(), "exists"))
        else:
            left, right = _action(found.group(1)), _action(found.group(3))
            cur.nodes.append(Filter(left, right, found.group(2)))

    def parse_quote(self, cur: ListNode, end: str) -> None:
        while True:
            ch = self.next()
            if ch in ("", "\n"):
                raise JSONPathError("unterminated quoted string")
            if ch == end and self.input[self.pos - 2] != "\\":
                break
        value = self.consume()
        try:
            cur.nodes.append(Text(_unquote(value)))
        except JSONPathError as error:
            raise JSONPathError(f"unquote string {value} error {error}") from None

    def parse_field(self, cur: ListNode) -> None:
        self.consume()
        while True:  # advance: to the next terminator that is not escaped
            ch = self.next()
            if ch == "\\":
                self.next()
            elif _is_terminator(ch):
                self.backup(ch)
                break
        value = self.consume()
        cur.nodes.append(Wildcard() if value == "*" else Field(value.replace("\\", "")))


def _action(text: str) -> ListNode:
    """parseAction: ``text`` parsed as the inside of one ``{...}``."""
    parser = _Parser("{" + text + "}")
    parser.parse_text()
    first: ListNode = parser.root.nodes[0]
    return first


def parse(template: str) -> ListNode:
    """A whole template (text and ``{...}`` actions), as client-go's Parse; raises JSONPathError."""
    parser = _Parser(template)
    parser.parse_text()
    return parser.root


@lru_cache(maxsize=1024)
def compile_path(expression: str) -> ListNode:
    """A printer column's path, parsed as kube-apiserver parses it (``{`` + path + ``}``)."""
    root = parse("{" + expression + "}")
    first: ListNode = root.nodes[0]
    return first


# -- evaluation (client-go jsonpath.go, AllowMissingKeys) ---------------------------------------------


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return list(value)
    if isinstance(value, str):
        return list(value.encode())  # reflect indexes a string's bytes
    return []


def _walk(values: list[Any], node: Any) -> list[Any]:
    if isinstance(node, ListNode):
        for child in node.nodes:
            values = _walk(values, child)
        return values
    if isinstance(node, Text):
        return [node.text]
    if isinstance(node, Field):
        return [v[node.name] for v in values if isinstance(v, dict) and node.name in v]
    if isinstance(node, Number | Bool):
        return [node.value for _ in values]
    if isinstance(node, Array):
        return [item for value in values if value is not None for item in _slice(value, node)]
    if isinstance(node, Filter):
        return [item for value in values for item in _filter(value, node)]
    if isinstance(node, Wildcard):
        return [child for value in values for child in _children(value)]
    if isinstance(node, Recursive):
        return list(_recursive(values))
    if isinstance(node, Union):
        return [item for branch in node.lists for item in _walk(values, branch)]
    if isinstance(node, Identifier):
        if node.name == "range":
            return values
        if node.name == "end":
            return []
        raise JSONPathError(f"unrecognized identifier {node.name}")
    raise JSONPathError(f"unexpected Node {node}")


def _slice(value: Any, node: Array) -> list[Any]:
    if not isinstance(value, list):
        raise JSONPathError(f"{_go_type(value)} is not array or slice")
    length = len(value)
    first, last, stride = node.params
    start = first.value if first.known else 0
    start += length if start < 0 else 0
    end = last.value if last.known else length
    if end < 0 or (end == 0 and last.derived):  # [-1]: the end derived from the start wraps too
        end += length
    if end != start:
        if start >= length:
            raise JSONPathError(f"array index out of bounds: index {start}, length {length}")
        if end > length:
            raise JSONPathError(f"array index out of bounds: index {end - 1}, length {length}")
    step = 1
    if stride.known:
        if stride.value <= 0:
            raise JSONPathError("step must be > 0")
        step = stride.value
    if start < 0 or end < start:
        raise JSONPathError(f"slice bounds out of range [{start}:{end}]")
    return value[start:end:step]


def _recursive(values: list[Any]) -> Iterator[Any]:
    for value in values:
        children = _children(value)
        if children:
            yield value
            yield from _recursive(children)


def _filter(value: Any, node: Filter) -> list[Any]:
    if not isinstance(value, list):
        raise JSONPathError(f"{value} is not array or slice and cannot be filtered")
    passed = []
    for item in value:
        lefts = _walk([item], node.left)
        if node.operator == "exists":
            if lefts:
                passed.append(item)
            continue
        rights = _walk([item], node.right)
        if len(lefts) != 1 or len(rights) != 1:
            raise JSONPathError("can only compare one element at a time")
        if _compare(lefts[0], rights[0], node.operator):
            passed.append(item)
    return passed


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "other"


def _compare(left: Any, right: Any, operator: str) -> bool:
    """text/template's eq, ne, lt, le, gt, ge on two values."""
    kinds = {_kind(left), _kind(right)}
    if operator not in ("==", "!=", "<", "<=", ">", ">="):
        raise JSONPathError(f"unrecognized filter operator {operator}")
    if len(kinds) > 1:
        raise JSONPathError("incompatible types for comparison")
    if operator in ("==", "!="):
        if "other" in kinds:
            raise JSONPathError("invalid type for comparison")
        return bool(left == right) == (operator == "==")
    if kinds & {"bool", "other"}:
        raise JSONPathError("invalid type for comparison")
    less, equal = bool(left < right), bool(left == right)
    return {"<": less, "<=": less or equal, ">": not (less or equal), ">=": not less}[operator]


def _go_type(value: Any) -> str:
    names = {dict: "map[string]interface {}", str: "string", bool: "bool", int: "int64"}
    return names.get(type(value), "float64")


def find(obj: Any, expression: str) -> list[Any]:
    """Every value a printer column's path selects in ``obj`` (the first result list of kube's
    FindResults, missing keys allowed); raises JSONPathError as kube's evaluation fails."""
    return _walk([obj], compile_path(expression))
