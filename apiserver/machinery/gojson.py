"""How Go names values in kube's messages: encoding/json's JSON kinds in its errors (a JSON patch, the audit
policy file, a built-in kind's body) and strconv.Quote's quoting (``%q``)."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["go_json_kind", "go_quote"]


def go_json_kind(value: Any) -> str:
    """The JSON kind encoding/json names in "cannot unmarshal <kind> into Go value of type ..."."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


# Go strconv.Quote escapes for the ASCII control characters that have a short form.
_SHORT_ESCAPES: Final = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}


def go_quote(text: str) -> str:
    """Go's ``strconv.Quote`` (``%q``): printable runes stay, others become ``\\x``/``\\u`` escapes."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif code in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[code])
        elif ch.isprintable():
            out.append(ch)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)
