"""ValidatingAdmissionPolicy and its binding through a real server with an audit log: a policy with
ConfigMap params denies a CronTab with too many replicas with kube's message and status (422 Invalid,
admission.NewForbidden's wording); Warn and Audit actions give a Warning header and the
validation.policy.admission.k8s.io/validation_failure annotation; params not found, policies that do not
compile or fail to evaluate, failurePolicy Ignore, variables, namespaceObject, authorizer and the type
checking reported in status (k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.auditlog import audited_server
from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import REPO, ServerProcess

ADMISSION = "/apis/admissionregistration.k8s.io/v1"
POLICIES = f"{ADMISSION}/validatingadmissionpolicies"
BINDINGS = f"{ADMISSION}/validatingadmissionpolicybindings"
CRONTABS = "/apis/stable.example.com/v1/namespaces/default/crontabs"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
RULES = [
    {
        "apiGroups": ["stable.example.com"],
        "apiVersions": ["v1"],
        "operations": ["CREATE", "UPDATE"],
        "resources": ["crontabs"],
    }
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    work = tmp_path_factory.mktemp("vap")
    with audited_server(
        work,
        "--audit-policy-file",
        str(REPO / "docs" / "audit-policy.yaml"),
        "--audit-log-path",
        str(work / "audit.log"),
    ) as process:
        yield process


def crontab(label: str, replicas: int, name: str = "") -> dict[str, Any]:
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name or f"ct-{uuid.uuid4().hex[:8]}", "labels": {"test": label}},
        "spec": {"cronSpec": "* * * * */5", "image": "busybox", "replicas": replicas},
    }


def policy(client: httpx.Client, label: str, **spec: Any) -> str:
    """A policy on CronTabs labelled test=<label>; returns its name."""
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": f"{label}-policy"},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": RULES,
                "objectSelector": {"matchLabels": {"test": label}},
            },
            **spec,
        },
    }
    response = client.post(POLICIES, json=body)
    assert response.status_code == 201, response.text
    return f"{label}-policy"


def bind(client: httpx.Client, label: str, actions: list[str], **spec: Any) -> str:
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": f"{label}-binding"},
        "spec": {"policyName": f"{label}-policy", "validationActions": actions, **spec},
    }
    response = client.post(BINDINGS, json=body)
    assert response.status_code == 201, response.text
    return f"{label}-binding"


def until_refused(client: httpx.Client, obj: dict[str, Any]) -> httpx.Response:
    """Create ``obj`` until the server refuses it (the plugin learns of bindings through a watch)."""
    deadline = time.monotonic() + 10
    while True:
        response = client.post(CRONTABS, params={"dryRun": "All"}, json=obj)
        if response.status_code != 201:
            return client.post(CRONTABS, json=obj)
        assert time.monotonic() < deadline, "the policy never applied"
        time.sleep(0.02)


def when_known(client: httpx.Client, test: str) -> None:
    """Return once the plugin knows every policy and binding created so far on objects labelled ``test``.

    It learns of them through one informer per kind, each in the order they were written, so a sentinel policy
    and binding created last, once they deny their probe, vouch for those created before them."""
    sentinel = label()
    probe = f"{test}-probe"
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": f"{sentinel}-policy"},
        "spec": {
            "matchConstraints": {
                "resourceRules": RULES,
                "objectSelector": {"matchLabels": {"test": test}},
            },
            "validations": [
                {"expression": f"object.metadata.name != '{probe}'", "message": "probe"}
            ],
        },
    }
    assert client.post(POLICIES, json=body).status_code == 201
    bind(client, sentinel, ["Deny"])
    response = until_refused(client, crontab(test, 1, name=probe))
    assert response.status_code == 422 and response.json()["message"].endswith(
        "denied request: probe"
    )


def label() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


MAX_REPLICAS = {
    "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
    "validations": [
        {
            "expression": "object.spec.replicas <= int(params.data.maxReplicas)",
            "messageExpression": "'replicas must be at most ' + params.data.maxReplicas",
            "reason": "Invalid",
        }
    ],
}


def test_policy_with_params_denies_too_many_replicas(client: httpx.Client) -> None:
    test = label()
    limits = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{test}-limits"}}
    assert client.post(CONFIGMAPS, json={**limits, "data": {"maxReplicas": "3"}}).status_code == 201
    name = policy(client, test, **MAX_REPLICAS)
    ref = {"name": f"{test}-limits", "namespace": "default", "parameterNotFoundAction": "Deny"}
    binding = bind(client, test, ["Deny"], paramRef=ref)
    ct = crontab(test, 5)
    response = until_refused(client, ct)
    assert response.status_code == 422
    status = response.json()
    denial = f"ValidatingAdmissionPolicy '{name}' with binding '{binding}' denied request: replicas must be at most 3"
    assert status["reason"] == "Invalid"
    assert status["message"] == (
        f'crontabs.stable.example.com "{ct["metadata"]["name"]}" is forbidden: {denial}'
    )
    assert status["details"]["causes"] == [{"message": denial}]  # kube's cause, without a reason
    assert client.post(CRONTABS, json=crontab(test, 3)).status_code == 201


def test_params_not_found_deny_or_allow(client: httpx.Client) -> None:
    test = label()
    name = policy(client, test, **MAX_REPLICAS)
    ref = {"name": "missing", "namespace": "default", "parameterNotFoundAction": "Deny"}
    binding = bind(client, test, ["Deny"], paramRef=ref)
    response = until_refused(client, crontab(test, 1))
    assert response.status_code == 422
    assert response.json()["message"].endswith(
        f"ValidatingAdmissionPolicy '{name}' with binding '{binding}' denied request: failed to "
        "configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
    )
    allowing = label()
    policy(client, allowing, **MAX_REPLICAS)
    bind(client, allowing, ["Deny"], paramRef={**ref, "parameterNotFoundAction": "Allow"})
    when_known(client, allowing)
    assert client.post(CRONTABS, json=crontab(allowing, 100)).status_code == 201


def test_warn_and_audit_actions(client: httpx.Client, server: ServerProcess) -> None:
    test = label()
    name = policy(
        client,
        test,
        validations=[{"expression": "object.spec.replicas < 2", "message": "keep it small"}],
    )
    binding = bind(client, test, ["Warn", "Audit"])
    expected = f"Validation failed for ValidatingAdmissionPolicy '{name}' with binding '{binding}': keep it small"
    deadline = time.monotonic() + 10
    while True:
        ct = crontab(test, 5)
        response = client.post(CRONTABS, json=ct)
        assert response.status_code == 201, response.text
        if "warning" in response.headers:
            break
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert response.headers["warning"] == f'299 - "{expected}"'
    log = server.data_dir.parent / "audit.log"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    created = [
        e
        for e in events
        if e["verb"] == "create" and e.get("objectRef", {}).get("name") == ct["metadata"]["name"]
    ]
    assert created, "no audit event of the create"
    annotation = created[-1]["annotations"]["validation.policy.admission.k8s.io/validation_failure"]
    assert json.loads(annotation) == [
        {
            "message": "keep it small",
            "policy": name,
            "binding": binding,
            "expressionIndex": 0,
            "validationActions": ["Warn", "Audit"],
        }
    ]


def test_variables_namespace_object_and_authorizer(client: httpx.Client) -> None:
    test = label()
    policy(
        client,
        test,
        variables=[{"name": "image", "expression": "object.spec.image"}],
        validations=[
            {"expression": "variables.image != 'forbidden'", "message": "image"},
            {"expression": "namespaceObject.metadata.name == 'default'", "message": "namespace"},
            {
                "expression": "authorizer.group('').resource('secrets').check('delete').allowed()",
                "message": "admins only",
            },
        ],
    )
    bind(client, test, ["Deny"])
    response = until_refused(client, {**crontab(test, 1), "spec": {"image": "forbidden"}})
    assert response.status_code == 422
    assert response.json()["message"].endswith("denied request: image")
    # the admin may delete secrets; the namespace is default: an image allowed passes
    assert client.post(CRONTABS, json=crontab(test, 1)).status_code == 201


def test_evaluation_errors_follow_the_failure_policy(client: httpx.Client) -> None:
    test = label()
    name = policy(client, test, validations=[{"expression": "object.spec.missing > 1"}])
    binding = bind(client, test, ["Deny"])
    response = until_refused(client, crontab(test, 1))
    assert response.status_code == 422
    assert response.json()["message"].endswith(
        f"ValidatingAdmissionPolicy '{name}' with binding '{binding}' denied request: expression "
        "'object.spec.missing > 1' resulted in error: no such key: missing"
    )
    ignoring = label()
    policy(
        client,
        ignoring,
        failurePolicy="Ignore",
        validations=[{"expression": "object.spec.missing > 1"}],
    )
    bind(client, ignoring, ["Deny"])
    when_known(client, ignoring)
    assert client.post(CRONTABS, json=crontab(ignoring, 1)).status_code == 201


def test_policies_that_do_not_compile_are_refused(client: httpx.Client) -> None:
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "broken"},
        "spec": {
            "matchConstraints": {"resourceRules": RULES},
            "validations": [{"expression": "object.spec.(", "reason": "Teapot"}],
        },
    }
    response = client.post(POLICIES, json=body)
    assert response.status_code == 422
    causes = response.json()["details"]["causes"]
    assert [c["field"] for c in causes] == [
        "spec.validations[0].expression",
        "spec.validations[0].reason",
    ]
    assert causes[0]["message"].startswith('Invalid value: "object.spec.(": compilation failed: ')
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "broken"},
        "spec": {"validationActions": ["Deny", "Warn"], "paramRef": {"name": "x", "selector": {}}},
    }
    response = client.post(BINDINGS, json=binding)
    assert response.status_code == 422
    assert [c["field"] for c in response.json()["details"]["causes"]] == [
        "spec.policyName",
        "spec.validationActions",
        "spec.paramRef.name",
        "spec.paramRef.parameterNotFoundAction",
    ]


def test_type_checking_is_reported_in_status(client: httpx.Client) -> None:
    """As the Kubernetes docs show it (reference/access-authn-authz/validating-admission-policy, "Type
    checking": ``<input>:1:7: undefined field 'replicas'`` under ``object.replicas > 1``, the caret at the
    dot that selects the field)."""
    test = label()
    name = policy(client, test, validations=[{"expression": "object.spec.replicaz > 1"}])
    deadline = time.monotonic() + 10
    while True:
        checked = client.get(f"{POLICIES}/{name}").json()
        status = checked.get("status") or {}
        if status.get("observedGeneration") == 1:
            break
        assert time.monotonic() < deadline, status
        time.sleep(0.02)
    # written as kube's controller applies it: its own manager owns the status it wrote
    # (pkg/controller/validatingadmissionpolicystatus/controller.go: ApplyStatus, Force)
    [owner] = [e for e in checked["metadata"]["managedFields"] if e.get("subresource") == "status"]
    assert (owner["manager"], owner["operation"]) == ("validatingadmissionpolicy-status", "Apply")
    assert owner["fieldsV1"]["f:status"] == {
        "f:observedGeneration": {},
        "f:typeChecking": {"f:expressionWarnings": {}},
    }
    assert status["typeChecking"]["expressionWarnings"] == [
        {
            "fieldRef": "spec.validations[0].expression",
            "warning": "stable.example.com/v1, Kind=CronTab: ERROR: <input>:1:12: undefined field "
            "'replicaz'\n | object.spec.replicaz > 1\n | ...........^",
        }
    ]


def test_kubectl_applies_a_policy_and_prints_kubes_denial(
    server: ServerProcess, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The example of docs/admission.md through kubectl 1.33: kubectl prints the 422 as the Kubernetes docs
    show it (validating-admission-policy: `The deployments "nginx" is invalid: : ValidatingAdmissionPolicy
    'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: ...`)."""
    kubectl = Kubectl(
        kubectl_binary(33), server.kubeconfig, tmp_path_factory.mktemp("kubectl"), "default"
    )
    documented = (REPO / "docs" / "admission.md").read_text()
    manifest = documented.split("```yaml\n")[1].split("```")[0]
    kubectl.run("create", "configmap", "limits", "--from-literal=maxReplicas=3")
    kubectl.run("apply", "-f", "-", stdin=manifest)
    listed = kubectl.run("get", "validatingadmissionpolicies", "max-replicas", "-o", "name")
    assert (
        listed.stdout.strip()
        == "validatingadmissionpolicy.admissionregistration.k8s.io/max-replicas"
    )
    ct = crontab("documented", 5, name="too-many")
    deadline = time.monotonic() + 10
    while True:
        result = kubectl.run("create", "-f", "-", stdin=json.dumps(ct), check=False)
        if result.returncode != 0 or time.monotonic() > deadline:
            break
        kubectl.run("delete", "crontab", "too-many")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'The crontabs "too-many" is invalid: : ValidatingAdmissionPolicy '
        "'max-replicas' with binding 'max-replicas' denied request: replicas must be at most 3"
    )


def test_format_library_denies_with_kubes_message(client: httpx.Client) -> None:
    """kube's format library (format.go) in a policy: the message is format's own."""
    test = label()
    name = policy(
        client,
        test,
        validations=[
            {
                "expression": "!format.dns1035Label().validate(object.metadata.name).hasValue()",
                "messageExpression": "format.dns1035Label().validate(object.metadata.name).value()[0]",
            }
        ],
    )
    binding = bind(client, test, ["Deny"])
    response = until_refused(client, crontab(test, 1, name="1-starts-with-a-digit"))
    assert response.status_code == 422
    assert response.json()["message"].endswith(
        f"ValidatingAdmissionPolicy '{name}' with binding '{binding}' denied request: a DNS-1035 label "
        "must consist of lower case alphanumeric characters or '-', start with an alphabetic character, "
        "and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    )
    assert (
        client.post(CRONTABS, json=crontab(test, 1, name="starts-with-a-letter")).status_code == 201
    )
