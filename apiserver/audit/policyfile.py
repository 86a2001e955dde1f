"""`--audit-policy-file`: an audit.k8s.io/v1 Policy, YAML or JSON, read and validated as kube-apiserver
reads it (k8s.io/apiserver pkg/audit/policy/reader.go, pkg/apis/audit/validation): fields of the wrong type,
another apiVersion (v1alpha1 and v1beta1 were removed in Kubernetes 1.24, kubernetes/kubernetes#108092), a
failed validation or no rules at all fail the server's start with kube's words and the file; an unknown field
is only a warning, as kube falls back to lenient decoding for it."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NoReturn, TypedDict, get_type_hints

import yaml

from apiserver.audit.event import Level, Stage
from apiserver.audit.policy import GroupResources, PolicyRule, RulePolicy
from apiserver.encoding import kubeyaml, limits
from apiserver.machinery.gojson import go_json_kind
from apiserver.machinery.names import is_dns1123_subdomain
from apiserver.schema.causes import go_quote

log = logging.getLogger(__name__)

API_VERSION = "audit.k8s.io/v1"
_LEVELS = sorted(level.value for level in Level)
_STAGES = [stage.value for stage in Stage]  # kube's validOmitStages, in its order
_POLICY_FIELDS = frozenset(
    ("apiVersion", "kind", "metadata", "rules", "omitStages", "omitManagedFields")
)


class _GroupResourcesJSON(TypedDict, total=False):
    """audit.k8s.io/v1 GroupResources as JSON (k8s.io/apiserver pkg/apis/audit/v1/types.go): the fields
    that unknown ones are told from, with the types decoding insists on."""

    group: str
    resources: list[str]
    resourceNames: list[str]


class _PolicyRuleJSON(TypedDict, total=False):
    """audit.k8s.io/v1 PolicyRule as JSON, as ``_GroupResourcesJSON``."""

    level: str
    users: list[str]
    userGroups: list[str]
    verbs: list[str]
    resources: list[_GroupResourcesJSON]
    namespaces: list[str]
    nonResourceURLs: list[str]
    omitStages: list[str]
    omitManagedFields: bool


_RULE_FIELDS = _PolicyRuleJSON.__optional_keys__
_RESOURCE_FIELDS = _GroupResourcesJSON.__optional_keys__
_RULE_STRING_LISTS = tuple(
    name for name, hint in get_type_hints(_PolicyRuleJSON).items() if hint == list[str]
)
_RESOURCE_STRING_LISTS = tuple(
    name for name, hint in get_type_hints(_GroupResourcesJSON).items() if hint == list[str]
)


class PolicyFileError(ValueError):
    """The file cannot be used; the message is kube's, ending in the file's path."""


def load_policy_file(path: str) -> RulePolicy:
    """The Policy of the file at ``path``; raises :class:`PolicyFileError`."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:  # Go's *PathError: "open PATH: no such file or directory"
        reason = (error.strerror or str(error)).lower()
        raise PolicyFileError(
            f"failed to read file path {go_quote(path)}: open {path}: {reason}"
        ) from None
    try:
        return load_policy(data)
    except PolicyFileError as error:
        raise PolicyFileError(f"{error}: from file {path}") from None


def load_policy(data: bytes) -> RulePolicy:
    """kube's LoadPolicyFromBytes."""
    try:
        document = kubeyaml.load_body(data)
    except (yaml.YAMLError, limits.DecodedTooLarge) as error:
        raise PolicyFileError(f"failed decoding: {str(error).splitlines()[0]}") from None
    if not isinstance(document, dict):
        raise PolicyFileError("failed decoding: the policy must be an object")
    kind, api_version = document.get("kind"), document.get("apiVersion")
    if not kind:
        raise PolicyFileError("failed decoding: Object 'Kind' is missing")
    if kind != "Policy" or api_version != API_VERSION:
        raise PolicyFileError(
            f'failed decoding: no kind "{kind}" is registered for version "{api_version}"'
        )
    unknown = _unknown_fields(document)
    if unknown:
        log.warning(
            "Audit policy contains errors, falling back to lenient decoding: %s",
            ", ".join(f'unknown field "{name}"' for name in unknown),
        )
    _Decoder().check_policy(document)
    problems = _validate(document)
    if problems:
        raise PolicyFileError(problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]")
    rules = tuple(_rule(rule) for rule in document.get("rules") or ())
    if not rules:
        raise PolicyFileError("loaded illegal policy with 0 rules")
    return RulePolicy(
        rules,
        frozenset(Stage(stage) for stage in document.get("omitStages") or ()),
        bool(document.get("omitManagedFields")),
    )


def _unknown_fields(document: dict[str, Any]) -> list[str]:
    """The fields strict decoding would refuse, with their paths."""
    unknown = [name for name in document if name not in _POLICY_FIELDS]
    rules = document.get("rules")
    for index, rule in enumerate(rules if isinstance(rules, list) else ()):
        if not isinstance(rule, dict):
            continue
        unknown.extend(f"rules[{index}].{name}" for name in rule if name not in _RULE_FIELDS)
        resources = rule.get("resources")
        for inner, selector in enumerate(resources if isinstance(resources, list) else ()):
            if isinstance(selector, dict):
                unknown.extend(
                    f"rules[{index}].resources[{inner}].{name}"
                    for name in selector
                    if name not in _RESOURCE_FIELDS
                )
    return unknown


