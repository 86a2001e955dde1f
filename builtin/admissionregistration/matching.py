"""Whether a policy, a policy binding or a webhook applies to a write, and in which resource and version it
sees it: one matcher for all of them, as kube's (staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/
matching/matching.go and webhook/generic/webhook.go ShouldCallHook, on the predicates in
webhook/predicates/{namespace,object,rules}):

- ``namespaceSelector`` on the labels of the write's namespace; a cluster-scoped object always matches,
  except a Namespace, judged by its own labels (the new object's on create and update, the stored one's
  otherwise);
- ``objectSelector`` on the new or the old object's labels (either matching is enough);
- ``excludeResourceRules`` (policies) first, then the rules: the written resource and version first, then,
  under ``matchPolicy: Equivalent`` (the default), the other versions and groups of the same objects, rule by
  rule; a policy's rules may name objects (``resourceNames``); a policy's or binding's unset
  ``resourceRules`` match every resource (a binding then narrows by its selectors only), a webhook's never;
- a selector that cannot be read, or a namespace that cannot be found, is an error only for a write the
  rules select;
- writes of the admission configuration kinds themselves are never selected."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apiserver.admission.interface import Attributes, Operation
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import VersionType
from apiserver.machinery.selectors import Requirement
from builtin.admissionregistration.equivalents import Matched, equivalents
from builtin.admissionregistration.rules import exempt, rule_matches
from builtin.rbac.aggregation import selector_requirements
from builtin.wants import WantsStores

MEMO_SIZE = 4096


@dataclass(frozen=True, slots=True)
class Shape:
    """Where a kind of configuration keeps its rules, and what they mean."""

    rules: str
    """``resourceRules`` (MatchResources) or ``rules`` (a webhook)."""
    unset_matches_all: bool
    """No rules: every resource (MatchResources), or none (a webhook)."""
    named: bool
    """NamedRuleWithOperations: ``resourceNames`` and ``excludeResourceRules`` (MatchResources)."""


MATCH_RESOURCES = Shape("resourceRules", unset_matches_all=True, named=True)
WEBHOOK = Shape("rules", unset_matches_all=False, named=False)


class Matcher:
    """Matches writes against configurations of one ``shape``; remembers what the rules select (every
    write of every kind asks every configuration) until ``forget``, called whenever they change."""

    def __init__(self, context: WantsStores, shape: Shape) -> None:
        self.context = context
        self.shape = shape
        self.memo: dict[tuple[Any, ...], Matched | None] = {}
        self.named: dict[int, bool] = {}
        """By criteria: whether their rules name objects (then the write's name is part of the key)."""
        self.kept: dict[int, Any] = {}
        """What the memo's keys name by identity, kept alive so that no id is reused meanwhile."""

    def forget(self) -> None:
        self.memo.clear()
        self.named.clear()
        self.kept.clear()

    async def matches(self, criteria: dict[str, Any], attributes: Attributes) -> Matched | None:
        """The resource and version ``criteria`` see the write in, None when they do not select it.
        Raises the APIError of a selector or namespace lookup that failed, when the rest selects it."""
        if exempt(attributes):
            return None
        matched = self.ruled(criteria, attributes)
        if matched is None:
            return None
        # unset selectors (the common case, asked on every write) are not looked at
        in_namespace: bool | errors.APIError = True
        if criteria.get("namespaceSelector"):
            in_namespace = await self._namespace_selected(criteria, attributes)
            if in_namespace is False:
                return None
        selected: bool | errors.APIError = True
        if criteria.get("objectSelector"):
            selected = _object_selected(criteria, attributes)
            if selected is False:
                return None
        for outcome in (in_namespace, selected):
            if isinstance(outcome, errors.APIError):
                raise outcome
        return matched

    # -- rules ------------------------------------------------------------------------------------------------

    def ruled(self, criteria: dict[str, Any], attributes: Attributes) -> Matched | None:
        """What the rules select: the excluded nothing, the included the write in a resource and version."""
        written = attributes.request_version or attributes.version
        resource = attributes.resource
        named = self.named.get(id(criteria))
        if named is None:
            named = self.named[id(criteria)] = self.shape.named and _names(criteria)
            self.kept[id(criteria)] = criteria
        key = (
            id(criteria), id(resource), written.name, attributes.subresource, attributes.operation,
            attributes.namespace != "", attributes.name if named else None,
        )  # fmt: skip
        if key in self.memo:
            return self.memo[key]
        equivalent = criteria.get("matchPolicy", "Equivalent") == "Equivalent"
        found: Matched | None
        excluded = criteria.get("excludeResourceRules") if self.shape.named else None
        if excluded and self._first(excluded, attributes, written, equivalent) is not None:
            found = None
        elif not criteria.get(self.shape.rules):
            found = Matched(resource, written) if self.shape.unset_matches_all else None
        else:
            found = self._first(criteria.get(self.shape.rules), attributes, written, equivalent)
        if len(self.memo) >= MEMO_SIZE:
            self.forget()
        self.memo[key] = found
        self.kept[id(criteria)], self.kept[id(resource)] = criteria, resource
        return found

    def _first(
        self, rules: Any, attributes: Attributes, written: VersionType, equivalent: bool
    ) -> Matched | None:
        """The written resource if a rule selects it, else (``equivalent``) the first equivalent the
        earliest rule selects (kube's matchesResourceRules: earlier rules are honoured first)."""
        if not isinstance(rules, list):
            return None
        resource = attributes.resource
        if any(self._selects(rule, attributes, Matched(resource, written)) for rule in rules):
            return Matched(resource, written)
        if not equivalent:
            return None
        known = (store.resource for store in self.context.stores.values())
        others = [
            m
            for m in equivalents(resource, known)
            if m.resource is not resource or m.version.name != written.name
        ]
        for rule in rules:
            for other in others:
                if self._selects(rule, attributes, other):
                    return other
        return None

    def _selects(self, rule: Any, attributes: Attributes, target: Matched) -> bool:
        gvr = (target.resource.group, target.version.name, target.resource.plural)
        if not rule_matches(rule, attributes, gvr):
            return False
        names = rule.get("resourceNames") if self.shape.named else None
        return not names or attributes.name in names

    # -- selectors --------------------------------------------------------------------------------------------

    async def _namespace_selected(
        self, criteria: dict[str, Any], attributes: Attributes
    ) -> bool | errors.APIError:
        """kube's namespace.Matcher.MatchNamespaceSelector."""
        is_namespace = _is_namespace(attributes)
        if not attributes.namespace and not is_namespace:
            return True  # a cluster-scoped object is never exempted
        requirements = _requirements(criteria.get("namespaceSelector"))
        if isinstance(requirements, errors.APIError):
            return requirements
        if not requirements:
            return True
        labels = await self._namespace_labels(attributes, is_namespace)
        if isinstance(labels, errors.APIError):
            return labels
        return all(r.matches(labels) for r in requirements)

    async def _namespace_labels(
        self, attributes: Attributes, is_namespace: bool
    ) -> dict[str, str] | errors.APIError:
        """A Namespace written (created or updated) has the labels it is written with; otherwise the
        stored namespace's (for a Namespace, itself: kube's request for it carries its name as the
        namespace)."""
        if (
            is_namespace
            and not attributes.subresource
            and attributes.operation in (Operation.CREATE, Operation.UPDATE)
        ):
            return _labels(attributes.obj)
        name = attributes.name if is_namespace else attributes.namespace
        try:
            namespace, _ = await self.context.store("", "namespaces").get_rendered(None, name)
        except errors.APIError as error:
            return error if error.code == 404 else errors.internal_error(error.message)
        return _labels(namespace)


def _is_namespace(attributes: Attributes) -> bool:
    return (attributes.resource.group, attributes.resource.plural) == ("", "namespaces")


def _object_selected(criteria: dict[str, Any], attributes: Attributes) -> bool | errors.APIError:
    """kube's object.Matcher.MatchObjectSelector: the new or the old object's labels."""
    requirements = _requirements(criteria.get("objectSelector"))
    if isinstance(requirements, errors.APIError):
        return requirements
    if not requirements:
        return True
    return any(
        obj is not None and all(r.matches(_labels(obj)) for r in requirements)
        for obj in (attributes.obj, attributes.old)
    )


def _requirements(selector: Any) -> tuple[Requirement, ...] | errors.APIError:
    """The selector's requirements (unset: none, everything matches); an unreadable one is kube's
    internal error (LabelSelectorAsSelector failing)."""
    if selector is None:
        return ()
    requirements = selector_requirements(selector)
    if requirements is None:
        return errors.internal_error(f"invalid label selector: {selector}")
    return requirements


def _labels(obj: Object | None) -> dict[str, str]:
    labels = ((obj or {}).get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def _names(criteria: dict[str, Any]) -> bool:
    """Whether any of the rules names objects (then the write's name is part of the answer)."""
    return any(
        isinstance(rule, dict) and rule.get("resourceNames")
        for key in ("resourceRules", "excludeResourceRules")
        for rule in criteria.get(key) or ()
    )
