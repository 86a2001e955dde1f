"""YAML read as Kubernetes reads it (sigs.k8s.io/yaml over go-yaml v2), so that a YAML body means what it
means to kube-apiserver: timestamps stay strings (``2024-01-01`` is not a date), and the scalar mapping keys
YAML allows but JSON does not (``1:``, ``on:``) become strings. Shared with the generator's definition reader.
"""

from __future__ import annotations

from typing import Any

import yaml

_TIMESTAMP = "tag:yaml.org,2002:timestamp"


def without_timestamps(base: type[yaml.SafeLoader]) -> type[yaml.SafeLoader]:
    """``base`` minus timestamp resolution: Kubernetes YAML reads ``2024-01-01`` as a string, not a date."""
    resolvers = {
        first: [(tag, regexp) for tag, regexp in entries if tag != _TIMESTAMP]
        for first, entries in base.yaml_implicit_resolvers.items()
    }
    return type(f"{base.__name__}NoTimestamps", (base,), {"yaml_implicit_resolvers": resolvers})


def _json_key(key: Any, node: yaml.Node) -> str:
    """A mapping key as JSON must have it: booleans and integers as sigs.k8s.io/yaml writes them."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    raise yaml.constructor.ConstructorError(
        None, None, f"unsupported map key of type {type(key).__name__}: {key!r}", node.start_mark
    )


class _BodyLoader(without_timestamps(getattr(yaml, "CSafeLoader", yaml.SafeLoader))):  # type: ignore[misc]
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[str, Any]:
        # built here rather than from the base class's dict, where the keys 1 and true would collide
        self.flatten_mapping(node)  # merge keys (<<)
        return {
            _json_key(self.construct_object(key, deep=deep), key): self.construct_object(
                value, deep=deep
            )
            for key, value in node.value
        }


def load_body(body: bytes) -> Any:
    """One YAML document of a request body; raises yaml.YAMLError when it is not valid YAML."""
    return yaml.load(body, Loader=_BodyLoader)  # a SafeLoader: builds plain values only
