"""CustomResourceDefinitions installed at run time, through kubectl 1.33 against one real
server: every conformance CRD installs and is served within SERVED_WITHIN, with its sample resources; discovery,
`kubectl explain` and the OpenAPI documents follow live, and publish what `apiforge generate` writes for the
same CRD; names conflict as kube's naming controller reports; updates, deletion and restarts behave as kube's.

The k8s-docs CronTab CRDs are posted under the group ``stable.runtime.example``: the project served here
generates its own CronTab in stable.example.com (a CRD claiming its names is refused, tested below)."""

from __future__ import annotations

import copy
import json
import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from bench.crd_bench import RUNTIME as BENCH_GROUP
from bench.crd_bench import crontab_crd
from builtin.apiextensions.openapi import group_documents
from generator.load import load_text
from tests.e2e.test_kopf_operator import assert_no_fatal_errors, start_operator
from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import FIXTURES, ServerProcess

CRDS = FIXTURES / "crds"
SAMPLES = FIXTURES / "custom-resources"
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGET_OPERATOR = Path(__file__).with_name("operator_widget.py")
RUNTIME_GROUP = "stable.runtime.example"
SERVED_WITHIN = 5.0
"""Seconds from the create's answer to the kind being served: under a second on an idle machine (docs/crds.md,
held by test_crd_bulk_install.py's server-side timestamps); this bound is what a loaded 2-core machine running
the suite's other worker keeps, measured from this client."""
# one file per CRD name, in apply order: where two files define one CRD, the later is an update
CRD_FILES = [
    "apiextensions.crossplane.io_compositions.yaml",
    "argoproj.io_applications.yaml",
    "argoproj.io_workflows-minimal.yaml",
    "batch.tutorial.kubebuilder.io_cronjobs.yaml",
    "batch.tutorial.kubebuilder.io_cronjobs-multiversion.yaml",
    "cert-manager.io_certificates.yaml",
    "cert-manager.io_issuers.yaml",
    "gateway.networking.k8s.io_gatewayclasses.yaml",
    "gateway.networking.k8s.io_gateways.yaml",
    "gateway.networking.k8s.io_httproutes.yaml",
    "monitoring.coreos.com_prometheusrules.yaml",
    "monitoring.coreos.com_servicemonitors.yaml",
    "serving.knative.dev_services.yaml",
]
CRONTAB_FILES = sorted(p.name for p in (CRDS / "k8s-docs-crontab").glob("*.yaml"))
SAMPLE_FILES = [
    "cert-manager/cert-manager-resources.yaml",
    "cert-manager/issuers.valid.yaml",
    "gateway-api/basic-http.yaml",
    "gateway-api/cross-namespace-routing__gateway.yaml",
    "gateway-api/http-redirect-rewrite__httproute-rewrite-prefix-path.yaml",
    "kubebuilder/multiversion__batch_v1_cronjob.yaml",
    "kubebuilder/multiversion__batch_v2_cronjob.yaml",
    "prometheus-operator/prometheus-rule.yaml",
    "prometheus-operator/vllm-service-monitor.yaml",
]
SAMPLE_NAMESPACES = ("infra-ns", "monitoring")


def renamed(text: str) -> str:
    return text.replace("stable.example.com", RUNTIME_GROUP)


def load(path: Path) -> dict[str, Any]:
    """A YAML file, its CronTab group renamed (libyaml: the largest CRDs take seconds in pure Python)."""
    document: dict[str, Any] = yaml.load(renamed(path.read_text()), Loader=yaml.CSafeLoader)
    return document


def dump(document: dict[str, Any]) -> str:
    return yaml.dump(document, Dumper=yaml.CSafeDumper)


def basic_crd(plural: str, kind: str, short_names: tuple[str, ...] = ()) -> dict[str, Any]:
    """The k8s-docs basic CronTab CRD renamed to another kind of the run-time group."""
    crd = load(CRDS / "k8s-docs-crontab" / "crontab-basic.yaml")
    crd["metadata"]["name"] = f"{plural}.{RUNTIME_GROUP}"
    crd["spec"]["names"] = {"plural": plural, "kind": kind}
    if short_names:
        crd["spec"]["names"]["shortNames"] = list(short_names)
    return crd


