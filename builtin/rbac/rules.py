"""PolicyRules compiled for matching (kube's rbacv1helpers and plugin/pkg/auth/authorizer/rbac RuleAllows), and
the coverage test of escalation prevention (pkg/registry/rbac/validation: BreakdownRule, ruleCovers,
CompactRules, CompactString). Compiled once per stored role, so a request costs set lookups, not list scans."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from apiserver.authorization.authorizer import Attributes

ALL = "*"
READ = ("get", "list", "watch")
WRITE = ("create", "delete", "deletecollection", "patch", "update")
READ_WRITE = (*READ, *WRITE)


@dataclass(frozen=True, slots=True)
class Rule:
    """One PolicyRule, its lists as given (for the reviews and the messages) and as sets (for matching)."""

    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, rule: Any) -> Rule:
        """A stored rule (a dict); anything malformed reads as empty lists, which match nothing."""
        if not isinstance(rule, dict):
            return cls()
        return cls(
            _strings(rule.get("verbs")),
            _strings(rule.get("apiGroups")),
            _strings(rule.get("resources")),
            _strings(rule.get("resourceNames")),
            _strings(rule.get("nonResourceURLs")),
        )

    def as_json(self) -> dict[str, list[str]]:
        """The rule as a PolicyRule object, empty lists left out (as Go's omitempty prints it)."""
        fields = (
            ("verbs", self.verbs),
            ("apiGroups", self.api_groups),
            ("resources", self.resources),
            ("resourceNames", self.resource_names),
            ("nonResourceURLs", self.non_resource_urls),
        )
        return {key: list(values) for key, values in fields if values or key == "verbs"}

    def allows(self, attributes: Attributes) -> bool:
        """kube's RuleAllows."""
        verbs = self.verbs
        if ALL not in verbs and attributes.verb not in verbs:
            return False
        if not attributes.resource_request:
            return any(url_covers(url, attributes.path) for url in self.non_resource_urls)
        groups = self.api_groups
        if ALL not in groups and attributes.api_group not in groups:
            return False
        if not _resource_matches(self.resources, attributes.resource, attributes.subresource):
            return False
        names = self.resource_names
        return not names or attributes.name in names

    def compact_string(self) -> str:
        """kube's CompactString: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}`."""
        parts = [
            f"{label}:[{' '.join(_go_quote(v) for v in values)}]"
            for label, values in (
                ("APIGroups", self.api_groups),
                ("Resources", self.resources),
                ("NonResourceURLs", self.non_resource_urls),
                ("ResourceNames", self.resource_names),
                ("Verbs", self.verbs),
            )
            if values
        ]
        return "{" + ", ".join(parts) + "}"


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, str))


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _resource_matches(resources: Sequence[str], resource: str, subresource: str) -> bool:
    """kube's ResourceMatches: `*`, the exact `resource[/subresource]`, or `*/subresource`."""
    if ALL in resources:
        return True
    if not subresource:
        return resource in resources
    return f"{resource}/{subresource}" in resources or f"*/{subresource}" in resources


def url_covers(owner: str, path: str) -> bool:
    """kube's NonResourceURLMatches and nonResourceURLCovers: exact, or a prefix ending in `*`."""
    if owner in (ALL, path):
        return True
    return owner.endswith(ALL) and path.startswith(owner.rstrip(ALL))


def compile_rules(rules: Any) -> tuple[Rule, ...]:
    """The rules of a stored role (its ``rules`` list)."""
    return tuple(Rule.from_json(rule) for rule in rules) if isinstance(rules, list) else ()


# -- escalation: does what a user holds cover what they grant? ---------------------------------------


def breakdown(rule: Rule) -> list[Rule]:
    """kube's BreakdownRule: one rule per group, resource and verb (and name), and per URL and verb."""
    atoms: list[Rule] = []
    for group in rule.api_groups:
        for resource in rule.resources:
            for verb in rule.verbs:
                if rule.resource_names:
                    atoms.extend(
                        Rule((verb,), (group,), (resource,), (name,))
                        for name in rule.resource_names
                    )
                else:
                    atoms.append(Rule((verb,), (group,), (resource,)))
    for url in rule.non_resource_urls:
        atoms.extend(Rule((verb,), non_resource_urls=(url,)) for verb in rule.verbs)
    return atoms


def _covers(owner: Rule, atom: Rule) -> bool:
    """kube's ruleCovers."""
    verbs = ALL in owner.verbs or set(atom.verbs) <= set(owner.verbs)
    groups = ALL in owner.api_groups or set(atom.api_groups) <= set(owner.api_groups)
    names = not owner.resource_names or (
        bool(atom.resource_names) and set(atom.resource_names) <= set(owner.resource_names)
    )
    urls = all(
        any(url_covers(o, path) for o in owner.non_resource_urls) for path in atom.non_resource_urls
    )
    return verbs and groups and names and urls and _resources_cover(owner.resources, atom.resources)


def _resources_cover(owned: Sequence[str], wanted: Sequence[str]) -> bool:
    """kube's resourceCoversAll: `*`, the exact resource, or `*/subresource` for a subresource."""
    if ALL in owned:
        return True
    for path in wanted:
        if path in owned:
            continue
        if "/" not in path or "*/" + path.split("/", 1)[1] not in owned:
            return False
    return True


def uncovered(owned: Iterable[Rule], granted: Iterable[Rule]) -> list[Rule]:
    """kube's Covers: the atoms of ``granted`` that no rule of ``owned`` covers."""
    owner_rules = list(owned)
    return [
        atom
        for rule in granted
        for atom in breakdown(rule)
        if not any(_covers(owner, atom) for owner in owner_rules)
    ]


def compact(rules: Iterable[Rule]) -> list[Rule]:
    """kube's CompactRules: simple resource rules (one group, one resource, no names) of the same group and
    resource merged into one with all their verbs."""
    merged: dict[tuple[str, str], list[str]] = {}
    others: list[Rule] = []
    for rule in rules:
        simple = (
            len(rule.api_groups) == 1
            and len(rule.resources) == 1
            and not rule.resource_names
            and not rule.non_resource_urls
        )
        if not simple:
            others.append(rule)
            continue
        verbs = merged.setdefault((rule.api_groups[0], rule.resources[0]), [])
        verbs.extend(verb for verb in rule.verbs if verb not in verbs)
    return [
        Rule(tuple(verbs), (group,), (resource,)) for (group, resource), verbs in merged.items()
    ] + others
