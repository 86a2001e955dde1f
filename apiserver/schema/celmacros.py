"""cel-go's two-variable comprehensions (``ext.TwoVarComprehensions()``, Kubernetes 1.32+;
github.com/google/cel-go ext/comprehensions.go) and the ``existsOne`` spelling of ``exists_one``, for an
evaluator (cel-rust) that has only the one-variable macros.

A call such as ``self.ports.all(i, p, p.number > i)`` is rewritten, before it is compiled, into the
one-variable macro over the container's entries, each a ``[key-or-index, value]`` pair::

    self.ports.__entries__().all(__e1__, __e1__[1].number > __e1__[0])

``transformList`` becomes ``filter``/``map``; ``transformMap`` and ``transformMapEntry`` build a map from
the mapped pairs (``__pairs_to_map__``, ``__merge_maps__``). Names are replaced only where they are
variables (not after a ``.``, not called), so a field named like a variable is left alone. The source
text of a rule (its messages) is never the rewritten one."""

from __future__ import annotations

from collections.abc import Callable
from itertools import count
from typing import Any, Final

from apiserver.schema.celoptional import rewrite_tokens
from apiserver.schema.celparse import tokens

MACROS: Final = frozenset(
    {"all", "exists", "existsOne", "transformList", "transformMap", "transformMapEntry"}
)
ENTRIES: Final = "__entries__"
TO_MAP: Final = "__pairs_to_map__"
MERGE: Final = "__merge_maps__"
Token = tuple[str, str]


def _entries(container: Any) -> list[list[Any]]:
    if isinstance(container, dict):
        return [[key, value] for key, value in container.items()]
    if isinstance(container, list):
        return [[index, value] for index, value in enumerate(container)]
    raise TypeError("no such overload")


def _insert(into: dict[Any, Any], key: Any, value: Any) -> None:
    if key in into:
        raise ValueError(f"insert failed: key {_key_text(key)} already exists")
    into[key] = value


def _key_text(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _pairs_to_map(pairs: list[list[Any]]) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for key, value in pairs:
        _insert(out, key, value)
    return out


def _merge_maps(entries: list[Any]) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            raise TypeError("no such overload")
        for key, value in entry.items():
            _insert(out, key, value)
    return out


FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    ENTRIES: _entries,
    TO_MAP: _pairs_to_map,
    MERGE: _merge_maps,
}
"""The helpers the rewritten expressions call."""


def _split_arguments(toks: list[Token], start: int) -> tuple[list[list[Token]], int] | None:
    """The arguments of the call whose ``(`` is at ``start``, and the index after its ``)``."""
    depth, args, current = 0, [], []  # type: ignore[var-annotated]
    for index in range(start + 1, len(toks)):
        kind, text = toks[index]
        if kind == "op" and text in "([{" and text:
            depth += 1
        elif kind == "op" and text in ")]}" and text:
            if depth == 0:
                args.append(current)
                return args, index + 1
            depth -= 1
        elif kind == "op" and text == "," and depth == 0:
            args.append(current)
            current = []
            continue
        current.append((kind, text))
    return None


def _substitute(body: list[Token], names: dict[str, str]) -> list[Token]:
    out: list[Token] = []
    for index, (kind, text) in enumerate(body):
        after = body[index + 1][1] if index + 1 < len(body) else ""
        before = body[index - 1][1] if index else ""
        if kind == "ident" and text in names and before != "." and after != "(":
            out.append(("ident", names[text]))
        else:
            out.append((kind, text))
    return out


def _variable(arg: list[Token]) -> str | None:
    return arg[0][1] if len(arg) == 1 and arg[0][0] == "ident" else None


def _expand(name: str, args: list[list[Token]], ids: count[int]) -> list[Token] | None:
    """The one-variable form of ``.name(args)`` (starting with its ``.``), or None to leave it."""
    if name == "existsOne" and len(args) == 2:
        return [("op", "."), ("ident", "exists_one"), ("op", "("), *args[0], ("op", ","), *args[1],
                ("op", ")")]  # fmt: skip
    first, second = (_variable(args[0]), _variable(args[1])) if len(args) >= 3 else (None, None)
    if first is None or second is None or len(args) > (4 if name.startswith("transform") else 3):
        return None
    var = f"__e{next(ids)}__"
    names = {first: f"{var}[0]", second: f"{var}[1]"}
    body = [_substitute(_expand_all(arg, ids), names) for arg in args[2:]]
    entries: list[Token] = [("op", "."), ("ident", ENTRIES), ("op", "("), ("op", ")")]
    if name in ("all", "exists", "existsOne"):
        macro = {"existsOne": "exists_one"}.get(name, name)
        return [*entries, *_call(macro, var, body[0])]
    if len(body) == 2:  # a filter first
        entries += _call("filter", var, body[0])
    value = body[-1]
    if name == "transformMap":
        value = [("op", "["), ("ident", f"{var}[0]"), ("op", ","), *value, ("op", "]")]
    mapped = [*entries, *_call("map", var, value)]
    if name == "transformList":
        return mapped
    helper = TO_MAP if name == "transformMap" else MERGE
    return [*mapped, ("op", "."), ("ident", helper), ("op", "("), ("op", ")")]


def _call(macro: str, var: str, body: list[Token]) -> list[Token]:
    return [("op", "."), ("ident", macro), ("op", "("), ("ident", var), ("op", ","), *body,
            ("op", ")")]  # fmt: skip


def _expand_all(toks: list[Token], ids: count[int]) -> list[Token]:
    out: list[Token] = []
    index = 0
    while index < len(toks):
        kind, text = toks[index]
        name = toks[index + 1][1] if index + 1 < len(toks) else ""
        opens = index + 2 < len(toks) and toks[index + 2] == ("op", "(")
        if kind == "op" and text == "." and name in MACROS and opens:
            split = _split_arguments(toks, index + 2)
            if split is not None:
                expanded = _expand(name, split[0], ids)
                if expanded is not None:
                    out += expanded
                    index = split[1]
                    continue
        out.append((kind, text))
        index += 1
    return out


def rewrite(source: str) -> str:
    """``source`` with its two-variable comprehensions in one-variable form and its optional selections
    as calls (:mod:`apiserver.schema.celoptional`); unchanged when it has neither, or cannot be read."""
    try:
        toks = [t for t in tokens(source) if t[0] != "end"]
        expanded = toks
        if any(kind == "ident" and text in MACROS for kind, text in toks):
            expanded = _expand_all(expanded, count(1))
        if any(t in (("op", ".?"), ("op", "?")) for t in toks):
            expanded = rewrite_tokens(expanded)
    except ValueError:  # the parser's error, about the source itself, is the one to report
        return source
    if expanded == toks:
        return source
    return " ".join(text for _, text in expanded)
