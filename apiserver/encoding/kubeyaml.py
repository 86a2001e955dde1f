"""YAML read as Kubernetes reads it (sigs.k8s.io/yaml over go-yaml v2), so that a YAML body means what it
means to kube-apiserver: timestamps stay strings (``2024-01-01`` is not a date), so does YAML 1.1's ``=``
(the "value" key type, which go-yaml does not resolve: an enum value ``- =`` is the string "="), and the scalar mapping keys
YAML allows but JSON does not (``1:``, ``on:``) become strings. Shared with the generator's definition reader.

A body is read in two steps so that aliases cannot amplify it: the node graph is composed (libyaml, which
refuses more than 1,000 levels itself), then measured without expanding any alias, and only then turned into
values. The measure applies go-yaml's own bounds, with its messages:

- ``yaml: document contains excessive aliasing``: go-yaml's ``allowedAliasRatio`` (decode.go, the fix of
  CVE-2019-11253, "billion laughs"): past 1,000 decoded nodes and 100 of them from aliases, aliases may
  produce at most 99% of the nodes decoded (up to 400,000), falling to 10% at 4,000,000;
- ``yaml: anchor 'x' value contains itself`` for an alias inside its own anchor;
- ``yaml: exceeded max depth of N`` past :data:`~apiserver.encoding.limits.MAX_DEPTH` levels once aliases
  are expanded (go-yaml's ``max_flow_level``, 10,000, lowered as ``limits`` explains).

go-yaml counts nodes, not bytes, so 3,000 aliases of one 100 KB string pass its ratio; kube then builds the
300 MB document. Here the bytes that aliases add are counted too: past
:data:`~apiserver.encoding.limits.MAX_DECODED_BYTES` the body is refused with kube's 413 wording
(:class:`~apiserver.encoding.limits.DecodedTooLarge`) before anything is built.

Values are JSON's: ``!!binary`` is the decoded text (go-yaml decodes it into a string), an explicit
``!!timestamp`` its text, ``!!set`` a map to nulls, integers beyond 64 bits floats (go-yaml's resolver), and
``.inf``/``.nan`` an error (``json.Marshal`` refuses them in sigs.k8s.io/yaml's YAMLToJSON). An alias gives a
copy of its anchor's value, not the same Python object, as go-yaml does: changing one place of the decoded body
(defaulting, pruning) must not change another.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from typing import Any, Final

import orjson
import yaml

from apiserver.encoding.limits import (
    MAX_DECODED_BYTES,
    MAX_DEPTH,
    DecodedTooLarge,
    depth_exceeds,
    load_json,
)

__all__ = ["BodyError", "go_yaml_resolvers", "load_body"]

# implicit tags PyYAML resolves that go-yaml (resolve.go) does not: a plain scalar stays a string
_TIMESTAMP: Final = "tag:yaml.org,2002:timestamp"
_UNRESOLVED: Final = (_TIMESTAMP, "tag:yaml.org,2002:value")
_INT64_MIN: Final = -(2**63)
_UINT64_END: Final = 2**64

# go-yaml v2 decode.go: the alias ratio's range.
_RATIO_LOW: Final = 400_000
_RATIO_HIGH: Final = 4_000_000

_ANCHOR: Final = re.compile(r"(?:![^\s]*\s+)?&([^\s,\[\]{}]+)")


class BodyError(yaml.YAMLError):
    """A YAML body kube's decoder refuses, with go-yaml's (or encoding/json's) message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def go_yaml_resolvers(base: type[yaml.SafeLoader]) -> type[yaml.SafeLoader]:
    """``base`` resolving plain scalars as go-yaml does: ``2024-01-01`` and ``=`` are strings, not a date
    and YAML 1.1's value key (which PyYAML cannot even construct), so the generator and the server read a
    file as kubectl does."""
    resolvers = {
        first: [(tag, regexp) for tag, regexp in entries if tag not in _UNRESOLVED]
        for first, entries in base.yaml_implicit_resolvers.items()
    }
    return type(f"{base.__name__}GoYaml", (base,), {"yaml_implicit_resolvers": resolvers})


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


class _BodyLoader(go_yaml_resolvers(getattr(yaml, "CSafeLoader", yaml.SafeLoader))):  # type: ignore[misc]
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[str, Any]:
        # built here rather than from the base class's dict, where the keys 1 and true would collide
        self.flatten_mapping(node)  # merge keys (<<)
        return {
            _json_key(self.construct_object(key, deep=deep), key): self.construct_object(
                value, deep=deep
            )
            for key, value in node.value
        }

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int | float:
        """go-yaml resolves an integer that fits neither int64 nor uint64 as a float."""
        value: int = super().construct_yaml_int(node)
        return value if _INT64_MIN <= value < _UINT64_END else float(value)

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        """``.inf`` and ``.nan`` are YAML but not JSON: ``json: unsupported value`` (encoding/json)."""
        value: float = super().construct_yaml_float(node)
        if math.isfinite(value):
            return value
        text = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
        raise BodyError(f"json: unsupported value: {text}")

    def construct_yaml_binary(self, node: yaml.ScalarNode) -> str:
        """go-yaml decodes ``!!binary`` into the string of its bytes."""
        try:
            data = base64.b64decode(self.construct_scalar(node).encode("ascii"), validate=False)
        except (binascii.Error, UnicodeEncodeError):
            raise BodyError("yaml: !!binary value contains invalid base64 data") from None
        return data.decode("utf-8", "replace")

    def construct_explicit_timestamp(self, node: yaml.ScalarNode) -> str:
        """An explicitly tagged timestamp stays text, as an implicit one does."""
        return str(self.construct_scalar(node))


_BodyLoader.add_constructor("tag:yaml.org,2002:int", _BodyLoader.construct_yaml_int)
_BodyLoader.add_constructor("tag:yaml.org,2002:float", _BodyLoader.construct_yaml_float)
_BodyLoader.add_constructor("tag:yaml.org,2002:binary", _BodyLoader.construct_yaml_binary)
_BodyLoader.add_constructor(_TIMESTAMP, _BodyLoader.construct_explicit_timestamp)
_BodyLoader.add_constructor("tag:yaml.org,2002:set", _BodyLoader.construct_yaml_map)
_BodyLoader.add_constructor("tag:yaml.org,2002:omap", _BodyLoader.construct_yaml_seq)
_BodyLoader.add_constructor("tag:yaml.org,2002:pairs", _BodyLoader.construct_yaml_seq)


def load_body(body: bytes) -> Any:
    """One YAML document of a request body. Raises yaml.YAMLError (:class:`BodyError` for the bounds above)
    when it is not YAML kube would decode, :class:`~apiserver.encoding.limits.DecodedTooLarge` when its
    aliases expand past the size bound.

    A body that is JSON (kubectl's server-side apply sends JSON as ``application/apply-patch+yaml``) is read
    as JSON: the same value as the YAML reading (duplicate keys: the last wins in both; integers past 64
    bits: floats in both), at a hundredth of the time, and in C that holds the GIL for milliseconds where
    libyaml's composer holds it for the whole document. Anything orjson refuses is read as YAML, which
    decides."""
    if body.lstrip()[:1] == b"{":
        try:
            return load_json(body)
        except orjson.JSONDecodeError:
            pass
    loader = _BodyLoader(body)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        # without an anchor (``&``) there is no alias: nothing to measure but the depth, which is quicker
        # checked on the value (libyaml itself stops at 1,000 levels, and building goes level by level)
        aliased = b"&" in body and _Measure(body).run(node)
        value = loader.construct_document(node)
    finally:
        loader.dispose()
    if aliased:  # aliases share one Python object between places: give each place its own (C-speed)
        return orjson.loads(orjson.dumps(value))
    if depth_exceeds(value, MAX_DEPTH) is not None:
        raise BodyError(f"yaml: exceeded max depth of {MAX_DEPTH}")
    return value


def _allowed_alias_ratio(decoded: int) -> float:
    """go-yaml's ``allowedAliasRatio``."""
    if decoded <= _RATIO_LOW:
        return 0.99
    if decoded >= _RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _RATIO_LOW) / (_RATIO_HIGH - _RATIO_LOW)


