"""Which writes policies, policy bindings and webhooks apply to, through a real server (the matcher of
k8s.io/apiserver/pkg/admission/plugin/policy/matching and webhook/predicates): a deny-all
ValidatingAdmissionPolicy and a labelling MutatingAdmissionPolicy bound with each binding shape of kube's
documentation (namespaceSelector only, objectSelector only, ``{}``, no matchResources) apply where the
binding selects and nowhere else; exclusions and resource rules in a binding narrow; a webhook's
namespaceSelector on Namespace objects reads their own labels; under ``matchPolicy: Equivalent`` a core
Event is seen by a policy and a webhook on events.k8s.io as an events.k8s.io/v1 Event (``note``, not
``message``), and not at all under ``Exact``; kubectl's own writes are judged the same way."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import ServerProcess
from tests.webhookserver import WebhookServer, wait_for, webhook_server

ADMISSION = "/apis/admissionregistration.k8s.io"
CONFIGMAP_RULES = [
    {
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "operations": ["CREATE"],
        "resources": ["configmaps"],
    }
]


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebhookServer]:
    with webhook_server(tmp_path_factory.mktemp("webhook")) as server:
        yield server


def unique() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


def created(client: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(path, json=body)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def namespace(client: httpx.Client, **labels: str) -> str:
    name = unique()
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}
    created(client, "/api/v1/namespaces", body)
    return name


def configmap(name: str = "", **labels: str) -> dict[str, Any]:
    metadata = {"name": name or unique(), "labels": labels}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {"k": "v"}}


def write(client: httpx.Client, ns: str, obj: dict[str, Any], dry: bool = False) -> httpx.Response:
    params = {"dryRun": "All"} if dry else {}
    return client.post(f"/api/v1/namespaces/{ns}/configmaps", params=params, json=obj)


def until(condition: Callable[[], bool]) -> None:
    """The plugins learn of policies and bindings through a watch: dry runs until ``condition``."""
    wait_for(condition, timeout=10)


def validating(
    client: httpx.Client, test: str, match_resources: Any, bound: bool = True, **constraints: Any
) -> None:
    """A deny-all policy on ConfigMap creates (labelled suite=<test>: each test's own) and (``bound``)
    its binding."""
    match = {"resourceRules": CONFIGMAP_RULES, **constraints}
    match.setdefault("objectSelector", {"matchLabels": {"suite": test}})
    created(client, f"{ADMISSION}/v1/validatingadmissionpolicies", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": test},
        "spec": {"matchConstraints": match, "validations": [{"expression": "false", "message": "no"}]},
    })  # fmt: skip
    if not bound:
        return
    spec: dict[str, Any] = {"policyName": test, "validationActions": ["Deny"]}
    if match_resources is not None:
        spec["matchResources"] = match_resources
    created(client, f"{ADMISSION}/v1/validatingadmissionpolicybindings", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": test}, "spec": spec,
    })  # fmt: skip


def mutating(client: httpx.Client, test: str, match_resources: Any) -> None:
    """A policy labelling ConfigMaps (labelled suite=<test>) mutated=<test>, and its binding."""
    expression = f"Object{{metadata: Object.metadata{{labels: {{'mutated': '{test}'}}}}}}"
    created(client, f"{ADMISSION}/v1beta1/mutatingadmissionpolicies", {
        "apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": test},
        "spec": {
            "matchConstraints": {
                "resourceRules": CONFIGMAP_RULES, "objectSelector": {"matchLabels": {"suite": test}},
            },
            "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expression}}],
            "reinvocationPolicy": "Never",
        },
    })  # fmt: skip
    spec: dict[str, Any] = {"policyName": test}
    if match_resources is not None:
        spec["matchResources"] = match_resources
    created(client, f"{ADMISSION}/v1beta1/mutatingadmissionpolicybindings", {
        "apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": test}, "spec": spec,
    })  # fmt: skip


# Each shape: the binding's matchResources (built from the test's label and a namespace labelled with it),
# and the writes (namespace labelled?, object labelled tier=<test>?) it selects and those it does not.
SHAPES = [
    pytest.param(lambda t: {"namespaceSelector": {"matchLabels": {"env": t}}}, [(True, False)], [(False, False)], id="namespaceSelector only"),
    pytest.param(lambda t: {"objectSelector": {"matchLabels": {"tier": t}}}, [(False, True)], [(False, False)], id="objectSelector only"),
    pytest.param(lambda t: {}, [(False, False), (True, True)], [], id="empty matchResources"),
    pytest.param(lambda t: None, [(False, False), (True, True)], [], id="no matchResources"),
    pytest.param(lambda t: {"resourceRules": CONFIGMAP_RULES, "namespaceSelector": {"matchLabels": {"env": t}}}, [(True, False)], [(False, False)], id="resourceRules and namespaceSelector"),
    pytest.param(lambda t: {"resourceRules": [{**CONFIGMAP_RULES[0], "resources": ["secrets"]}]}, [], [(False, False), (True, True)], id="resourceRules on another resource"),
    pytest.param(lambda t: {"excludeResourceRules": CONFIGMAP_RULES}, [], [(False, False), (True, True)], id="excludeResourceRules only"),
]  # fmt: skip


def scene(client: httpx.Client, test: str) -> Callable[[bool, bool], tuple[str, dict[str, Any]]]:
    """Where and what to write: in a namespace labelled env=<test> or not, an object labelled
    tier=<test> or not (always suite=<test>, what the test's policy matches)."""
    labelled, plain = namespace(client, env=test), namespace(client)

    def case(in_labelled: bool, tiered: bool) -> tuple[str, dict[str, Any]]:
        labels = {"suite": test, **({"tier": test} if tiered else {})}
        return (labelled if in_labelled else plain), configmap(**labels)

    return case


@pytest.mark.parametrize(("shape", "selected", "spared"), SHAPES)
def test_deny_all_validating_policy_per_binding_shape(
    client: httpx.Client, shape: Callable[[str], Any], selected: list[Any], spared: list[Any]
) -> None:
    test = unique()
    case = scene(client, test)
    validating(client, test, shape(test))
    known = (
        unique()
    )  # a second policy and binding, created last, known to the plugin once it denies
    validating(client, known, None)
    ns, probe = case(False, False)
    probe["metadata"]["labels"] = {"suite": known}
    until(lambda: write(client, ns, probe, dry=True).status_code == 422)
    for in_labelled, tiered in selected:
        response = write(client, *case(in_labelled, tiered))
        assert response.status_code == 422, response.text
        assert response.json()["message"].endswith(
            f"ValidatingAdmissionPolicy '{test}' with binding '{test}' denied request: no"
        )
    for in_labelled, tiered in spared:
        response = write(client, *case(in_labelled, tiered))
        assert response.status_code == 201, response.text


@pytest.mark.parametrize(("shape", "selected", "spared"), SHAPES)
def test_mutating_policy_per_binding_shape(
    client: httpx.Client, shape: Callable[[str], Any], selected: list[Any], spared: list[Any]
) -> None:
    test = unique()
    case = scene(client, test)
    mutating(client, test, shape(test))
    known = unique()
    mutating(client, known, None)
    ns, probe = case(False, False)
    probe["metadata"]["labels"] = {"suite": known}
    until(lambda: "mutated" in write(client, ns, probe, dry=True).json()["metadata"]["labels"])
    for cases, mutated in ((selected, True), (spared, False)):
        for in_labelled, tiered in cases:
            response = write(client, *case(in_labelled, tiered))
            assert response.status_code == 201, response.text
            assert (response.json()["metadata"]["labels"].get("mutated") == test) is mutated


def webhook_configuration(
    client: httpx.Client, hooks: WebhookServer, test: str, path: str, rules: list[dict[str, Any]],
    **options: Any,
) -> None:  # fmt: skip
    """A ValidatingWebhookConfiguration of one webhook, answering at ``path`` of the test's webhook."""
    created(client, f"{ADMISSION}/v1/validatingwebhookconfigurations", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": test},
        "webhooks": [{
            "name": f"{test}.hooks.example.com", "rules": rules, "sideEffects": "None",
            "clientConfig": {"url": hooks.url(path), "caBundle": hooks.ca_bundle},
            "admissionReviewVersions": ["v1"], **options,
        }],
    })  # fmt: skip


def recorded(hooks: WebhookServer, path: str) -> list[dict[str, Any]]:
    """Answer ``path`` with an allow and keep the requests it is sent."""
    requests: list[dict[str, Any]] = []
    hooks.answers[path] = lambda request: requests.append(request) or {"allowed": True}
    return requests


def test_webhook_namespace_selector_on_namespaces_reads_their_own_labels(
    client: httpx.Client, hooks: WebhookServer
) -> None:
    """kube's GetNamespaceLabels: the new object's labels on create and update, the stored one's on
    delete (so relabelling a namespace out of the selector lets it go)."""
    test = unique()
    kept = namespace(client, team=test)
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["namespaces"],
              "operations": ["CREATE", "UPDATE", "DELETE"]}]  # fmt: skip
    webhook_configuration(
        client, hooks, test, "/deny", rules, namespaceSelector={"matchLabels": {"team": test}}
    )
    labelled = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"labels": {"team": test}}}
    labelled["metadata"]["name"] = unique()
    dry = {"dryRun": "All"}
    until(lambda: client.post("/api/v1/namespaces", params=dry, json=labelled).status_code == 403)
    assert client.post("/api/v1/namespaces", json=labelled).status_code == 403
    assert namespace(client, team="other")
    refused = client.delete(f"/api/v1/namespaces/{kept}")
    assert refused.status_code == 403, refused.text
    assert refused.json()["message"] == (
        f'admission webhook "{test}.hooks.example.com" denied the request: no crontabs on mondays'
    )
    relabel = client.patch(
        f"/api/v1/namespaces/{kept}",
        json={"metadata": {"labels": {"team": "other"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert relabel.status_code == 200, relabel.text
    assert client.delete(f"/api/v1/namespaces/{kept}").status_code == 200


def test_webhook_object_selector_reads_the_old_object_on_delete(
    client: httpx.Client, hooks: WebhookServer
) -> None:
    test = unique()
    ns = namespace(client)
    tiered, plain = configmap(tier=test), configmap()
    for obj in (tiered, plain):
        assert write(client, ns, obj).status_code == 201
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
              "operations": ["CREATE", "DELETE"]}]  # fmt: skip
    webhook_configuration(
        client, hooks, test, "/deny", rules, objectSelector={"matchLabels": {"tier": test}}
    )
    until(lambda: write(client, ns, configmap(tier=test), dry=True).status_code == 403)
    path = f"/api/v1/namespaces/{ns}/configmaps"
    assert client.delete(f"{path}/{tiered['metadata']['name']}").status_code == 403
    assert client.delete(f"{path}/{plain['metadata']['name']}").status_code == 200


def core_event(ns: str, message: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": unique(), "labels": labels},
        "involvedObject": {"kind": "ConfigMap", "name": "cm", "namespace": ns},
        "reason": "Tested", "message": message, "type": "Normal",
    }  # fmt: skip


def write_event(client: httpx.Client, events: str, event: dict[str, Any]) -> bool:
    response = client.post(events, params={"dryRun": "All"}, json=event)
    assert response.status_code == 201, response.text
    return True


EVENTS_RULES = [
    {"apiGroups": ["events.k8s.io"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["events"]}
]  # fmt: skip


def test_webhook_equivalent_match_sees_a_core_event_as_events_k8s_io(
    client: httpx.Client, hooks: WebhookServer
) -> None:
    """matchPolicy Equivalent: a webhook on events.k8s.io/v1 events is sent a core v1 Event converted
    (kind and resource of events.k8s.io, ``note``), the request's own kind as requestKind; Exact: not sent
    it (the Exact webhook's configuration comes first, so it is known when the other is called)."""
    test = unique()
    ns = namespace(client)
    exact, equivalent = recorded(hooks, f"/{test}-exact"), recorded(hooks, f"/{test}-equivalent")
    selector = {"matchLabels": {"suite": test}}
    for policy in ("Exact", "Equivalent"):
        webhook_configuration(
            client, hooks, f"{test}-{policy.lower()}", f"/{test}-{policy.lower()}", EVENTS_RULES,
            matchPolicy=policy, objectSelector=selector,
        )  # fmt: skip
    events = f"/api/v1/namespaces/{ns}/events"
    probe = core_event(ns, "x", suite=test)
    until(lambda: write_event(client, events, probe) and bool(equivalent))
    created(client, events, core_event(ns, "hello", suite=test))
    request = equivalent[-1]
    assert request["kind"] == {"group": "events.k8s.io", "version": "v1", "kind": "Event"}
    assert request["resource"] == {"group": "events.k8s.io", "version": "v1", "resource": "events"}
    assert request["requestKind"] == {"group": "", "version": "v1", "kind": "Event"}
    assert request["requestResource"] == {"group": "", "version": "v1", "resource": "events"}
    assert request["object"]["apiVersion"] == "events.k8s.io/v1"
    assert request["object"]["note"] == "hello"
    assert "message" not in request["object"]
    assert exact == []


def test_validating_policy_equivalent_match_sees_a_core_event_as_events_k8s_io(
    client: httpx.Client,
) -> None:
    test = unique()
    ns = namespace(client)
    expression = (
        "request.kind.group == 'events.k8s.io' && request.requestKind.group == '' && "
        "object.apiVersion == 'events.k8s.io/v1' && object.note != 'forbidden'"
    )
    for name, policy in ((f"{test}-exact", "Exact"), (test, "Equivalent")):
        match = {"resourceRules": EVENTS_RULES, "matchPolicy": policy,
                 "objectSelector": {"matchLabels": {"suite": test}}}  # fmt: skip
        validations = [{"expression": expression if policy == "Equivalent" else "false"}]
        created(client, f"{ADMISSION}/v1/validatingadmissionpolicies", {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name}, "spec": {"matchConstraints": match, "validations": validations},
        })  # fmt: skip
        created(client, f"{ADMISSION}/v1/validatingadmissionpolicybindings", {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name},
            "spec": {"policyName": name, "validationActions": ["Deny"]},
        })  # fmt: skip
    events = f"/api/v1/namespaces/{ns}/events"
    forbidden = core_event(ns, "forbidden", suite=test)
    until(lambda: client.post(events, params={"dryRun": "All"}, json=forbidden).status_code == 422)
    assert client.post(events, json=core_event(ns, "fine", suite=test)).status_code == 201


@pytest.fixture(scope="module")
def kubectl(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    return Kubectl(kubectl_binary(33), server.kubeconfig, tmp_path_factory.mktemp("kubectl"))


def test_kubectl_documented_binding_denies_kubectls_writes(
    client: httpx.Client, kubectl: Kubectl
) -> None:
    """The binding of kube's ValidatingAdmissionPolicy documentation (matchResources with a
    namespaceSelector only), applied by kubectl, judges kubectl's creates by their namespace."""
    test = unique()
    prod, dev = namespace(client, environment=test), namespace(client)
    validating(client, test, None, bound=False, objectSelector={})
    binding = f"""apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: {test}-documented
spec:
  policyName: {test}
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        environment: {test}
"""
    kubectl.run("apply", "-f", "-", stdin=binding)
    until(lambda: write(client, prod, configmap(), dry=True).status_code == 422)
    refused = kubectl.run("create", "configmap", unique(), "-n", prod, check=False)
    assert refused.returncode == 1
    assert (
        f"ValidatingAdmissionPolicy '{test}' with binding '{test}-documented' denied request"
        in (refused.stderr)
    )
    kubectl.run("create", "configmap", unique(), "-n", dev)


def test_admission_configuration_is_never_judged_by_admission(client: httpx.Client) -> None:
    """kube's IsExemptAdmissionConfigurationResource: a deny-all policy matching every resource (its own
    objects among them) cannot keep its binding from being changed or deleted."""
    test = unique()
    every = [{"apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "operations": ["*"]}]
    labelled = {"matchLabels": {"suite": test}}
    validating(client, test, None, resourceRules=every, objectSelector=labelled)
    bindings = f"{ADMISSION}/v1/validatingadmissionpolicybindings"
    ns = namespace(client)
    until(lambda: write(client, ns, configmap(suite=test), dry=True).status_code == 422)
    relabel = client.patch(
        f"{bindings}/{test}",
        json={"metadata": {"labels": {"suite": test}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert relabel.status_code == 200, relabel.text
    assert client.delete(f"{bindings}/{test}").status_code == 200
    policy = client.delete(f"{ADMISSION}/v1/validatingadmissionpolicies/{test}")
    assert policy.status_code == 200, policy.text


def test_binding_without_param_ref_evaluates_with_null_params(client: httpx.Client) -> None:
    """kube's CollectParams: a policy with a paramKind bound without paramRef is evaluated with
    ``params`` null, not refused as misconfigured."""
    test = unique()
    match = {"resourceRules": CONFIGMAP_RULES, "objectSelector": {"matchLabels": {"suite": test}}}
    created(client, f"{ADMISSION}/v1/validatingadmissionpolicies", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": test},
        "spec": {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}, "matchConstraints": match,
            "validations": [{"expression": "params != null || object.data.k == 'v'", "message": "null"}],
        },
    })  # fmt: skip
    created(client, f"{ADMISSION}/v1/validatingadmissionpolicybindings", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": test}, "spec": {"policyName": test, "validationActions": ["Deny"]},
    })  # fmt: skip
    ns = namespace(client)
    other = {**configmap(suite=test), "data": {"k": "other"}}
    until(lambda: write(client, ns, other, dry=True).status_code == 422)
    assert write(client, ns, configmap(suite=test)).status_code == 201


def crontab(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": name},
        "spec": {"cronSpec": "* * * * */5", "image": "busybox", "replicas": 1},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("resources", "refused"),
    [
        ("crontabs", {""}),
        ("*", {""}),
        ("crontabs/status", {"status"}),
        ("*/scale", {"scale"}),
        ("crontabs/*", {"", "status", "scale"}),
        ("*/*", {"", "status", "scale"}),
    ],
)
def test_policy_rules_on_subresources(
    client: httpx.Client, resources: str, refused: set[str]
) -> None:
    """kube's rules.Matcher on a CronTab's updates: ``crontabs`` and ``*`` the object only, ``<r>/<sub>``
    and ``*/<sub>`` that subresource, ``crontabs/*`` and ``*/*`` the object and all its subresources."""
    test = unique()
    ns = namespace(client, suite=test)
    objects = f"/apis/stable.example.com/v1/namespaces/{ns}/crontabs"
    stored = created(client, objects, crontab("ct"))
    rule = {"apiGroups": ["stable.example.com"], "apiVersions": ["*"], "operations": ["UPDATE"],
            "resources": [resources]}  # fmt: skip
    validating(
        client, test, None, resourceRules=[rule], namespaceSelector={"matchLabels": {"suite": test}},
        objectSelector={},
    )  # fmt: skip
    known = unique()  # created last: once it denies, the policy under test is known too
    validating(client, known, None)
    until(lambda: write(client, ns, configmap(suite=known), dry=True).status_code == 422)
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "ct", "namespace": ns},
             "spec": {"replicas": 2}}  # fmt: skip

    def current() -> dict[str, Any]:  # each write on the latest: none conflicts with the one before
        latest: dict[str, Any] = client.get(f"{objects}/ct").json()
        return latest

    writes = {
        "": client.put(
            f"{objects}/ct", json={**current(), "spec": {**stored["spec"], "replicas": 3}}
        ),
        "status": client.put(f"{objects}/ct/status", json={**current(), "status": {"replicas": 1}}),
        "scale": client.put(f"{objects}/ct/scale", json=scale),
    }
    answers = {sub: response.status_code for sub, response in writes.items()}
    assert answers == {sub: 422 if sub in refused else 200 for sub in writes}, [
        r.text for r in writes.values()
    ]


def test_mutating_policy_equivalent_match_mutates_a_core_event_through_events_k8s_io(
    client: httpx.Client,
) -> None:
    """The mutation is made to the events.k8s.io/v1 Event the policy matched (``note``), and the core
    Event written gets it back (``message``)."""
    test = unique()
    ns = namespace(client)
    created(client, f"{ADMISSION}/v1beta1/mutatingadmissionpolicies", {
        "apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": test},
        "spec": {
            "matchConstraints": {
                "resourceRules": EVENTS_RULES, "objectSelector": {"matchLabels": {"suite": test}},
            },
            "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {
                "expression": "Object{note: 'seen as ' + object.apiVersion}"}}],
            "reinvocationPolicy": "Never",
        },
    })  # fmt: skip
    created(client, f"{ADMISSION}/v1beta1/mutatingadmissionpolicybindings", {
        "apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": test}, "spec": {"policyName": test},
    })  # fmt: skip
    events = f"/api/v1/namespaces/{ns}/events"

    def mutated() -> bool:
        response = client.post(
            events, params={"dryRun": "All"}, json=core_event(ns, "x", suite=test)
        )
        return bool(response.json()["message"] != "x")

    until(mutated)
    stored = created(client, events, core_event(ns, "hello", suite=test))
    assert (stored["apiVersion"], stored["message"]) == ("v1", "seen as events.k8s.io/v1")
