"""A minimal kind written to a definitions directory, for the generator tests that need files on disk."""

from __future__ import annotations

from pathlib import Path

WIDGET = """\
group: example.com
kind: Widget
versions:
  v1:
    storage: true
    schema:
      spec:
        size: integer
"""


def write_kind(definitions: Path, kind: str, text: str = WIDGET) -> Path:
    """``text`` with ``Widget`` renamed ``kind``, at ``definitions/example.com/<kind>.yaml``."""
    target = definitions / "example.com" / f"{kind.lower()}.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text.replace("Widget", kind))
    return target
