"""The RBAC policy in memory, indexed by subject (kube's authorizer reads listers and scans every binding;
here a request looks at its own user's and groups' bindings only, so ten thousand bindings for other users
cost it nothing). Fed by the informers of the four RBAC kinds (authorizer.py)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from apiserver.authentication.user import UserInfo
from builtin.rbac.rules import Rule, compile_rules

GROUP = "rbac.authorization.k8s.io"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
USER, GROUP_KIND, SERVICE_ACCOUNT = "User", "Group", "ServiceAccount"

BindingKey = tuple[str, str]
"""(namespace, name) of a RoleBinding; ("", name) of a ClusterRoleBinding."""


@dataclass(frozen=True, slots=True)
class Subject:
    kind: str
    name: str
    namespace: str = ""

    def key(self, binding_namespace: str) -> tuple[str, str] | None:
        """The index key of whom this subject names: ("user", name) or ("group", name); a service account
        is the user `system:serviceaccount:NS:NAME` (NS the binding's when the subject gives none)."""
        if self.kind == USER:
            return ("user", self.name)
        if self.kind == GROUP_KIND:
            return ("group", self.name)
        if self.kind == SERVICE_ACCOUNT:
            namespace = self.namespace or binding_namespace
            if not namespace or not self.name:
                return None
            return ("user", f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{self.name}")
        return None

    def describe(self, binding_namespace: str) -> str:
        """kube's describeSubject: `User "alice"`, `ServiceAccount "builder/ci"`."""
        if self.kind == SERVICE_ACCOUNT:
            return f'{self.kind} "{self.name}/{self.namespace or binding_namespace}"'
        return f'{self.kind} "{self.name}"'


@dataclass(frozen=True, slots=True)
class Binding:
    namespace: str
    """"" for a ClusterRoleBinding."""
    name: str
    role_kind: str
    role_name: str
    subjects: tuple[Subject, ...]

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Binding:
        metadata = obj.get("metadata") or {}
        ref = obj.get("roleRef") or {}
        subjects = tuple(
            Subject(
                str(s.get("kind") or ""), str(s.get("name") or ""), str(s.get("namespace") or "")
            )
            for s in obj.get("subjects") or ()
            if isinstance(s, dict)
        )
        return cls(
            str(metadata.get("namespace") or ""),
            str(metadata.get("name") or ""),
            str(ref.get("kind") or ""),
            str(ref.get("name") or ""),
            subjects,
        )

    @property
    def key(self) -> BindingKey:
        return (self.namespace, self.name)

    def subject_keys(self) -> set[tuple[str, str]]:
        return {key for s in self.subjects if (key := s.key(self.namespace)) is not None}

    def subject_of(self, user: UserInfo) -> Subject | None:
        """The first subject naming ``user`` (kube's appliesTo)."""
        for subject in self.subjects:
            key = subject.key(self.namespace)
            if key is None:
                continue
            if key[0] == "user" and key[1] == user.name:
                return subject
            if key[0] == "group" and key[1] in user.groups:
                return subject
        return None

    def describe(self, subject: Subject) -> str:
        """kube's roleBindingDescriber / clusterRoleBindingDescriber."""
        if self.namespace:
            return (
                f'RoleBinding "{self.name}/{self.namespace}" of {self.role_kind} "{self.role_name}"'
                f" to {subject.describe(self.namespace)}"
            )
        return (
            f'ClusterRoleBinding "{self.name}" of ClusterRole "{self.role_name}"'
            f" to {subject.describe('')}"
        )


class PolicyIndex:
    """Roles by name, bindings by key, and binding keys by subject then namespace."""

    def __init__(self) -> None:
        self.roles: dict[tuple[str, str], tuple[Rule, ...]] = {}
        self.cluster_roles: dict[str, tuple[Rule, ...]] = {}
        self.bindings: dict[BindingKey, Binding] = {}
        self._by_subject: dict[tuple[str, str], dict[str, set[BindingKey]]] = {}
        self.revision = 0
        """Counts the changes, once each is whole: a decision made at one revision holds while it is
        current."""

    # -- updates (from the informers) ----------------------------------------------------------------

    def set_role(self, obj: dict[str, Any]) -> None:
        metadata = obj["metadata"]
        self.roles[(metadata.get("namespace") or "", metadata["name"])] = compile_rules(
            obj.get("rules")
        )
        self.revision += 1

    def delete_role(self, obj: dict[str, Any]) -> None:
        metadata = obj["metadata"]
        self.roles.pop((metadata.get("namespace") or "", metadata["name"]), None)
        self.revision += 1

    def set_cluster_role(self, obj: dict[str, Any]) -> None:
        self.cluster_roles[obj["metadata"]["name"]] = compile_rules(obj.get("rules"))
        self.revision += 1

    def delete_cluster_role(self, obj: dict[str, Any]) -> None:
        self.cluster_roles.pop(obj["metadata"]["name"], None)
        self.revision += 1

    def set_binding(self, obj: dict[str, Any]) -> None:
        binding = Binding.from_json(obj)
        self._unindex(binding.key)
        self.bindings[binding.key] = binding
        for subject in binding.subject_keys():
            self._by_subject.setdefault(subject, {}).setdefault(binding.namespace, set()).add(
                binding.key
            )
        self.revision += 1

    def delete_binding(self, obj: dict[str, Any]) -> None:
        self._unindex(Binding.from_json(obj).key)
        self.revision += 1

    def _unindex(self, key: BindingKey) -> None:
        old = self.bindings.pop(key, None)
        if old is None:
            return
        for subject in old.subject_keys():
            namespaces = self._by_subject.get(subject)
            if namespaces is None:
                continue
            keys = namespaces.get(old.namespace)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del namespaces[old.namespace]
            if not namespaces:
                del self._by_subject[subject]

    def clear(self, kind: str) -> None:
        """Forget every object of one kind before its informer lists again."""
        if kind == "Role":
            self.roles.clear()
        elif kind == "ClusterRole":
            self.cluster_roles.clear()
        else:
            cluster = kind == "ClusterRoleBinding"
            for key in [k for k in self.bindings if (k[0] == "") == cluster]:
                self._unindex(key)
        self.revision += 1

    # -- reads (per request) --------------------------------------------------------------------------

    def bindings_for(self, user: UserInfo, namespace: str) -> Iterator[Binding]:
        """The ClusterRoleBindings naming ``user`` (or a group of theirs), then their RoleBindings in
        ``namespace``, each once: kube's VisitRulesFor order, from the index instead of a scan."""
        index = self._by_subject
        entries = [index.get(("user", user.name))]
        entries.extend(index.get(("group", group)) for group in user.groups)
        found = [entry for entry in entries if entry]
        if not found:
            return
        seen: set[BindingKey] = set()
        for where in ("", namespace) if namespace else ("",):
            for entry in found:
                for key in sorted(entry.get(where, ())):
                    if key not in seen:
                        seen.add(key)
                        yield self.bindings[key]

    def role_rules(self, binding: Binding) -> tuple[Rule, ...] | str:
        """The rules of the role ``binding`` refers to, or kube's not-found error for a missing one."""
        if binding.role_kind == "ClusterRole":
            rules = self.cluster_roles.get(binding.role_name)
            resource = "clusterrole"
        elif binding.role_kind == "Role" and binding.namespace:
            rules = self.roles.get((binding.namespace, binding.role_name))
            resource = "role"
        else:
            return f'unsupported role reference kind: "{binding.role_kind}"'
        if rules is None:
            return f'{resource}.{GROUP} "{binding.role_name}" not found'
        return rules
