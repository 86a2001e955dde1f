"""How the runtime holds a Kubernetes object: the decoded JSON, a plain dict, in whichever version the
caller says (the hub inside the registry, a served version at the edges)."""

from __future__ import annotations

from typing import Any

Object = dict[str, Any]
