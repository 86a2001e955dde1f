"""The text of an evaluation error as cel-go words it, from what the evaluator (cel-rust) raises: a library
function's own error (``index out of range: -1``) comes back wrapped in cel-rust's sentence about the
Python call, which kube's messages do not have."""

from __future__ import annotations

import re
from typing import Final

_WRAPPED: Final = re.compile(
    r"Python function call failed: \w+: (?P<message>.*?)\.? Check function arguments and their types\.$",
    re.DOTALL,
)


_CONVERSION: Final = re.compile(r"^Function '(?P<function>duration|timestamp)' error: ")
_CONVERTED_TO: Final = {
    "duration": "google.protobuf.Duration",
    "timestamp": "google.protobuf.Timestamp",
}
"""cel-go's String.ConvertToType: a string that does not parse as the type is one error for every cause."""


def error_text(error: Exception) -> str:
    """The error's message on one line, unwrapped from cel-rust's report of a library function."""
    text = " ".join(str(error).split())
    conversion = _CONVERSION.match(text)
    if conversion:
        return f"type conversion error from 'string' to '{_CONVERTED_TO[conversion['function']]}'"
    found = _WRAPPED.search(text)
    return found.group("message") if found else text
