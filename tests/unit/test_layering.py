"""The architecture's one-way layers, checked on the source (DESIGN.md "Dependency direction"): the runtime
in apiserver/ names no kind of the shipped definitions and imports neither generated/ nor builtin/ (what is
per kind comes in through the Scheme and the classes definitions name); the generator uses no more of the
runtime than the pure schema rules and leaf helpers that a CRD posted at run time shares with generation."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from generator.load import load_checked

ROOT = Path(__file__).resolve().parents[2]
# Where kube's own generic code names a kind, so does ours; each exemption says which code.
EXEMPT = {
    # the URL grammar: /api/v1/namespaces/{ns}/... (k8s.io/apiserver RequestInfoFactory)
    ("apiserver/endpoints/routing.py", "namespaces"),
    # apimachinery's ValidateOwnerReferences refuses "/v1, Kind=Event" as an owner
    ("apiserver/schema/objectmeta.py", "Event"),
    # the audit log's own kind, audit.k8s.io/v1 Event (k8s.io/apiserver pkg/apis/audit), not core's
    ("apiserver/audit/event.py", "Event"),
    # WithImpersonation authorizes userextras and uids in authentication.k8s.io (authenticationv1)
    ("apiserver/filters/impersonation.py", "authentication.k8s.io"),
    # an audit.k8s.io/v1 PolicyRule's field `namespaces` (k8s.io/apiserver pkg/apis/audit), not the kind's plural
    ("apiserver/audit/policyfile.py", "namespaces"),
    # ... and service accounts as core's serviceaccounts resource (corev1.SchemeGroupVersion there)
    ("apiserver/filters/impersonation.py", "serviceaccounts"),
    # a flowcontrol.apiserver.k8s.io/v1 ResourcePolicyRule's field `namespaces` and a Subject's kind
    # `ServiceAccount` (k8s.io/api/flowcontrol/v1), not the kinds
    ("apiserver/filters/flowschemas.py", "namespaces"),
    ("apiserver/filters/flowschemas.py", "ServiceAccount"),
    # the delegated reviews post authentication.k8s.io/v1 TokenReview and authorization.k8s.io/v1
    # SubjectAccessReview to another server (k8s.io/apiserver plugin/pkg/authenticator/token/webhook and
    # plugin/pkg/authorizer/webhook)
    ("apiserver/authentication/webhook.py", "TokenReview"),
    ("apiserver/authorization/webhook.py", "SubjectAccessReview"),
    # kube-system/extension-apiserver-authentication: k8s.io/apiserver's DelegatingAuthenticationOptions
    # reads that ConfigMap (pkg/server/options/authentication.go, authenticationConfigMapNamespace/Name)
    ("apiserver/server/authentication_info.py", "ConfigMap"),
    ("apiserver/server/authentication_info.py", "configmaps"),
}
GENERATOR_MAY_IMPORT = (
    "apiserver.schema",
    "apiserver.machinery.convert",
    "apiserver.machinery.jsonpath",
    "apiserver.machinery.objects",
    "apiserver.machinery.scheme",
    "apiserver.encoding.kubeyaml",
)


def shipped_names() -> set[str]:
    """Kinds, plurals, list kinds and groups. Not singulars and short names: "namespace" is also ObjectMeta's
    field and "ns" a duration's unit, so they say nothing about kinds."""
    names: set[str] = set()
    for d in load_checked(ROOT / "definitions"):
        names.update((d.kind, d.plural, d.list_kind))
        if d.group:
            names.add(d.group)
    return names


def modules(package: str) -> Iterator[tuple[str, ast.Module]]:
    for path in sorted((ROOT / package).rglob("*.py")):
        yield str(path.relative_to(ROOT)), ast.parse(path.read_text(), str(path))


def docstrings(tree: ast.Module) -> set[int]:
    """The ids of docstring nodes: prose may name kinds, code may not."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def imported(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module


def test_the_runtime_names_no_shipped_kind() -> None:
    names = shipped_names()
    assert {"Namespace", "namespaces", "ConfigMap", "SelfSubjectAccessReview"} <= names
    found = []
    for where, tree in modules("apiserver"):
        prose = docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value in names
                and id(node) not in prose
                and (where, node.value) not in EXEMPT
            ):
                found.append(f"{where}:{node.lineno}: {node.value!r}")
    assert found == []


def test_the_runtime_imports_neither_generated_code_nor_builtin_kinds() -> None:
    found = [
        f"{where}: {module}"
        for where, tree in modules("apiserver")
        for module in imported(tree)
        if module.split(".")[0] in ("generated", "builtin", "generator", "apiforge")
    ]
    assert found == []


def test_the_generator_uses_only_the_runtimes_pure_rules_and_leaf_helpers() -> None:
    found = [
        f"{where}: {module}"
        for where, tree in modules("generator")
        for module in imported(tree)
        if module.split(".")[0] in ("apiserver", "generated", "builtin")
        and not module.startswith(GENERATOR_MAY_IMPORT)
    ]
    assert found == []
