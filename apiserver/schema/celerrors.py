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


def error_text(error: Exception) -> str:
    """The error's message on one line, unwrapped from cel-rust's report of a library function."""
    text = " ".join(str(error).split())
    found = _WRAPPED.search(text)
    return found.group("message") if found else text
