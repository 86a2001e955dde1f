"""Kubernetes manifests as YAML text: block style, keys in the order built, and no anchors or aliases (a
schema shared by two versions is written out twice), so each document reads on its own."""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["manifests_yaml"]


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def manifests_yaml(*documents: dict[str, Any]) -> str:
    """One or more documents, separated by ``---``."""
    return yaml.dump_all(documents, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
