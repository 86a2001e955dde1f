"""Which priority level serves a request, and as which flow: FlowSchemas matched in order of precedence, as
kube's API Priority and Fairness matches them (k8s.io/apiserver pkg/util/flowcontrol/rule.go). The schemas and
levels are kube's bootstrap configuration (flowcontrol.yaml beside this module, in the
flowcontrol.apiserver.k8s.io/v1 shape), fixed here: the flowcontrol objects that would let an administrator change
them are not served.

A level's seats are its share of the server's concurrency limit (``--max-requests-inflight`` plus
``--max-mutating-requests-inflight``, as kube sums them when priority and fairness is on): the nominal
concurrency shares of every limited level divide it, rounded up (kube's NominalCL). Borrowing between levels
is not done: each level keeps its nominal seats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from apiserver.authentication.user import UserInfo
from apiserver.endpoints.routing import RequestInfo

SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
CACHED = 4096
"""Classifications remembered (by user and request shape, not object name) before the memo starts afresh."""


@dataclass(frozen=True, slots=True)
class PriorityLevel:
    """A limited PriorityLevelConfiguration: ``queues`` 0 is the ``Reject`` limit response."""

    name: str
    shares: int
    queues: int = 0
    hand_size: int = 0
    queue_length_limit: int = 0


@dataclass(frozen=True, slots=True)
class _ResourceRule:
    verbs: frozenset[str]
    groups: frozenset[str]
    resources: frozenset[str]
    namespaces: frozenset[str]
    cluster_scope: bool

    def matches(self, info: RequestInfo) -> bool:
        if not info.is_resource_request or not _has(self.verbs, info.verb):
            return False
        if not _has(self.groups, info.api_group):
            return False
        resource = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
        if not _has(self.resources, resource):
            return False
        if not info.namespace:
            return self.cluster_scope
        return _has(self.namespaces, info.namespace)


@dataclass(frozen=True, slots=True)
class _NonResourceRule:
    verbs: frozenset[str]
    urls: tuple[str, ...]

    def matches(self, info: RequestInfo) -> bool:
        if info.is_resource_request or not _has(self.verbs, info.verb):
            return False
        return any(_url_matches(url, info.path) for url in self.urls)


@dataclass(frozen=True, slots=True)
class _Rule:
    users: frozenset[str]
    groups: frozenset[str]
    service_accounts: frozenset[tuple[str, str]]
    resource_rules: tuple[_ResourceRule, ...]
    non_resource_rules: tuple[_NonResourceRule, ...]

    def matches(self, user: UserInfo, info: RequestInfo) -> bool:
        if not self._subject(user):
            return False
        rules = self.resource_rules if info.is_resource_request else self.non_resource_rules
        return any(rule.matches(info) for rule in rules)

    def _subject(self, user: UserInfo) -> bool:
        if _has(self.users, user.name) or any(_has(self.groups, g) for g in user.groups):
            return True
        if self.service_accounts and user.name.startswith(SERVICE_ACCOUNT_PREFIX):
            namespace, _, name = user.name[len(SERVICE_ACCOUNT_PREFIX) :].partition(":")
            return (namespace, name) in self.service_accounts or (
                namespace,
                "*",
            ) in self.service_accounts
        return False


@dataclass(frozen=True, slots=True)
class _ByNamespace:
    """A classification whose flow is named by the request's namespace: the level and the flow's prefix."""

    level: PriorityLevel
    prefix: str


_Match = tuple["PriorityLevel", str] | _ByNamespace


@dataclass(frozen=True, slots=True)
class FlowSchema:
    name: str
    level: PriorityLevel | None  # None: the exempt level
    distinguisher: str  # ByUser, ByNamespace, or "" (one flow)
    rules: tuple[_Rule, ...]


class Classifier:
    """kube's FlowSchemas, first match by precedence; a request's (level, flow) is remembered by its user
    and request shape, so most requests are classified by one dictionary lookup. The shape has the
    namespace only as namespaced or not while no rule names namespaces (kube's bootstrap rules name none):
    a user's requests in every namespace share one entry, and a flow by namespace adds the request's. The
    configuration is fixed (flowcontrol.yaml), so the memo holds for the server's life; it is bounded
    (``limit`` entries, then it starts afresh)."""

    def __init__(
        self,
        schemas: tuple[FlowSchema, ...],
        levels: tuple[PriorityLevel, ...],
        limit: int = CACHED,
    ) -> None:
        self.schemas = schemas
        self.levels = levels
        self.limit = limit
        self._memo: dict[tuple[Any, ...], _Match | None] = {}
        self._namespaces_named = any(
            rule.namespaces - {"*"}
            for schema in schemas
            for subject_rule in schema.rules
            for rule in subject_rule.resource_rules
        )

    def classify(self, user: UserInfo, info: RequestInfo) -> tuple[PriorityLevel, str] | None:
        """(the level, the flow) of a request; None when it is exempt (or nothing matches, which kube's
        catch-all schema prevents)."""
        namespace = info.namespace
        key = (
            user.name, user.groups, info.verb, info.api_group, info.resource, info.subresource,
            namespace if self._namespaces_named else bool(namespace),
            info.is_resource_request or info.path,
        )  # fmt: skip
        memo = self._memo
        try:
            found = memo[key]
        except KeyError:
            if len(memo) >= self.limit:
                memo.clear()
            found = memo[key] = self._match(user, info)
        if isinstance(found, _ByNamespace):
            return found.level, found.prefix + namespace
        return found

    def _match(self, user: UserInfo, info: RequestInfo) -> _Match | None:
        """The first matching schema's level and flow (for a flow by namespace, its prefix)."""
        for schema in self.schemas:
            if any(rule.matches(user, info) for rule in schema.rules):
                if schema.level is None:
                    return None
                if schema.distinguisher == "ByUser":
                    return schema.level, f"{schema.name}/{user.name}"
                if schema.distinguisher == "ByNamespace":
                    return _ByNamespace(schema.level, f"{schema.name}/")
                return schema.level, schema.name
        return None

    def nominal_seats(self, server_limit: int) -> dict[str, int]:
        """Each limited level's seats out of ``server_limit`` (NominalCL: ceil(limit * shares / sum))."""
        total = sum(level.shares for level in self.levels)
        return {level.name: math.ceil(server_limit * level.shares / total) for level in self.levels}


@cache
def _configuration() -> dict[str, Any]:
    """flowcontrol.yaml, parsed once per process: every server built in a process (the test fixtures start
    one per test) classifies by the same bootstrap objects. libyaml when available: pure-Python parsing
    took tens of milliseconds of each process's first server start."""
    text = resources.files(__package__).joinpath("flowcontrol.yaml").read_text()
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    document: dict[str, Any] = yaml.load(text, Loader=loader)
    return document


def bootstrap() -> Classifier:
    """kube's bootstrap configuration, read from flowcontrol.yaml (a classifier of its own: it memoizes)."""
    document = _configuration()
    levels: dict[str, PriorityLevel | None] = {}
    for entry in document["priorityLevelConfigurations"]:
        spec = entry["spec"]
        if spec["type"] == "Exempt":
            levels[entry["name"]] = None
            continue
        limited = spec["limited"]
        queuing = limited["limitResponse"].get("queuing") or {}
        levels[entry["name"]] = PriorityLevel(
            entry["name"],
            limited["nominalConcurrencyShares"],
            queuing.get("queues", 0),
            queuing.get("handSize", 0),
            queuing.get("queueLengthLimit", 0),
        )
    schemas = sorted(
        document["flowSchemas"],
        key=lambda schema: (schema["spec"]["matchingPrecedence"], schema["name"]),
    )
    return Classifier(
        tuple(_schema(schema, levels) for schema in schemas),
        tuple(level for level in levels.values() if level is not None),
    )


def _schema(document: dict[str, Any], levels: dict[str, PriorityLevel | None]) -> FlowSchema:
    spec = document["spec"]
    return FlowSchema(
        document["name"],
        levels[spec["priorityLevelConfiguration"]["name"]],
        (spec.get("distinguisherMethod") or {}).get("type", ""),
        tuple(_rule(rule) for rule in spec.get("rules") or ()),
    )


def _rule(document: dict[str, Any]) -> _Rule:
    subjects = document.get("subjects") or ()
    return _Rule(
        frozenset(s["user"]["name"] for s in subjects if s["kind"] == "User"),
        frozenset(s["group"]["name"] for s in subjects if s["kind"] == "Group"),
        frozenset(
            (s["serviceAccount"]["namespace"], s["serviceAccount"]["name"])
            for s in subjects
            if s["kind"] == "ServiceAccount"
        ),
        tuple(
            _ResourceRule(
                frozenset(rule["verbs"]),
                frozenset(rule["apiGroups"]),
                frozenset(rule["resources"]),
                frozenset(rule.get("namespaces") or ()),
                bool(rule.get("clusterScope")),
            )
            for rule in document.get("resourceRules") or ()
        ),
        tuple(
            _NonResourceRule(frozenset(rule["verbs"]), tuple(rule["nonResourceURLs"]))
            for rule in document.get("nonResourceRules") or ()
        ),
    )


def _has(values: frozenset[str], value: str) -> bool:
    return "*" in values or value in values


def _url_matches(pattern: str, path: str) -> bool:
    """kube's NonResourcePolicyRule URLs: exact, ``*`` for all, or a prefix ending in ``/*``."""
    if pattern == "*" or pattern == path:
        return True
    return pattern.endswith("/*") and path.startswith(pattern[:-1])