class _Measure:
    """One pass over the composed node graph in document order, each node once: what go-yaml's decoder would
    count (``decodeCount``, ``aliasCount``), how deep the decoded value nests, and how many bytes (as JSON)
    aliases add. An alias is a node met again (PyYAML composes an alias into its anchor's node); its
    expansion is summed from the anchor's memo rather than walked, so the pass is linear in the body.

    go-yaml checks the ratio at every node; inside one expansion each node adds one to both counts, so the
    ratio only grows while the allowed ratio only falls: checking once after each expansion is the same."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.decoded = 1  # go-yaml counts the document node too
        self.aliases = 0
        self.added = 0
        self.limit = MAX_DECODED_BYTES - len(body)
        # per node: (nodes decoded, depth, JSON bytes) of its expanded value
        self.memo: dict[int, tuple[int, int, int]] = {}

    def run(self, root: yaml.Node) -> bool:
        """Raise on a bound exceeded (the depth too); return whether the document uses aliases."""
        aliased = False
        self._count(0)
        # frames: node, its children, next child, and the sums of its children so far
        stack: list[list[Any]] = [[root, _children(root), 0, 0, 0, 0]]
        open_nodes = {id(root)}
        while stack:
            frame = stack[-1]
            node, kids, at = frame[0], frame[1], frame[2]
            if at < len(kids):
                frame[2] = at + 1
                child = kids[at]
                if id(child) in open_nodes:
                    raise BodyError(f"yaml: anchor '{self._anchor(child)}' value contains itself")
                measured = self.memo.get(id(child))
                if measured is None:
                    self._count(0)
                    stack.append([child, _children(child), 0, 0, 0, 0])
                    open_nodes.add(id(child))
                    continue
                aliased = True
                self._alias(measured)
                _add(frame, (measured[0] + 1, measured[1], measured[2]))
                continue
            stack.pop()
            open_nodes.discard(id(node))
            measured = _own(node, frame)
            self.memo[id(node)] = measured
            if stack:
                _add(stack[-1], measured)
        if self.memo[id(root)][1] > MAX_DEPTH:
            raise BodyError(f"yaml: exceeded max depth of {MAX_DEPTH}")
        return aliased

    def _count(self, expanded: int) -> None:
        """One node decoded in place, or an alias and ``expanded`` nodes of its anchor's value."""
        self.decoded += 1 + expanded
        self.aliases += expanded
        if (
            self.aliases > 100
            and self.decoded > 1000
            and self.aliases / self.decoded > _allowed_alias_ratio(self.decoded)
        ):
            raise BodyError("yaml: document contains excessive aliasing")

    def _alias(self, measured: tuple[int, int, int]) -> None:
        self._count(measured[0])
        self.added += measured[2]
        if self.added > self.limit:
            raise DecodedTooLarge()

    def _anchor(self, node: yaml.Node) -> str:
        """The anchor's name, read back from the text at the node's start (nodes do not keep it)."""
        text = self.body.decode("utf-8", "replace")
        found = _ANCHOR.match(text, node.start_mark.index)
        return found.group(1) if found else ""


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _add(frame: list[Any], measured: tuple[int, int, int]) -> None:
    frame[3] += measured[0]
    frame[4] = max(frame[4], measured[1])
    frame[5] += measured[2] + 1  # a separator (``,`` or ``:``) per child


def _own(node: yaml.Node, frame: list[Any]) -> tuple[int, int, int]:
    """A node's measure from its children's: one more node, one more level for a collection, and its text
    (quoted) or brackets."""
    if isinstance(node, yaml.ScalarNode):
        return 1, 0, len(node.value) + 2
    return frame[3] + 1, frame[4] + 1, frame[5] + 2
