"""`--audit-policy-file` read as kube-apiserver reads it (k8s.io/apiserver pkg/audit/policy/reader.go and
pkg/apis/audit/validation): YAML or JSON, audit.k8s.io/v1 only, kube's validation messages, the file named in
every refusal, an unknown field only a warning; and the policy shipped in docs/ as an example."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest

from apiserver.audit.event import Level, Stage
from apiserver.audit.policy import AuditConfig
from apiserver.audit.policyfile import PolicyFileError, load_policy, load_policy_file
from apiserver.authentication.user import UserInfo
from apiserver.authorization.authorizer import Attributes

REPO = Path(__file__).resolve().parents[3]
ALICE = UserInfo("alice", groups=("devs", "system:authenticated"))
HEAD = "apiVersion: audit.k8s.io/v1\nkind: Policy\n"


def secret(verb: str) -> Attributes:
    return Attributes(ALICE, verb, True, "default", "", "v1", "secrets", "", "token")


def test_yaml_and_json_give_the_same_policy() -> None:
    document = {
        "apiVersion": "audit.k8s.io/v1",
        "kind": "Policy",
        "omitStages": ["RequestReceived"],
        "rules": [
            {"level": "None", "users": ["system:kube-proxy"]},
            {
                "level": "Request",
                "verbs": ["create", "update"],
                "resources": [{"group": "", "resources": ["configmaps"]}],
                "namespaces": ["kube-system"],
                "omitManagedFields": True,
            },
            {"level": "Metadata"},
        ],
    }
    yaml_text = (
        HEAD
        + "omitStages: [RequestReceived]\nrules:\n"
        + "- level: None\n  users: [system:kube-proxy]\n"
        + "- level: Request\n  verbs: [create, update]\n"
        + '  resources: [{group: "", resources: [configmaps]}]\n'
        + "  namespaces: [kube-system]\n  omitManagedFields: true\n"
        + "- level: Metadata\n"
    )
    for policy in (load_policy(json.dumps(document).encode()), load_policy(yaml_text.encode())):
        write = Attributes(ALICE, "create", True, "kube-system", "", "v1", "configmaps")
        assert policy.evaluate(write) == AuditConfig(
            Level.REQUEST, frozenset({Stage.REQUEST_RECEIVED}), True
        )
        assert policy.evaluate(write._replace(namespace="default")).level is Level.METADATA
        proxy = write._replace(user=UserInfo("system:kube-proxy"))
        assert policy.evaluate(proxy).level is Level.NONE


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rules: [{level: Metadata}]\n", "failed decoding: Object 'Kind' is missing"),
        (
            "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: Metadata}]\n",
            'failed decoding: no kind "Policy" is registered for version "audit.k8s.io/v1beta1"',
        ),
        (HEAD, "loaded illegal policy with 0 rules"),
        (HEAD + "rules: []\n", "loaded illegal policy with 0 rules"),
        (HEAD + "rules: [{verbs: [get]}]\n", "rules[0].level: Required value"),
        (
            HEAD + "rules: [{level: Everything}]\n",
            'rules[0].level: Unsupported value: "Everything": supported values: "Metadata",'
            ' "None", "Request", "RequestResponse"',
        ),
        (
            HEAD + "rules: [{level: None, users: alice}]\n",
            "failed decoding: json: cannot unmarshal string into Go struct field"
            " PolicyRule.rules.users of type []string",
        ),
        (
            HEAD + "rules: [{level: None, omitManagedFields: 'yes'}]\n",
            "failed decoding: json: cannot unmarshal string into Go struct field"
            " PolicyRule.rules.omitManagedFields of type bool",
        ),
        (
            HEAD + "rules: [{level: None, nonResourceURLs: [healthz]}]\n",
            'rules[0].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules must'
            " begin with a '/' character",
        ),
        (
            HEAD + "rules: [{level: None, nonResourceURLs: ['/a*b']}]\n",
            'rules[0].nonResourceURLs[0]: Invalid value: "/a*b": non-resource URL wildcards'
            " '*' must be the final character of the rule",
        ),
        (
            HEAD + "rules: [{level: None, nonResourceURLs: [/x], namespaces: [a]}]\n",
            'rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both'
            " regular resources and non-resource URLs",
        ),
        (
            HEAD + "rules: [{level: None, resources: [{group: '', resourceNames: [a]}]}]\n",
            'rules[0].resources.resourceNames: Invalid value: []string{"a"}: using resourceNames'
            " requires at least one resource",
        ),
        (
            HEAD + "rules: [{level: None, resources: [{group: rbac/v1, resources: [roles]}]}]\n",
            'rules[0].resources.group: Invalid value: "rbac/v1": a lowercase RFC 1123 subdomain',
        ),
        (
            HEAD + "omitStages: [Done]\nrules: [{level: None, omitStages: [Started]}]\n",
            '[omitStages[0]: Invalid value: "Done": allowed stages are'
            " RequestReceived,ResponseStarted,ResponseComplete,Panic, rules[0].omitStages[0]:"
            ' Invalid value: "Started": allowed stages are',
        ),
        ("{rules: [", "failed decoding: "),
    ],
)
def test_a_broken_policy_is_refused_with_kube_s_words(text: str, message: str) -> None:
    with pytest.raises(PolicyFileError) as refused:
        load_policy(text.encode())
    assert str(refused.value).startswith(message)


def test_the_file_is_named_in_every_refusal(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(HEAD)
    with pytest.raises(
        PolicyFileError,
        match=f"^loaded illegal policy with 0 rules: from file {re.escape(str(path))}$",
    ):
        load_policy_file(str(path))
    with pytest.raises(PolicyFileError, match=r"^failed to read file path .*missing\.yaml"):
        load_policy_file(str(tmp_path / "missing.yaml"))


def test_an_unknown_field_is_a_warning_only(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        policy = load_policy((HEAD + "rules: [{level: Metadata, verb: [get]}]\n").encode())
    assert policy.evaluate(secret("delete")).level is Level.METADATA
    assert 'unknown field "rules[0].verb"' in caplog.text
    assert "falling back to lenient decoding" in caplog.text


def test_the_example_policy_keeps_secret_contents_out() -> None:
    """docs/audit-policy.yaml: Kubernetes' advice, secrets at Metadata whatever the verb."""
    policy = load_policy_file(str(REPO / "docs" / "audit-policy.yaml"))
    for verb in ("create", "update", "patch", "get", "list", "delete"):
        config = policy.evaluate(secret(verb))
        assert config.level is Level.METADATA
        assert Stage.REQUEST_RECEIVED in config.omit_stages
    token = Attributes(ALICE, "create", True, "default", "", "v1", "serviceaccounts", "token", "x")
    assert policy.evaluate(token).level is Level.METADATA
    write = Attributes(ALICE, "create", True, "default", "apps", "v1", "deployments")
    assert policy.evaluate(write) == AuditConfig(
        Level.REQUEST_RESPONSE, frozenset({Stage.REQUEST_RECEIVED}), True
    )
    probe = Attributes(ALICE, "get", False, path="/readyz/etcd")
    assert policy.evaluate(probe).level is Level.NONE
