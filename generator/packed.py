"""Python values kept in the build cache's JSON manifest as pickles in base64 (a definition file's checked
Definitions, frozen dataclasses that JSON cannot hold).

The manifest lies beside generated Python that the server imports, so unpickling it trusts nothing new; a value
that does not read back (another Python, a truncated file) is no cache. A pickle's bytes depend on which objects
are shared, so callers pack each value alone and keep what they read as they read it, so that a run's manifest
does not depend on what the run loaded afresh. (The OpenAPI entries' texts stay JSON: for 18 MB of strings the
standard library's JSON wrote and read them faster than pickle and base64 did.)
"""

from __future__ import annotations

import base64
import pickle
from typing import Any

__all__ = ["pack", "unpack"]


def pack(value: Any) -> str:
    """``value`` as one ASCII string."""
    return base64.b64encode(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)).decode()


def unpack(text: Any) -> Any:
    """What ``pack`` packed; None when ``text`` is not such a string."""
    if not isinstance(text, str):
        return None
    try:
        return pickle.loads(base64.b64decode(text))
    except Exception:  # whatever does not read back is no cache
        return None
