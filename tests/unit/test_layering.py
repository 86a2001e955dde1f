"""The architecture's one-way layers, checked on the source: inside apiserver/ each package imports only the
layers beneath its own (LAYERS, as kube's modules depend), type-only imports included; the runtime names no
kind of the shipped definitions and imports neither generated/ nor builtin/ (what is per kind comes in through
the Scheme, the RESTOptions and the server parts that generated code hands the server); the generator uses no
more of the runtime than the pure schema rules and leaf helpers that a CRD posted at run time shares with
generation."""

from __future__ import annotations

import ast
import graphlib
from collections.abc import Iterator
from pathlib import Path

from generator.load import load_checked

ROOT = Path(__file__).resolve().parents[2]
LAYERS: tuple[tuple[str, ...], ...] = (
    # k8s.io/apimachinery/pkg/runtime/serializer: the wire codecs, which the Scheme's versions name
    ("encoding",),
    # k8s.io/apimachinery: runtime.Scheme, api/errors, labels and fields selectors, conversion
    ("machinery",),
    # the structural schema (k8s.io/apiextensions-apiserver/pkg/apiserver/schema, kube-openapi's validation),
    # patches (k8s.io/apimachinery/pkg/util/strategicpatch, jsonmergepatch), client-go (kubeconfig, caches)
    ("schema", "patch", "client"),
    # k8s.io/apiserver/pkg/storage; managed fields (k8s.io/apimachinery/pkg/util/managedfields);
    # k8s.io/apiserver/pkg/authentication (its webhook authenticator is a client-go client)
    ("storage", "fieldmanager", "authentication"),
    # k8s.io/apiserver/pkg/authorization decides for authenticated users; storage metrics wrap storage
    ("authorization", "metrics"),
    # k8s.io/apiserver/pkg/admission and pkg/audit see the user, and audit the authorizer's decision
    ("admission", "audit"),
    # k8s.io/apiserver/pkg/registry: the generic Store over storage, admission and the strategies
    ("registry",),
    # k8s.io/apiserver/pkg/endpoints: handlers, routing, discovery, negotiation
    ("endpoints",),
    # k8s.io/apiserver/pkg/endpoints/filters and pkg/server/filters: the handler chain around the handlers
    ("filters",),
    # k8s.io/apiserver/pkg/server assembles everything; the conversion webhook is a server of its own
    ("server", "conversionwebhook"),
)
"""apiserver/'s packages from the bottom up: a package imports its own modules and lower layers only, never a
package beside it in its layer or above it."""
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
    """Every module imported anywhere in ``tree``: under ``if TYPE_CHECKING:`` and inside functions too."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module


def module_name(where: str) -> str:
    """``apiserver/registry/store.py`` as Python names it, ``apiserver.registry.store``."""
    return where.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def import_graph(trees: dict[str, ast.Module]) -> dict[str, set[str]]:
    """Each module of ``trees`` (by dotted name) with the modules among them it imports, under ``if
    TYPE_CHECKING:`` and inside functions too: ``from package import module`` leads to that module."""
    graph: dict[str, set[str]] = {}
    for name, tree in trees.items():
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    submodule = f"{node.module}.{alias.name}"
                    targets.add(submodule if submodule in trees else node.module)
        graph[name] = {target for target in targets if target in trees and target != name}
    return graph


def import_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One circle of imports in ``graph`` (its first module repeated at its end), or [] when there is none."""
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        return list(error.args[1])
    return []


