"""The built-in kinds ship with apiforge (builtin/definitions) and every project gets them, as every
kube-apiserver serves its own kinds: an empty project still has namespaces, and a project cannot define a
built-in kind again."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.definition import DefinitionErrors
from generator.load import builtin_definitions, load_checked


def test_an_empty_project_has_the_built_in_kinds(tmp_path: Path) -> None:
    kinds = {(d.group, d.kind) for d in load_checked(tmp_path)}
    assert {
        ("", "Namespace"),
        ("", "ConfigMap"),
        ("", "Secret"),
        ("", "Service"),
        ("", "Event"),
    } <= kinds
    assert ("authorization.k8s.io", "SelfSubjectAccessReview") in kinds
    assert {("", "ServiceAccount"), ("authentication.k8s.io", "TokenRequest")} <= kinds
    assert all(d.server.builtin for d in load_checked(tmp_path))


def test_a_project_cannot_define_a_built_in_kind_again(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "configmap.yaml").write_text(
        "group: core\nkind: ConfigMap\nversions:\n  v1:\n    schema: {data: object}\n"
    )
    with pytest.raises(DefinitionErrors) as failure:
        load_checked(tmp_path)
    errors = failure.value.errors
    assert {error.file for error in errors} == {tmp_path / "core" / "configmap.yaml"}
    messages = [error.message for error in errors]
    assert any(
        'kind "ConfigMap" of group core is already claimed by ConfigMap' in m for m in messages
    )
    assert all(str(builtin_definitions() / "core" / "configmap.yaml") in m for m in messages)


@pytest.mark.parametrize(
    ("extra", "path", "message"),
    [
        ("strategy: not a reference\n", "strategy", 'must be a "package.module:Name" reference'),
        ("admission: ['mod:']\n", "admission[0]", 'must be a "package.module:Name" reference'),
        ("controllers: ['a.b:C\\nD']\n", "controllers[0]", 'must be a "package.module:Name"'),
        ("verbs: [create, explode]\n", "verbs[1]", '"explode" is not a verb'),
        ("verbs: create\n", "verbs", "expected"),
        ("builtin: maybe\n", "builtin", "expected"),
        ("authenticators: [nope]\n", "authenticators[0]", 'must be a "package.module:Name"'),
        ("standalone: sometimes\n", "standalone", "expected"),
        (
            "createSubresources: {token: {apiVersion: authentication.k8s.io/v1, kind: Nope,"
            " handler: 'a.b:C'}}\n",
            "createSubresources.token.kind",
            "no definition of Nope in authentication.k8s.io/v1",
        ),
        (
            "createSubresources: {status: {apiVersion: authentication.k8s.io/v1,"
            " kind: TokenRequest, handler: 'a.b:C'}}\n",
            "createSubresources.status",
            '"status" cannot name a subresource answered by a handler',
        ),
        (
            "createSubresources: {token: {apiVersion: authentication.k8s.io/v1,"
            " kind: TokenRequest, handler: 'not one'}}\n",
            "createSubresources.token.handler",
            'must be a "package.module:Name" reference',
        ),
        (
            "createSubresources: {token: {apiVersion: v1, kind: TokenRequest}}\n",
            "createSubresources.token.handler",
            "required key is missing",
        ),
    ],
)
def test_malformed_server_parts_fail_generation_at_their_line(
    tmp_path: Path, extra: str, path: str, message: str
) -> None:
    (tmp_path / "g.example.com").mkdir()
    (tmp_path / "g.example.com" / "gadget.yaml").write_text(
        "group: g.example.com\nkind: Gadget\n"
        + extra
        + "versions:\n  v1:\n    schema: {spec: object}\n"
    )
    with pytest.raises(DefinitionErrors) as failure:
        load_checked(tmp_path)
    [error] = failure.value.errors
    assert error.file == tmp_path / "g.example.com" / "gadget.yaml"
    assert error.line == 3 and error.field_path == path
    assert message in error.message
