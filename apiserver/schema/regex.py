"""Go (RE2) regular expressions, as written in CRD ``pattern`` keywords, compiled with Python's ``re``.

kube-openapi matches ``pattern`` with Go's ``regexp.MatchString`` (an unanchored search). The syntaxes
mostly agree; this module rewrites the constructs whose meaning differs or that Python rejects:

- ``$`` ends the text in Go (unless ``(?m)``), but also matches before a final newline in Python: ``\\Z``;
- ``\\z`` is Go's end of text: ``\\Z``;
- ``\\d``, ``\\w``, ``\\s`` are ASCII-only in Go; Python's match Unicode digits and letters;
- a flag group such as ``(?i)`` may appear anywhere in Go (gateway-api uses ``^(?i)(abort|warn)?$``)
  and applies to the end of the enclosing group; Python wants it first, so it becomes ``(?i:...)``;
- ``(?<name>...)`` is ``(?P<name>...)``; ``[[:alpha:]]`` classes and ``\\pL``/``\\p{L}`` are expanded
  (the Unicode classes approximately, since ``re`` has no Unicode properties).

Compiled patterns are cached: patterns are compiled once per schema, never per request.
"""

from __future__ import annotations

import functools
import re
from typing import Final

__all__ = ["compile_go_regexp"]

_POSIX_CLASSES: Final = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
# Perl classes as RE2 defines them (ASCII), usable inside and outside brackets.
_PERL_IN_CLASS: Final = {"d": "0-9", "w": "0-9A-Za-z_", "s": "\\t\\n\\f\\r "}
_PERL: Final = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": "[0-9A-Za-z_]",
    "W": "[^0-9A-Za-z_]",
    "s": "[\\t\\n\\f\\r ]",
    "S": "[^\\t\\n\\f\\r ]",
}
# Unicode general categories, approximated with what ``re`` can express.
_UNICODE_CLASSES: Final = {"L": "[^\\W\\d_]", "N": "\\d", "Nd": "\\d", "Lu": "[A-Z]", "Ll": "[a-z]"}


def _unicode_class(pattern: str, i: int) -> tuple[str, int]:
    """Translate ``\\pX``, ``\\p{Name}``, ``\\PX``, ``\\P{Name}`` starting at the backslash ``i``."""
    negate = pattern[i + 1] == "P"
    if i + 2 < len(pattern) and pattern[i + 2] == "{":
        end = pattern.index("}", i + 3)
        name, nxt = pattern[i + 3 : end], end + 1
    else:
        name, nxt = pattern[i + 2 : i + 3], i + 3
    cls = _UNICODE_CLASSES.get(name)
    if cls is None:
        raise re.error(f"invalid character class range: \\p{{{name}}}")
    if negate:
        cls = f"(?:(?!{cls}).)"
    return cls, nxt


def _translate_class(pattern: str, i: int) -> tuple[str, int]:
    """Translate a bracket expression starting at ``[`` (index ``i``); return it and the next index."""
    out = ["["]
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        out.append("^")
        j += 1
    if j < len(pattern) and pattern[j] == "]":  # a leading ']' is literal
        out.append("\\]")
        j += 1
    while j < len(pattern):
        ch = pattern[j]
        if ch == "]":
            out.append("]")
            return "".join(out), j + 1
        if ch == "[" and pattern.startswith("[:", j):
            end = pattern.find(":]", j + 2)
            if end != -1:
                name = pattern[j + 2 : end]
                negated = name.startswith("^")
                chars = _POSIX_CLASSES.get(name.lstrip("^"))
                if chars is None or negated:
                    raise re.error(f"invalid character class range: [:{name}:]")
                out.append(chars)
                j = end + 2
                continue
        if ch == "\\" and j + 1 < len(pattern):
            nxt = pattern[j + 1]
            if nxt in _PERL_IN_CLASS:
                out.append(_PERL_IN_CLASS[nxt])
            else:
                out.append(pattern[j : j + 2])
            j += 2
            continue
        if ch == "[":
            out.append("\\[")
        else:
            out.append(ch)
        j += 1
    raise re.error("missing closing ]")


def _translate(pattern: str) -> str:
    multiline = re.search(r"\(\?[a-zA-Z]*m", pattern) is not None
    out: list[str] = []
    # For each open group: how many extra ')' a scoped flag group opened inside it needs at its end.
    pending: list[int] = [0]
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt == "z":
                out.append("\\Z")
            elif nxt in _PERL:
                out.append(_PERL[nxt])
            elif nxt in "pP":
                cls, i = _unicode_class(pattern, i)
                out.append(cls)
                continue
            elif nxt == "Q":
                end = pattern.find("\\E", i + 2)
                literal = pattern[i + 2 :] if end == -1 else pattern[i + 2 : end]
                out.append(re.escape(literal))
                i = n if end == -1 else end + 2
                continue
            else:
                out.append(pattern[i : i + 2])
            i += 2
        elif ch == "[":
            cls, i = _translate_class(pattern, i)
            out.append(cls)
        elif ch == "(":
            flags = re.match(r"\(\?([a-zA-Z]+)\)", pattern[i:])
            if flags is not None:
                # A bare flag group: scope it to the rest of the enclosing group.
                out.append(f"(?{flags.group(1)}:")
                pending[-1] += 1
                i += flags.end()
                continue
            if pattern.startswith("(?<", i) and not pattern.startswith(("(?<=", "(?<!"), i):
                out.append("(?P<")
                i += 3
            else:
                out.append("(")
                i += 1
            pending.append(0)
        elif ch == ")":
            out.append(")" * pending.pop() if len(pending) > 1 else "")
            out.append(")")
            i += 1
        elif ch == "$" and not multiline:
            out.append("\\Z")
            i += 1
        else:
            out.append(ch)
            i += 1
    out.append(")" * pending[0])
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def compile_go_regexp(pattern: str) -> re.Pattern[str] | str:
    """The compiled pattern, or the reason it can't be compiled (Go's error text where it has one)."""
    try:
        return re.compile(_translate(pattern))
    except (re.error, ValueError, IndexError) as exc:
        return f"error parsing regexp: {exc}: `{pattern}`"