class _Decoder:
    """The types encoding/json would insist on when decoding into the Go structs, with its message."""

    def check_policy(self, document: dict[str, Any]) -> None:
        self._strings(document, "omitStages", "Policy.omitStages")
        self._bool(document, "omitManagedFields", "Policy.omitManagedFields")
        rules = self._list(document, "rules", "Policy.rules", "[]v1.PolicyRule")
        for rule in rules:
            if not isinstance(rule, dict):
                _type_error(rule, "Policy.rules", "v1.PolicyRule")
            self._string(rule, "level", "PolicyRule.rules.level")
            for name in _RULE_STRING_LISTS:
                self._strings(rule, name, f"PolicyRule.rules.{name}")
            self._bool(rule, "omitManagedFields", "PolicyRule.rules.omitManagedFields")
            resources = self._list(
                rule, "resources", "PolicyRule.rules.resources", "[]v1.GroupResources"
            )
            for selector in resources:
                if not isinstance(selector, dict):
                    _type_error(selector, "PolicyRule.rules.resources", "v1.GroupResources")
                self._string(selector, "group", "GroupResources.rules.resources.group")
                for name in _RESOURCE_STRING_LISTS:
                    self._strings(selector, name, f"GroupResources.rules.resources.{name}")

    def _list(self, holder: dict[str, Any], name: str, where: str, go_type: str) -> list[Any]:
        value = holder.get(name)
        if value is None:
            return []
        if not isinstance(value, list):
            _type_error(value, where, go_type)
        return value

    def _strings(self, holder: dict[str, Any], name: str, where: str) -> None:
        for value in self._list(holder, name, where, "[]string"):
            if not isinstance(value, str):
                _type_error(value, where, "string")

    def _string(self, holder: dict[str, Any], name: str, where: str) -> None:
        value = holder.get(name)
        if value is not None and not isinstance(value, str):
            _type_error(value, where, "string")

    def _bool(self, holder: dict[str, Any], name: str, where: str) -> None:
        value = holder.get(name)
        if value is not None and not isinstance(value, bool):
            _type_error(value, where, "bool")


def _type_error(value: Any, where: str, go_type: str) -> NoReturn:
    raise PolicyFileError(
        f"failed decoding: json: cannot unmarshal {go_json_kind(value)} into Go struct field"
        f" {where} of type {go_type}"
    )


def _validate(document: dict[str, Any]) -> list[str]:
    """kube's ValidatePolicy, its field errors as field.ErrorList prints them."""
    problems = _omit_stages(document.get("omitStages") or (), "omitStages")
    for index, rule in enumerate(document.get("rules") or ()):
        path = f"rules[{index}]"
        level = rule.get("level") or ""
        if not level:
            problems.append(f"{path}.level: Required value")
        elif level not in _LEVELS:
            supported = ", ".join(f'"{name}"' for name in _LEVELS)
            problems.append(
                f'{path}.level: Unsupported value: "{level}": supported values: {supported}'
            )
        urls = rule.get("nonResourceURLs") or []
        for inner, url in enumerate(urls):
            if url == "*":
                continue
            where = f"{path}.nonResourceURLs[{inner}]"
            if not url.startswith("/"):
                problems.append(
                    _invalid(where, url, "non-resource URL rules must begin with a '/' character")
                )
            if url and "*" in url[:-1]:
                problems.append(
                    _invalid(
                        where,
                        url,
                        "non-resource URL wildcards '*' must be the final character of the rule",
                    )
                )
        for selector in rule.get("resources") or ():
            group = selector.get("group") or ""
            if group and (messages := is_dns1123_subdomain(group)):
                problems.append(_invalid(f"{path}.resources.group", group, ",".join(messages)))
            if selector.get("resourceNames") and not selector.get("resources"):
                problems.append(
                    _invalid(
                        f"{path}.resources.resourceNames",
                        selector["resourceNames"],
                        "using resourceNames requires at least one resource",
                    )
                )
        problems.extend(_omit_stages(rule.get("omitStages") or (), f"{path}.omitStages"))
        if urls and (rule.get("resources") or rule.get("namespaces")):
            problems.append(
                _invalid(
                    f"{path}.nonResourceURLs",
                    urls,
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
    return problems


def _omit_stages(stages: Iterable[str], path: str) -> list[str]:
    allowed = "allowed stages are " + ",".join(_STAGES)
    return [
        _invalid(f"{path}[{index}]", stage, allowed)
        for index, stage in enumerate(stages)
        if stage not in _STAGES
    ]


def _invalid(path: str, value: str | list[str], detail: str) -> str:
    """field.Invalid's text: strings quoted as Go's %q, string lists as Go's %#v prints a []string."""
    shown = (
        go_quote(value)
        if isinstance(value, str)
        else "[]string{" + ", ".join(map(go_quote, value)) + "}"
    )
    return f"{path}: Invalid value: {shown}: {detail}"


def _rule(rule: _PolicyRuleJSON) -> PolicyRule:
    omit_managed = rule.get("omitManagedFields")
    return PolicyRule(
        Level(rule["level"]),
        users=frozenset(rule.get("users") or ()),
        user_groups=frozenset(rule.get("userGroups") or ()),
        verbs=frozenset(rule.get("verbs") or ()),
        resources=tuple(
            GroupResources(
                selector.get("group") or "",
                tuple(selector.get("resources") or ()),
                tuple(selector.get("resourceNames") or ()),
            )
            for selector in rule.get("resources") or ()
        ),
        namespaces=frozenset(rule.get("namespaces") or ()),
        non_resource_urls=tuple(rule.get("nonResourceURLs") or ()),
        omit_stages=frozenset(Stage(stage) for stage in rule.get("omitStages") or ()),
        omit_managed_fields=omit_managed if isinstance(omit_managed, bool) else None,
    )