def wire_objects_and_fields(tree: ast.Module) -> set[int]:
    """The ids of strings that are not the runtime naming a kind, by two rules:

    - the ``kind`` of an object literal that carries its own ``apiVersion``: an object, or the type, of one
      version of a fixed API, which kube's generic code names as a GroupVersionKind (the audit.k8s.io
      Event, the TokenReview and SubjectAccessReview it posts to webhooks, the type of the
      extension-apiserver-authentication ConfigMap, the /v1 Event of apimachinery's BannedOwners);
    - a field read from an object (``obj["namespaces"]``, ``obj.get("namespaces")``), or a value compared
      with one (``subject["kind"] == "ServiceAccount"``): a field of another API type that happens to share a
      kind's plural (a flowcontrol rule's or an audit PolicyRule's ``namespaces``), or that field's value (a
      flowcontrol Subject's kind), or a segment of a path (``rest[0] == "namespaces"``: the URL grammar's
      /namespaces/{ns}/, k8s.io/apiserver's RequestInfoFactory)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = {
                k.value: v
                for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant)
            }
            if isinstance(keys.get("apiVersion"), ast.Constant) and isinstance(
                keys.get("kind"), ast.Constant
            ):
                found.add(id(keys["kind"]))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            found.add(id(node.slice))
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Subscript):
            found.update(id(c) for c in node.comparators if isinstance(c, ast.Constant))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            found.add(id(node.args[0]))
    return found


def test_the_runtime_names_no_shipped_kind() -> None:
    """With no exemption: where kube's generic code takes a kind's names from k8s.io/api (the impersonation
    filter's serviceaccounts and authentication.k8s.io), the layer defining the kinds hands them over.
    Objects and types of fixed APIs named by apiVersion and kind, fields of other API types, and values
    compared with a path's segments pass by the rules of wire_objects_and_fields."""
    names = shipped_names()
    assert {"Namespace", "namespaces", "ConfigMap", "SelfSubjectAccessReview"} <= names
    assert {"serviceaccounts", "authentication.k8s.io"} <= names
    found = []
    for where, tree in modules("apiserver"):
        allowed = docstrings(tree) | wire_objects_and_fields(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value in names
                and id(node) not in allowed
            ):
                found.append(f"{where}:{node.lineno}: {node.value!r}")
    assert found == []


def test_the_rules_tell_wire_objects_and_fields_from_kinds() -> None:
    tree = ast.parse(
        'a = {"apiVersion": "v1", "kind": "ConfigMap"}\n'
        'b = rule.get("namespaces")\n'
        'c = rule["namespaces"]\n'
        'd = {"kind": "ConfigMap"}\n'
        'e = plural == "namespaces"\n'
        'f = subject["kind"] == "ConfigMap"\n'
        'g = rest[0] == "namespaces"\n'
        'h = {"apiVersion": api_version, "kind": kind} in ({"apiVersion": "v1", "kind": "Event"},)\n'
    )
    allowed = wire_objects_and_fields(tree)
    kept = [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and n.value in ("ConfigMap", "namespaces", "Event")
        and id(n) not in allowed
    ]
    assert kept == ["ConfigMap", "namespaces"]  # a kind with no apiVersion; a plural compared


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


def layer_of(package: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if package in layer)


def test_every_runtime_package_has_a_layer() -> None:
    packages = {p.name for p in (ROOT / "apiserver").iterdir() if (p / "__init__.py").exists()}
    placed = {package for layer in LAYERS for package in layer}
    assert packages == placed


def test_the_runtime_imports_only_the_layers_beneath() -> None:
    found = []
    for where, tree in modules("apiserver"):
        parts = Path(where).parts
        if len(parts) < 3:  # apiserver/__init__.py
            continue
        package = parts[1]
        for module in imported(tree):
            target = module.split(".")
            if target[0] != "apiserver" or len(target) < 2 or target[1] == package:
                continue
            if layer_of(target[1]) >= layer_of(package):
                found.append(f"{where}: {module}")
    assert found == []


def test_the_layer_rule_sees_type_only_imports() -> None:
    """A circle closed by an import under ``if TYPE_CHECKING:`` is still a circle: the walk finds it."""
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from apiserver.server.app import APIServer\n"
    )
    assert "apiserver.server.app" in set(imported(tree))


def test_no_runtime_module_imports_itself_round_a_circle() -> None:
    """Within one layer too (the registry's Store, strategies and RESTOptions): kube's Go packages cannot
    import in a circle, and a circle here means no module of it can be understood, or tested, alone."""
    trees = {module_name(where): tree for where, tree in modules("apiserver")}
    assert len(trees) > 100
    assert import_cycle(import_graph(trees)) == []


def test_the_circle_rule_sees_type_only_imports_and_modules_named_from_packages() -> None:
    trees = {
        "apiserver.registry": ast.parse(""),
        "apiserver.registry.store": ast.parse("from apiserver.registry import strategy\n"),
        "apiserver.registry.strategy": ast.parse(
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n"
            "    from apiserver.registry.store import Store\n"
        ),
        "apiserver.registry.keys": ast.parse("import apiserver.registry.store\n"),
    }
    graph = import_graph(trees)
    assert graph["apiserver.registry.store"] == {"apiserver.registry.strategy"}
    assert graph["apiserver.registry.keys"] == {"apiserver.registry.store"}
    assert set(import_cycle(graph)) == {"apiserver.registry.store", "apiserver.registry.strategy"}
    del graph["apiserver.registry.strategy"]
    assert import_cycle(graph) == []
