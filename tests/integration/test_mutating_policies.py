"""MutatingAdmissionPolicy and its binding (admissionregistration.k8s.io/v1beta1) through a real server:
ApplyConfiguration and JSONPatch mutations with ConfigMap params set a default label and replicas on a
CronTab; a policy that does not compile is refused; an expression failing at admission refuses the write
under failurePolicy Fail and is skipped under Ignore; a mutation making an invalid object is a 422 with
nothing stored; kubectl 1.33 lists the policies. The semantics are kube's
(k8s.io/apiserver/pkg/admission/plugin/policy/mutating, KEP-3962)."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import pytest

from tests.integration.test_admission_policies import CONFIGMAPS, CRONTABS, RULES, label
from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import ServerProcess

ADMISSION = "/apis/admissionregistration.k8s.io/v1beta1"
POLICIES = f"{ADMISSION}/mutatingadmissionpolicies"
BINDINGS = f"{ADMISSION}/mutatingadmissionpolicybindings"


def crontab(test: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": f"ct-{uuid.uuid4().hex[:8]}", "labels": {"test": test}},
        "spec": {"cronSpec": "* * * * */5", "image": "busybox", **spec},
    }


def install(
    client: httpx.Client, test: str, mutations: list[dict[str, Any]], params: bool = False,
    **spec: Any,
) -> None:  # fmt: skip
    """A policy on CronTabs labelled test=<test> and its binding (with the ConfigMap <test>-params)."""
    policy: dict[str, Any] = {
        "apiVersion": "admissionregistration.k8s.io/v1beta1",
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": f"{test}-policy"},
        "spec": {
            "matchConstraints": {
                "resourceRules": RULES,
                "objectSelector": {"matchLabels": {"test": test}},
            },
            "mutations": mutations,
            "reinvocationPolicy": "Never",
            **spec,
        },
    }
    binding: dict[str, Any] = {
        "apiVersion": "admissionregistration.k8s.io/v1beta1",
        "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": f"{test}-binding"},
        "spec": {"policyName": f"{test}-policy"},
    }
    if params:
        policy["spec"]["paramKind"] = {"apiVersion": "v1", "kind": "ConfigMap"}
        binding["spec"]["paramRef"] = {
            "name": f"{test}-params",
            "namespace": "default",
            "parameterNotFoundAction": "Deny",
        }
    for url, body in ((POLICIES, policy), (BINDINGS, binding)):
        response = client.post(url, json=body)
        assert response.status_code == 201, response.text


def until_changed(client: httpx.Client, obj: dict[str, Any]) -> httpx.Response:
    """Create ``obj`` once the policy applies to it (dry runs until the answer differs from the plain
    object: the plugin learns of bindings through a watch)."""
    deadline = time.monotonic() + 10
    while True:
        response = client.post(CRONTABS, params={"dryRun": "All"}, json=obj)
        if response.status_code != 201 or response.json()["spec"] != obj["spec"]:
            return client.post(CRONTABS, json=obj)
        assert time.monotonic() < deadline, "the policy never applied"
        time.sleep(0.02)


def params(client: httpx.Client, test: str, data: dict[str, str]) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{test}-params"}}
    assert client.post(CONFIGMAPS, json={**body, "data": data}).status_code == 201


def test_apply_configuration_with_params_sets_label_and_replicas(client: httpx.Client) -> None:
    test = label()
    params(client, test, {"team": "blue", "replicas": "3"})
    expression = (
        "Object{metadata: Object.metadata{labels: {'team': params.data.team}}, "
        "spec: Object.spec{replicas: int(params.data.replicas)}}"
    )
    install(
        client, test, [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expression}}],
        params=True,
    )  # fmt: skip
    response = until_changed(client, crontab(test, replicas=1))
    assert response.status_code == 201, response.text
    stored = client.get(f"{CRONTABS}/{response.json()['metadata']['name']}").json()
    assert stored["metadata"]["labels"] == {"test": test, "team": "blue"}  # merged, not replaced
    assert stored["spec"]["replicas"] == 3


def test_json_patch_with_escaped_key_and_a_variable(client: httpx.Client) -> None:
    test = label()
    params(client, test, {"owner": "platform"})
    expression = (
        "[JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey('example.com/owner'),"
        " value: variables.owner},"
        " JSONPatch{op: 'add', path: '/spec/replicas', value: 2}]"
    )
    install(
        client, test, [{"patchType": "JSONPatch", "jsonPatch": {"expression": expression}}],
        params=True, variables=[{"name": "owner", "expression": "params.data.owner"}],
    )  # fmt: skip
    response = until_changed(client, crontab(test))
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["metadata"]["labels"]["example.com/owner"] == "platform"
    assert created["spec"]["replicas"] == 2


def test_expression_that_does_not_compile_is_refused(client: httpx.Client) -> None:
    bad = {"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: 'add',"}}
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1beta1",
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": f"{label()}-bad"},
        "spec": {"matchConstraints": {"resourceRules": RULES}, "mutations": [bad]},
    }
    response = client.post(POLICIES, json=body)
    assert response.status_code == 422, response.text
    fields = {c["field"]: c["message"] for c in response.json()["details"]["causes"]}
    assert fields["spec.mutations[0].jsonPatch.expression"].startswith("Invalid value: ")
    assert "compilation failed: " in fields["spec.mutations[0].jsonPatch.expression"]
    assert fields["spec.reinvocationPolicy"] == "Required value"


@pytest.mark.parametrize("failure_policy", ["Fail", "Ignore"])
def test_failing_expression_under_the_failure_policy(
    client: httpx.Client, failure_policy: str
) -> None:
    test = label()
    expression = "Object{spec: Object.spec{replicas: object.spec.missing}}"
    ignored = {"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: 'add', path: '/spec/replicas', value: 7}]"}}  # fmt: skip
    install(
        client, test,
        [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expression}}, ignored],
        failurePolicy=failure_policy,
    )  # fmt: skip
    ct = crontab(test, replicas=1)
    if failure_policy == "Ignore":
        # a second policy installed after it: once that one applies, the plugin knows the first
        marker = f"{test}m"
        ct["metadata"]["labels"]["marker"] = marker
        install(
            client, marker,
            [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{spec: Object.spec{image: 'marked'}}"}}],
            matchConstraints={"resourceRules": RULES, "objectSelector": {"matchLabels": {"marker": marker}}},
        )  # fmt: skip
        response = until_changed(client, ct)
        assert response.status_code == 201, response.text
        assert response.json()["spec"]["image"] == "marked"
        # the failing mutation is skipped and the next one runs (kube's dispatcher continues)
        assert response.json()["spec"]["replicas"] == 7
        return
    deadline = time.monotonic() + 10
    while (response := client.post(CRONTABS, json=ct)).status_code == 201:
        client.delete(f"{CRONTABS}/{ct['metadata']['name']}")
        assert time.monotonic() < deadline, "the policy never applied"
        time.sleep(0.05)
    # kube's generic policy dispatcher: NewForbidden (403) whose message is the policy error's, with
    # its reason (Invalid for an evaluation error) and every error a cause
    assert response.status_code == 403, response.text
    status = response.json()
    assert status["reason"] == "Invalid"
    assert status["message"].startswith(
        f"policy '{test}-policy' with binding '{test}-binding' denied request: expression "
        f"'{expression}' resulted in error: "
    )
    assert status["details"] == {
        "name": ct["metadata"]["name"],
        "group": "stable.example.com",
        "kind": "crontabs",
        "causes": [{"message": status["message"]}],
    }
    assert client.get(f"{CRONTABS}/{ct['metadata']['name']}").status_code == 404


def test_mutation_making_an_invalid_object_is_refused_and_nothing_stored(
    client: httpx.Client,
) -> None:
    test = label()
    expression = "[JSONPatch{op: 'replace', path: '/spec/replicas', value: 'many'}]"
    install(client, test, [{"patchType": "JSONPatch", "jsonPatch": {"expression": expression}}])
    ct = crontab(test, replicas=1)
    response = until_changed(client, ct)
    assert response.status_code == 422, response.text
    causes = response.json()["details"]["causes"]
    # the schema's cause and the scale path's (customresource validateScaleSpec reads replicas as an int64)
    assert [c["field"] for c in causes] == ["spec.replicas", ".spec.replicas"]
    assert client.get(f"{CRONTABS}/{ct['metadata']['name']}").status_code == 404


def test_kubectl_lists_mutating_policies(
    client: httpx.Client, server: ServerProcess, tmp_path_factory: pytest.TempPathFactory
) -> None:
    test = label()
    expression = "Object{spec: Object.spec{replicas: 1}}"
    install(client, test, [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expression}}])  # fmt: skip
    kubectl = Kubectl(kubectl_binary(33), server.kubeconfig, tmp_path_factory.mktemp("kubectl"))
    policies = kubectl.run("get", "mutatingadmissionpolicies", "-o", "name").stdout
    assert f"mutatingadmissionpolicy.admissionregistration.k8s.io/{test}-policy" in policies.split()
    # kube's printer columns (pkg/printers/internalversion/printers.go, AddHandlers: the
    # MutatingAdmissionPolicyBinding's PolicyName and ParamRef), as the oracle's kubectl shows them
    bindings = kubectl.run("get", "mutatingadmissionpolicybindings").stdout
    assert bindings.splitlines()[0].split() == ["NAME", "POLICYNAME", "PARAMREF", "AGE"]
    row = next(line.split() for line in bindings.splitlines() if line.startswith(f"{test}-binding"))
    assert row[1:3] == [f"{test}-policy", "<unset>"]


def test_reinvocation_if_needed_sees_a_later_policys_change(client: httpx.Client) -> None:
    test = label()
    copy = "Object{metadata: Object.metadata{labels: {'image': object.spec.image}}}"
    install(
        client, test, [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": copy}}],
        reinvocationPolicy="IfNeeded",
    )  # fmt: skip
    change = "[JSONPatch{op: 'replace', path: '/spec/image', value: 'nginx'}]"
    install(
        client, f"{test}b", [{"patchType": "JSONPatch", "jsonPatch": {"expression": change}}],
        matchConstraints={"resourceRules": RULES, "objectSelector": {"matchLabels": {"test": test}}},
    )  # fmt: skip
    response = until_changed(client, crontab(test))  # the second binding runs after the first
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["spec"]["image"] == "nginx"
    assert created["metadata"]["labels"]["image"] == "nginx"  # the first ran again


@pytest.mark.parametrize(
    ("mutations", "spec", "code", "wanted"),
    [
        ("x", {}, 400, "cannot be handled as a MutatingAdmissionPolicy"),  # wrong type
        ([1], {}, 400, "cannot be handled as a MutatingAdmissionPolicy"),
        (
            [{"patchType": "JSONPatch", "jsonPatch": {"expression": 5}}],
            {},
            400,
            "cannot be handled as a MutatingAdmissionPolicy",
        ),
        ([{"patchType": "Bogus"}], {}, 422, "spec.mutations[0].patchType"),
        (  # too deep for the parser: refused, not a crash
            [{"patchType": "JSONPatch", "jsonPatch": {"expression": "[" * 5000 + "]" * 5000}}],
            {},
            422,
            "spec.mutations[0].jsonPatch.expression",
        ),
        (
            [{"patchType": "JSONPatch", "jsonPatch": {"expression": "[]"}}],
            {"reinvocationPolicy": "Sometimes"},
            422,
            "spec.reinvocationPolicy",
        ),
    ],
)
def test_malformed_policies_are_refused_with_kubes_status(
    client: httpx.Client, mutations: Any, spec: dict[str, Any], code: int, wanted: str
) -> None:
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1beta1",
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": f"bad-{uuid.uuid4().hex[:8]}"},
        "spec": {
            "matchConstraints": {"resourceRules": RULES},
            "mutations": mutations,
            "reinvocationPolicy": "Never",
            **spec,
        },
    }
    response = client.post(POLICIES, json=body)
    assert response.status_code == code, response.text
    assert response.json()["kind"] == "Status"
    assert wanted in response.text
    assert client.get(f"{POLICIES}/{body['metadata']['name']}").status_code == 404