def served_crd(client: httpx.Client, plural: str, kind: str) -> tuple[dict[str, Any], str]:
    """A basic CRD created and served; it and the path of its objects in namespace default."""
    crd = basic_crd(plural, kind)
    assert client.post(CRD_PATH, json=crd).status_code == 201
    wait_served(client, collection(crd))
    return crd, collection(crd).replace("/v1/", "/v1/namespaces/default/")


def collection(crd: dict[str, Any], version: str | None = None) -> str:
    spec = crd["spec"]
    served = version or next(v["name"] for v in spec["versions"] if v["storage"])
    return f"/apis/{spec['group']}/{served}/{spec['names']['plural']}"


def wait_served(client: httpx.Client, path: str, timeout: float = 2 * SERVED_WITHIN) -> float:
    """Seconds until ``path`` lists (polled every 20 ms)."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if client.get(path).status_code == 200:
            return time.monotonic() - started
        time.sleep(0.02)
    raise AssertionError(f"{path} was not served within {timeout} s")


def wait_gone(client: httpx.Client, path: str, timeout: float = 10.0) -> None:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if client.get(path).status_code == 404:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} is still served after {timeout} s")


def condition(client: httpx.Client, name: str, kind: str) -> dict[str, Any]:
    status = client.get(f"{CRD_PATH}/{name}").json().get("status") or {}
    return next((c for c in status.get("conditions") or [] if c["type"] == kind), {})


def wait_condition(client: httpx.Client, name: str, kind: str, status: str) -> dict[str, Any]:
    started = time.monotonic()
    while time.monotonic() - started < 5:
        found = condition(client, name, kind)
        if found.get("status") == status:
            return found
        time.sleep(0.02)
    raise AssertionError(f"{name}: {kind} is not {status}: {condition(client, name, kind)}")


@pytest.fixture(scope="module")
def kubectl(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    return Kubectl(kubectl_binary(33), server.kubeconfig, tmp_path_factory.mktemp("kubectl-cache"))


@pytest.fixture(scope="module")
def installed(client: httpx.Client, kubectl: Kubectl) -> dict[str, dict[str, Any]]:
    """Every conformance CRD applied with kubectl (server-side: some are larger than the annotation a
    client-side apply keeps), each served within SERVED_WITHIN; the CRDs by name."""
    crds: dict[str, dict[str, Any]] = {}
    for name in CRD_FILES:
        crd = load(CRDS / name)
        kubectl.run("apply", "--server-side", "-f", "-", stdin=dump(crd))
        for version in (v["name"] for v in crd["spec"]["versions"] if v["served"]):
            assert wait_served(client, collection(crd, version)) < SERVED_WITHIN, name
        crds[crd["metadata"]["name"]] = crd
    return crds


def test_every_conformance_crd_installs_and_is_established(
    client: httpx.Client, installed: dict[str, dict[str, Any]]
) -> None:
    assert len(installed) == 12  # 13 files, the kubebuilder CronJob twice
    for name, crd in installed.items():
        status = client.get(f"{CRD_PATH}/{name}").json()["status"]
        conditions = {c["type"]: c for c in status["conditions"]}
        assert conditions["NamesAccepted"]["reason"] == "NoConflicts", name
        assert conditions["Established"]["status"] == "True", name
        storage = next(v["name"] for v in crd["spec"]["versions"] if v["storage"])
        assert status["storedVersions"] == [storage]
        assert status["acceptedNames"]["plural"] == crd["spec"]["names"]["plural"]


def test_the_sample_resources_work_with_kubectl(
    installed: dict[str, dict[str, Any]], kubectl: Kubectl
) -> None:
    for namespace in SAMPLE_NAMESPACES:
        kubectl.run("create", "namespace", namespace)
    for sample in SAMPLE_FILES:
        kubectl.run("apply", "--server-side", "-f", str(SAMPLES / sample))
    assert "my-gateway" in kubectl.run("get", "gtw", "-A").stdout
    v2 = yaml.safe_load(
        kubectl.run("get", "cronjobs.v2.batch.tutorial.kubebuilder.io", "-o", "yaml").stdout
    )
    assert {item["apiVersion"] for item in v2["items"]} == {"batch.tutorial.kubebuilder.io/v2"}
    kubectl.run("delete", "-f", str(SAMPLES / "cert-manager/issuers.valid.yaml"))


def test_discovery_and_explain_see_the_new_kinds(
    installed: dict[str, dict[str, Any]], kubectl: Kubectl
) -> None:
    resources = kubectl.run("api-resources").stdout.splitlines()
    row = next(line.split() for line in resources if line.startswith("gateways "))
    assert row == ["gateways", "gtw", "gateway.networking.k8s.io/v1", "true", "Gateway"]
    explained = kubectl.run("explain", "httproutes.spec.parentRefs").stdout
    assert "FIELD: parentRefs <[]Object>" in explained
    assert "certificates" in kubectl.run("api-resources", "--api-group", "cert-manager.io").stdout


def test_openapi_is_what_generate_writes_for_the_same_crd(
    client: httpx.Client, installed: dict[str, dict[str, Any]]
) -> None:
    """Side by side: the generator's documents for each CRD file (run-time rules: the multi-version ones
    convert by apiVersion rewrite) and what the server publishes, per group-version, for every kind."""
    for name in CRD_FILES[:4] + CRD_FILES[5:]:
        definitions = load_text(renamed((CRDS / name).read_text()), Path(name)).definitions
        v3, v2 = group_documents(definitions)
        for path, expected in v3.items():
            served = client.get(f"/openapi/v3/{path}").json()
            for key, item in expected["paths"].items():
                assert served["paths"][key] == item, (name, key)
            for key, schema in expected["components"]["schemas"].items():
                assert served["components"]["schemas"][key] == schema, (name, key)
        swagger = client.get("/openapi/v2").json()
        for key in v2["definitions"]:
            assert swagger["definitions"][key] == v2["definitions"][key], (name, key)


def test_the_openapi_index_changes_hash_when_a_group_changes(client: httpx.Client) -> None:
    before = client.get("/openapi/v3").json()["paths"]
    crd = basic_crd("widgets", "Widget")
    assert client.post(CRD_PATH, json=crd).status_code == 201
    wait_served(client, collection(crd))
    # the documents are published right after the kind is served (as kube's OpenAPI controller follows)
    started = time.monotonic()
    while f"apis/{RUNTIME_GROUP}/v1" not in (after := client.get("/openapi/v3").json()["paths"]):
        assert time.monotonic() - started < 5, "not published"
        time.sleep(0.02)
    assert f"apis/{RUNTIME_GROUP}/v1" not in before
    assert after["api/v1"] == before["api/v1"]
    assert client.delete(f"{CRD_PATH}/widgets.{RUNTIME_GROUP}").status_code == 200
    wait_gone(client, collection(crd))
    assert f"apis/{RUNTIME_GROUP}/v1" not in client.get("/openapi/v3").json()["paths"]


@pytest.mark.parametrize("name", CRONTAB_FILES)
def test_each_crontab_crd_is_served_with_its_features(
    client: httpx.Client, kubectl: Kubectl, name: str
) -> None:
    """The six k8s-docs CRDs are one CRD (crontabs) each; applied in turn, each is an update served live."""
    crd = load(CRDS / "k8s-docs-crontab" / name)
    kubectl.run("apply", "--server-side", "--force-conflicts", "-f", "-", stdin=dump(crd))
    wait_served(client, collection(crd))
    sample = SAMPLES / "k8s-docs-crontab"
    namespaced = collection(crd).replace("/v1/", "/v1/namespaces/default/")
    client.delete(f"{namespaced}/my-new-cron-object")
    created = client.post(namespaced, json=load(sample / "my-crontab.yaml"))
    assert created.status_code == 201, created.text
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    if "default" in str(
        spec
    ):  # crontab-defaulting: replicas defaults to 1, cronSpec to "5 0 * * *"
        client.delete(f"{namespaced}/my-new-cron-object")
        answer = client.post(
            namespaced, json=load(sample / "my-crontab-defaulting-input.yaml")
        ).json()
        assert answer["spec"] == load(sample / "my-crontab-defaulting-expected.yaml")["spec"]
    if "maximum" in str(spec):  # crontab-validation: replicas at most 10, cronSpec's pattern
        invalid = client.post(namespaced, json=load(sample / "my-crontab-invalid.yaml"))
        assert invalid.status_code == 422
    current = client.get(f"{namespaced}/my-new-cron-object").json()
    pruned = client.put(
        f"{namespaced}/my-new-cron-object",
        json={**load(sample / "my-crontab-pruning.yaml"), "metadata": current["metadata"]},
    )
    assert pruned.status_code == 200 and "someRandomField" not in pruned.json()["spec"]
    if "status" in str(crd["spec"]["versions"][0].get("subresources")):
        scale = client.get(f"{namespaced}/my-new-cron-object/scale")
        assert scale.status_code == 200 and scale.json()["kind"] == "Scale"
    if "additionalPrinterColumns" in crd["spec"]["versions"][0]:
        header = kubectl.run("get", f"crontabs.{RUNTIME_GROUP}", "-n", "default").stdout
        assert header.split()[:3] == ["NAME", "SPEC", "REPLICAS"]


def test_a_malformed_crd_is_kubes_422(client: httpx.Client) -> None:
    """kubectl-validate's recorded kube-apiserver answer to a typo in a CRD's schema."""
    case = FIXTURES / "validation-cases" / "kubectl-validate" / "manifests" / "error_crd_typo.yaml"
    recorded = yaml.safe_load(
        "\n".join(line[2:] for line in case.read_text().splitlines() if line.startswith("# "))
    )
    answer = client.post(CRD_PATH, json=yaml.safe_load(case.read_text()))
    assert answer.status_code == 422
    assert answer.json()["message"] == recorded["message"]
    assert answer.json()["details"]["causes"] == recorded["details"]["causes"]


@pytest.mark.parametrize(
    "change",
    [
        {"spec": {"group": "not a group"}},
        {"spec": {"scope": "Everywhere"}},
        {"spec": {"versions": []}},
        {"spec": {"names": {"plural": "Widgets", "kind": "widget"}}},
        {"metadata": {"name": "wrong.name"}},
        {"spec": {"versions": [{"name": "v1", "served": True, "storage": False}]}},
        {"spec": "not an object"},
        {
            "spec": {
                "conversion": {
                    "strategy": "Webhook",
                    "webhook": {"conversionReviewVersions": ["v1"]},
                }
            }
        },
    ],
    ids=["group", "scope", "no-versions", "names", "name", "no-storage", "spec-type", "webhook"],
)
def test_malformed_crds_are_4xx_never_5xx(client: httpx.Client, change: dict[str, Any]) -> None:
    crd = basic_crd("gadgets", "Gadget")
    for key, value in change.items():
        crd[key] = {**crd[key], **value} if isinstance(value, dict) else value
    answer = client.post(CRD_PATH, json=crd)
    assert 400 <= answer.status_code < 500, answer.text
    assert client.get(f"/apis/{RUNTIME_GROUP}/v1/gadgets").status_code == 404


def test_name_conflicts_are_conditions_as_kube_reports_them(client: httpx.Client) -> None:
    first = basic_crd("gizmos", "Gizmo", ("gz",))
    assert client.post(CRD_PATH, json=first).status_code == 201
    wait_served(client, collection(first))
    second = basic_crd("doodads", "Doodad", ("gz",))
    assert client.post(CRD_PATH, json=second).status_code == 201
    conflict = wait_condition(client, second["metadata"]["name"], "NamesAccepted", "False")
    assert (conflict["reason"], conflict["message"]) == (
        "ShortNamesConflict",
        '"gz" is already in use',
    )
    established = condition(client, second["metadata"]["name"], "Established")
    assert (established["status"], established["reason"]) == ("False", "NotAccepted")
    assert client.get(collection(second)).status_code == 404
    # a CRD claiming the names of a generated kind is never served in its place
    generated = load(CRDS / "k8s-docs-crontab" / "crontab-basic.yaml")
    generated = yaml.safe_load(dump(generated).replace(RUNTIME_GROUP, "stable.example.com"))
    assert client.post(CRD_PATH, json=generated).status_code == 201
    claimed = wait_condition(client, "crontabs.stable.example.com", "NamesAccepted", "False")
    assert claimed["message"].endswith("is already in use")
    # freeing the name lets the waiting CRD in, as kube's naming controller requeues the group
    assert client.delete(f"{CRD_PATH}/{first['metadata']['name']}").status_code == 200
    wait_condition(client, second["metadata"]["name"], "Established", "True")
    wait_served(client, collection(second))


def test_update_adds_a_version_and_tightens_the_schema_live(client: httpx.Client) -> None:
    crd, objects = served_crd(client, "sprockets", "Sprocket")
    body = {"apiVersion": f"{RUNTIME_GROUP}/v1", "kind": "Sprocket", "metadata": {"name": "s"}}
    assert client.post(objects, json={**body, "spec": {"replicas": 50}}).status_code == 201
    current = client.get(f"{CRD_PATH}/{crd['metadata']['name']}").json()
    v1 = current["spec"]["versions"][0]
    stricter = copy.deepcopy(v1)
    stricter["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["replicas"][
        "maximum"
    ] = 10
    v2 = {**copy.deepcopy(stricter), "name": "v2", "storage": True}
    current["spec"]["versions"] = [{**stricter, "storage": False}, v2]
    updated = client.put(f"{CRD_PATH}/{crd['metadata']['name']}", json=current)
    assert updated.status_code == 200, updated.text
    wait_served(client, collection(crd, "v2"))
    stored = client.get(f"{objects}/s").json()
    # ratcheting: the unchanged, now invalid value may stay; a new invalid value may not
    stored["metadata"]["labels"] = {"touched": "yes"}
    assert client.put(f"{objects}/s", json=stored).status_code == 200
    too_many = client.post(
        objects, json={**body, "metadata": {"name": "t"}, "spec": {"replicas": 11}}
    )
    assert too_many.status_code == 422
    read = client.get(objects.replace("/v1/", "/v2/") + "/s").json()
    assert read["apiVersion"] == f"{RUNTIME_GROUP}/v2" and read["spec"]["replicas"] == 50
    wait_condition(client, crd["metadata"]["name"], "Established", "True")
    status = client.get(f"{CRD_PATH}/{crd['metadata']['name']}").json()["status"]
    assert status["storedVersions"] == ["v1", "v2"]


def test_delete_removes_the_objects_first_then_stops_serving(client: httpx.Client) -> None:
    crd, objects = served_crd(client, "cogs", "Cog")
    body = {"apiVersion": f"{RUNTIME_GROUP}/v1", "kind": "Cog", "metadata": {"name": "c"}}
    assert client.post(objects, json=body).status_code == 201
    deleted = client.delete(f"{CRD_PATH}/cogs.{RUNTIME_GROUP}")
    assert deleted.status_code == 200
    assert "customresourcecleanup.apiextensions.k8s.io" in deleted.json()["metadata"]["finalizers"]
    wait_gone(client, f"{CRD_PATH}/cogs.{RUNTIME_GROUP}")
    assert client.get(collection(crd)).status_code == 404
    # posted again, the kind starts empty: the objects went with the definition
    assert client.post(CRD_PATH, json=crd).status_code == 201
    wait_served(client, collection(crd))
    assert client.get(collection(crd)).json()["items"] == []


def test_a_terminating_crd_refuses_creates_with_kubes_405(client: httpx.Client) -> None:
    """kube's crdHandler: while the CRD is terminating, a create of its kind is a MethodNotSupported error
    whose message says why; reads, updates and deletes still go through (the cleanup needs them)."""
    crd, objects = served_crd(client, "latches", "Latch")
    body = {"apiVersion": f"{RUNTIME_GROUP}/v1", "kind": "Latch"}
    held = {**body, "metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
    assert client.post(objects, json=held).status_code == 201
    assert client.delete(f"{CRD_PATH}/latches.{RUNTIME_GROUP}").status_code == 200
    wait_condition(client, crd["metadata"]["name"], "Terminating", "True")
    refused = client.post(objects, json={**body, "metadata": {"name": "new"}})
    assert refused.status_code == 405
    assert refused.json()["reason"] == "MethodNotAllowed"
    assert refused.json()["message"] == (
        "create not allowed while custom resource definition is terminating"
    )
    assert refused.json()["details"] == {"group": RUNTIME_GROUP, "kind": "latches"}
    released = client.patch(
        f"{objects}/held",
        json={"metadata": {"finalizers": None}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert released.status_code == 200
    wait_gone(client, f"{CRD_PATH}/latches.{RUNTIME_GROUP}")


def test_a_kopf_operator_installs_its_crd_and_handles_its_kind(
    server: ServerProcess, client: httpx.Client, tmp_path: Path
) -> None:
    """tests/e2e/operator_widget.py creates its CRD at start; kopf finds the kind through its watch on
    CRDs once it is served, and handles a Widget created afterwards (writes its status)."""
    operator = start_operator(server.kubeconfig, tmp_path / "operator.log", WIDGET_OPERATOR)
    try:
        widgets = "/apis/kopf.runtime.example/v1/namespaces/default/widgets"
        wait_served(client, f"{CRD_PATH}/widgets.kopf.runtime.example", timeout=30)
        wait_served(client, widgets)
        body = {
            "apiVersion": "kopf.runtime.example/v1",
            "kind": "Widget",
            "metadata": {"name": "w"},
        }
        assert client.post(widgets, json={**body, "spec": {"size": 4}}).status_code == 201
        deadline = time.monotonic() + 30
        while not (client.get(f"{widgets}/w").json().get("status") or {}).get("observed"):
            assert time.monotonic() < deadline, operator.output()[-4000:]
            time.sleep(0.1)
        assert client.get(f"{widgets}/w").json()["status"]["observed"] == 4
        assert_no_fatal_errors(operator)
    finally:
        operator.stop()


def test_crds_survive_a_restart(
    server: ServerProcess, installed: dict[str, dict[str, Any]], kubectl: Kubectl
) -> None:
    server.stop()
    server.start()
    with server.client(timeout=10) as client:
        for crd in installed.values():
            assert client.get(collection(crd)).status_code == 200
    assert "my-gateway" in kubectl.run("get", "gateways", "-A").stdout


MIRROR_GROUP = "mirror.example.com"


def mirror_crd() -> dict[str, Any]:
    """The generated CronTab's own definition as a CRD (bench.crd_bench's: its schemas, printer columns and
    subresources), in a group of its own."""
    mirrored: dict[str, Any] = json.loads(
        json.dumps(crontab_crd()).replace(BENCH_GROUP, MIRROR_GROUP)
    )
    return mirrored


def comparable(answer: httpx.Response) -> tuple[int, Any]:
    """The status and body, with what differs by nature (the group, uid, times, resourceVersions) evened."""
    text = answer.text.replace(MIRROR_GROUP, "stable.example.com")
    for volatile in ("uid", "creationTimestamp", "resourceVersion", "time"):
        text = re.sub(rf'"{volatile}":"[^"]*"', f'"{volatile}":"-"', text)
    # the last cell is the Age column, which moves with the clock
    text = re.sub(r'("cells":\[[^\]]*),"[^"]*"\]', r'\1,"-"]', text)
    return answer.status_code, json.loads(text)


def test_a_crd_at_run_time_answers_as_the_generated_kind(client: httpx.Client) -> None:
    """Side by side, beyond the OpenAPI: the generated CronTab (stable.example.com/v1) and the same kind
    posted as a CRD answer a create, a get, a list as a Table, a patch and an invalid write alike."""
    crd = mirror_crd()
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "side-by-side"}}
    assert client.post("/api/v1/namespaces", json=namespace).status_code == 201
    assert client.post(CRD_PATH, json=crd).status_code == 201
    wait_served(client, collection(crd))
    table = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    merge = {"Content-Type": "application/merge-patch+json"}
    answers: dict[str, list[tuple[int, Any]]] = {}
    for group in ("stable.example.com", MIRROR_GROUP):
        objects = f"/apis/{group}/v1/namespaces/side-by-side/crontabs"
        body = {
            "apiVersion": f"{group}/v1",
            "kind": "CronTab",
            "metadata": {"name": "twin", "labels": {"app": "twin"}},
            "spec": {"cronSpec": "*/5 * * * *", "image": "cron:1", "replicas": 2, "extra": 1},
        }
        invalid = {
            **body,
            "metadata": {"name": "bad"},
            "spec": {"cronSpec": "often", "replicas": -1},
        }
        answers[group] = [
            comparable(client.post(objects, json=body)),
            comparable(client.get(f"{objects}/twin")),
            comparable(client.get(objects, headers=table)),
            comparable(
                client.patch(f"{objects}/twin", json={"spec": {"replicas": 3}}, headers=merge)
            ),
            comparable(client.post(objects, json=invalid)),
            comparable(client.get(f"{objects}/twin/scale")),
        ]
    generated, run_time = answers["stable.example.com"], answers[MIRROR_GROUP]
    assert [status for status, _ in generated] == [201, 200, 200, 200, 422, 200]
    for step, (expected, got) in enumerate(zip(generated, run_time, strict=True)):
        assert got == expected, step
