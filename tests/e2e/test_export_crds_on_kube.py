"""The exported CRDs on a real kube-apiserver (the oracle, v1.34) and on apiforge's run-time CRD path, side by
side: `make conformance` runs this module (marker ``oracle``: it needs the oracle's binaries, which `make test`
does not build).

Every shipped compact definition is exported as `apiforge export crds` writes it (the repository's
definitions/ and the convert project's multi-version kinds, each naming its own `apiforge conversion-webhook`
by a Service reference, trusted through the exported caBundle) and POSTed unchanged to kube and to an apiforge
server of no kinds of its own. Both establish every CRD and store it as sent. Then an object of each kind is
written in one version and read back in every served version; kube converts through the same webhooks as
apiforge, and the two answer alike. The Services are ExternalName Services naming localhost: kube's
ClusterIPServiceResolver dials that name (staging/src/k8s.io/apiserver/pkg/util/proxy/proxy.go,
ResolveCluster) while verifying the certificate for ``<service>.<namespace>.svc``
(staging/src/k8s.io/apiserver/pkg/util/webhook/client.go)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Protocol

import httpx
import pytest
import yaml

from generator.pipeline import GenerateConfig, generate
from oracle.cluster import running_cluster
from tests.convertproject import DEFINITIONS as MOVES_DEFINITIONS
from tests.convertproject import GROUP as MOVES_GROUP
from tests.convertproject import KINDS, SAMPLES, generate_project
from tests.exportproc import (
    CRD_PATH,
    WebhookTLS,
    apiforge,
    assert_unchanged,
    established,
    export,
    external_name_service,
    running_webhook,
    webhook_tls,
)
from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import REPO, ServerProcess, free_port
from tests.shipped import compute_cluster, crontab, shipped_definitions

pytestmark = pytest.mark.oracle

NAMESPACE = "default"
PROJECTS = {
    "shipped-conversion": shipped_definitions(),
    "moves-conversion": MOVES_DEFINITIONS,
}
"""The Service that names each project's webhook, and the project's definitions."""
EXPORTED = [
    "moves.example.com_orders.yaml",
    "moves.example.com_parcels.yaml",
    "moves.example.com_tickets.yaml",
    "platform.example.com_computeclusters.yaml",
    "stable.example.com_crontabs.yaml",
]


class Server(Protocol):
    """What this module needs of kube (oracle.cluster.KubeCluster) and of apiforge (ServerProcess)."""

    @property
    def kubeconfig(self) -> Path: ...

    def client(self, **options: Any) -> httpx.Client: ...


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> WebhookTLS:
    names = [f"{service}.{NAMESPACE}.svc" for service in PROJECTS]
    return webhook_tls(tmp_path_factory.mktemp("webhook-tls"), *names)


@pytest.fixture(scope="module")
def webhooks(tmp_path_factory: pytest.TempPathFactory, tls: WebhookTLS) -> Iterator[dict[str, int]]:
    """Each project's `apiforge conversion-webhook`, run from the project's directory; their ports."""
    roots = {
        "shipped-conversion": REPO,
        "moves-conversion": generate_project(tmp_path_factory.mktemp("convertproject")),
    }
    with ExitStack() as stack:
        yield {
            service: stack.enter_context(running_webhook(root, tls))
            for service, root in roots.items()
        }


@pytest.fixture(scope="module")
def crds(
    tmp_path_factory: pytest.TempPathFactory, webhooks: dict[str, int], tls: WebhookTLS
) -> list[Path]:
    """Every exported CRD file, each project's naming its own webhook's Service."""
    files = [
        file
        for service, definitions in PROJECTS.items()
        for file in export(
            definitions,
            tmp_path_factory.mktemp(service),
            service,
            NAMESPACE,
            webhooks[service],
            tls.ca_file,
        )
    ]
    return sorted(files, key=lambda f: f.name)


@pytest.fixture(scope="module")
def kube(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_cluster(tmp_path_factory.mktemp("oracle")) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def apiforge_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """apiforge serving a project of no kinds of its own: every exported kind comes in by its CRD."""
    root = tmp_path_factory.mktemp("crdsonly")
    (root / "definitions").mkdir()
    generate(GenerateConfig(root / "definitions", root / "generated"))
    process = ServerProcess(tmp_path_factory.mktemp("data"), free_port(), cwd=root)
    process.start()
    yield process
    process.stop()


def install(server: Server, crds: list[Path], cache: Path) -> None:
    """The webhooks' Services, then every CRD POSTed as exported, until kubectl sees each Established."""
    with server.client(timeout=30) as http:
        for service in PROJECTS:
            answer = http.post(
                f"/api/v1/namespaces/{NAMESPACE}/services",
                json=external_name_service(service, NAMESPACE),
            )
            assert answer.status_code == 201, answer.text
        for file in crds:
            answer = http.post(CRD_PATH, json=yaml.safe_load(file.read_text()))
            assert answer.status_code == 201, f"{file.name}: {answer.text}"
    established(Kubectl(kubectl_binary(33), server.kubeconfig, cache), crds)


@pytest.fixture(scope="module")
def servers(
    kube: Server,
    apiforge_server: Server,
    crds: list[Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Server]:
    """kube and apiforge, each with every exported CRD established."""
    both = {"kube": kube, "apiforge": apiforge_server}
    for name, server in both.items():
        install(server, crds, tmp_path_factory.mktemp(f"kubectl-cache-{name}"))
    return both


@pytest.mark.parametrize("name", ["kube", "apiforge"])
def test_every_exported_crd_is_established_and_stored_as_exported(
    servers: dict[str, Server], crds: list[Path], name: str
) -> None:
    assert [f.name for f in crds] == EXPORTED
    with servers[name].client(timeout=30) as http:
        assert_unchanged(http, crds)


def sample(group: str, kind: str, version: str, body: dict[str, Any], name: str) -> dict[str, Any]:
    return {"apiVersion": f"{group}/{version}", "kind": kind, "metadata": {"name": name}, **body}


def _shipped_samples() -> list[tuple[str, dict[str, Any], tuple[str, ...]]]:
    beta = crontab("")
    beta["apiVersion"] = "stable.example.com/v1beta1"
    beta["spec"] = {"schedule": "0 3 * * *", "image": "backup"}  # replicas: v1beta1's default
    return [
        ("crontabs", crontab(""), ("v1", "v1beta1")),
        ("crontabs", beta, ("v1", "v1beta1")),
        ("computeclusters", compute_cluster(""), ("v1alpha1",)),
    ]


CASES = [
    *_shipped_samples(),
    *(
        (plural, sample(MOVES_GROUP, KINDS[plural], written, body, ""), versions)
        for plural, written, body, versions in SAMPLES
    ),
]
"""Per kind, objects to write (in the version of their apiVersion) and the versions to read them in."""


def path(obj: dict[str, Any], plural: str, version: str) -> str:
    group = obj["apiVersion"].split("/")[0]
    namespace = "" if plural == "computeclusters" else f"/namespaces/{NAMESPACE}"
    return f"/apis/{group}/{version}{namespace}/{plural}"


def essentials(obj: dict[str, Any]) -> dict[str, Any]:
    """What two servers must agree on: everything but the metadata each assigns (uid, times, versions)."""
    return {key: obj[key] for key in ("apiVersion", "kind", "spec") if key in obj}


def written_and_read(
    server: Server, plural: str, obj: dict[str, Any], versions: tuple[str, ...]
) -> dict[str, Any]:
    """Write ``obj``, then read it in each version, alone and in its list: the answers, with the
    deprecation warnings they carry."""
    written = obj["apiVersion"].split("/")[1]
    name = obj["metadata"]["name"]
    answers: dict[str, Any] = {}
    with server.client(timeout=30) as http:
        created = http.post(path(obj, plural, written), json=obj)
        assert created.status_code == 201, created.text
        answers["created"] = essentials(created.json()), created.headers.get_list("warning")
        for version in versions:
            read = http.get(f"{path(obj, plural, version)}/{name}")
            assert read.status_code == 200, f"{version}: {read.text}"
            assert read.json()["apiVersion"].endswith(f"/{version}")
            listed = http.get(
                path(obj, plural, version), params={"fieldSelector": f"metadata.name={name}"}
            )
            assert listed.status_code == 200, f"{version}: {listed.text}"
            answers[version] = (
                essentials(read.json()),
                read.headers.get_list("warning"),
                [essentials(item) for item in listed.json()["items"]],
            )
    return answers


@pytest.mark.parametrize(
    ("plural", "obj", "versions"),
    CASES,
    ids=[f"{plural}-{obj['apiVersion'].split('/')[1]}" for plural, obj, _ in CASES],
)
def test_an_object_reads_back_in_every_version_alike_on_kube_and_apiforge(
    servers: dict[str, Server], plural: str, obj: dict[str, Any], versions: tuple[str, ...]
) -> None:
    named = {**obj, "metadata": {"name": f"{plural}-from-{obj['apiVersion'].split('/')[1]}"}}
    kube, ours = (
        written_and_read(servers[n], plural, named, versions) for n in ("kube", "apiforge")
    )
    assert kube == ours


INVALID = [
    ("crontabs", {**crontab("bad-replicas"), "spec": {**crontab("")["spec"], "replicas": -1}}),
    (
        "crontabs",
        {
            **crontab("bad-schedule"),
            "apiVersion": "stable.example.com/v1beta1",
            "spec": {"schedule": "every day", "image": "backup", "replicas": "two"},
        },
    ),
    ("computeclusters", {**compute_cluster("bad-tier"), "spec": {"tier": "gold"}}),
    (
        "orders",
        sample(MOVES_GROUP, "Order", "v2", {"spec": {"customer": "Ada", "total": "3"}}, "bad"),
    ),
]
"""Objects each exported schema refuses, in a served version that is not always the storage version; the\ncrontabs' replicas are also what the scale subresource reads, which kube checks beyond the schema."""


def refusal(server: Server, plural: str, obj: dict[str, Any]) -> dict[str, Any]:
    """The 422 Status of writing ``obj``, its causes sorted and its message cut before them: kube's schema
    validator ranges over a Go map of properties (k8s.io/kube-openapi/pkg/validation/validate), so the
    order of several errors is not kube's to keep, only their set."""
    with server.client(timeout=30) as http:
        answer = http.post(path(obj, plural, obj["apiVersion"].split("/")[1]), json=obj)
    status: dict[str, Any] = answer.json()
    assert answer.status_code == status["code"] == 422, answer.text
    details = status["details"]
    causes = sorted(details["causes"], key=lambda c: (c["field"], c["message"]))
    message = status["message"].split(" is invalid: ")[0]
    return {**status, "message": message, "details": {**details, "causes": causes}}


@pytest.mark.parametrize(
    ("plural", "obj"), INVALID, ids=[obj["metadata"]["name"] for _, obj in INVALID]
)
def test_an_invalid_object_is_refused_alike_on_kube_and_apiforge(
    servers: dict[str, Server], plural: str, obj: dict[str, Any]
) -> None:
    kube, ours = (refusal(servers[n], plural, obj) for n in ("kube", "apiforge"))
    assert len(kube["details"]["causes"]) >= 1
    assert kube == ours


def status_refusal(server: Server) -> list[tuple[str, str, str]]:
    """A status write whose scale paths name a negative replicas count and a label selector that is no
    string: kube checks only the status paths there (ValidateStatusUpdate). Its causes: reason, field, and
    the message of the scale paths' causes (a schema cause's message words its path relative to the status
    on kube, which apiforge does not yet)."""
    obj = crontab("bad-status")
    with server.client(timeout=30) as http:
        created = http.post(path(obj, "crontabs", "v1"), json=obj)
        assert created.status_code == 201, created.text
        stored = created.json()
        stored["status"] = {"replicas": -2, "labelSelector": 5}
        answer = http.put(f"{path(obj, 'crontabs', 'v1')}/bad-status/status", json=stored)
    assert answer.status_code == 422, answer.text
    causes = answer.json()["details"]["causes"]
    return [
        (c["reason"], c["field"], c["message"] if c["field"].startswith(".") else "")
        for c in causes
    ]


def test_a_status_write_checks_the_scale_paths_alike_on_kube_and_apiforge(
    servers: dict[str, Server],
) -> None:
    kube, ours = (status_refusal(servers[n]) for n in ("kube", "apiforge"))
    assert [field for _, field, _ in kube] == [
        "status.labelSelector",
        ".status.replicas",
        ".status.labelSelector",
    ]
    assert kube == ours


@pytest.mark.parametrize("name", ["kube", "apiforge"])
@pytest.mark.parametrize("project", PROJECTS)
def test_check_finds_no_change_from_the_exported_crds_to_their_definitions(
    servers: dict[str, Server], name: str, project: str
) -> None:
    """`apiforge check --kubeconfig` of the definitions against the server that holds their exported CRDs
    (and the objects the tests above wrote): the same API, so no finding, and exit 0. Run from the
    repository's root, where the convert project's hooks import."""
    checked = apiforge(
        "check",
        f"--definitions={PROJECTS[project]}",
        f"--kubeconfig={servers[name].kubeconfig}",
        "--format=json",
    )
    assert json.loads(checked.stdout) == []


GOLDEN = REPO / "tests" / "unit" / "generator" / "golden"
"""The generator's golden projects: one kind each, with what the shipped ones do not have (a CEL rule, a
cluster scope, printer columns, conversion hooks...), mostly under the same name, so sent with dryRun."""


@pytest.mark.parametrize("project", sorted(p.name for p in GOLDEN.iterdir()))
def test_every_golden_projects_crd_is_accepted_alike_on_kube_and_apiforge(
    servers: dict[str, Server], tls: WebhookTLS, project: str, tmp_path: Path
) -> None:
    """Each exported CRD, POSTed with dryRun=All (validated in full, CEL rules compiled and costed, not
    stored): both servers accept it and answer it as sent."""
    (file,) = export(
        GOLDEN / project / "definitions", tmp_path, "golden", NAMESPACE, 443, tls.ca_file
    )
    sent = yaml.safe_load(file.read_text())
    for name, server in servers.items():
        with server.client(timeout=30) as http:
            answer = http.post(CRD_PATH, params={"dryRun": "All"}, json=sent)
        assert answer.status_code == 201, f"{name}: {answer.text}"
        assert answer.json()["spec"] == sent["spec"], name


CHEAP_RULE = "self.size() < 10"
COSTLY_RULE = "self.all(x, self.all(y, self.all(z, x + y + z != '')))"
COSTLY = f"""\
kind: Gizmo
group: cost.example.com
versions:
  v1:
    storage: true
    schema:
      spec:
        required: false
        type: object
        properties:
          items:
            type: "[]string"
            x-kubernetes-list-type: atomic
            required: false
            x-kubernetes-validations: [{{rule: "{COSTLY_RULE}"}}]
"""
"""A CEL rule over kube's cost budget: three nested all() over an unbounded list."""


def test_a_rule_apiforge_check_finds_too_costly_is_refused_by_kube_as_it_says(
    servers: dict[str, Server], tls: WebhookTLS, tmp_path: Path
) -> None:
    """`apiforge check` flags the rule (cel-cost, breaking) with kube's own words; the CRD with that rule
    (exported with a cheap one, which `apiforge export` requires, then swapped) is refused by kube and by
    apiforge alike, for the same causes."""
    for name, text in (("definitions", COSTLY), ("cheap", COSTLY.replace(COSTLY_RULE, CHEAP_RULE))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "gizmo.yaml").write_text(text)
    (tmp_path / "none").mkdir()
    checked = subprocess.run(
        [sys.executable, "-m", "apiforge", "check", "--against=none", "--format=json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 1, checked.stderr
    flagged = {
        f["message"].split(": ", 1)[1].removesuffix("; kube-apiserver refuses the CRD")
        for f in json.loads(checked.stdout)
        if (f["rule"], f["severity"]) == ("cel-cost", "breaking")
    }
    (file,) = export(tmp_path / "cheap", tmp_path / "crds", "cost", NAMESPACE, 443, tls.ca_file)
    crd = yaml.safe_load(file.read_text().replace(CHEAP_RULE, COSTLY_RULE))
    refusals = {}
    for name, server in servers.items():
        with server.client(timeout=30) as http:
            answer = http.post(CRD_PATH, params={"dryRun": "All"}, json=crd)
        assert answer.status_code == 422, f"{name}: {answer.text}"
        refusals[name] = answer.json()
    assert refusals["kube"] == refusals["apiforge"]
    causes = refusals["kube"]["details"]["causes"]
    assert flagged == {cause["message"] for cause in causes}
    assert len(flagged) == 3


def dropping_crd(*versions: str) -> dict[str, Any]:
    """A CRD of drop.example.com serving ``versions``, the last one stored."""
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    spec: dict[str, Any] = {"group": "drop.example.com", "scope": "Namespaced"}
    spec["names"] = {"plural": "droplets", "kind": "Droplet"}
    spec["versions"] = [
        {"name": name, "served": True, "storage": name == versions[-1], "schema": schema}
        for name in versions
    ]
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}
    return {**crd, "metadata": {"name": "droplets.drop.example.com"}, "spec": spec}


def replaced(http: httpx.Client, crd: dict[str, Any]) -> httpx.Response:
    """PUT ``crd`` over the stored one, read again while the server's controllers update its status (409),
    as client-go's RetryOnConflict does."""
    url = f"{CRD_PATH}/{crd['metadata']['name']}"
    while True:
        stored = http.get(url).json()
        answer = http.put(url, json={**crd, "metadata": stored["metadata"]})
        if answer.status_code != 409:
            return answer


@pytest.mark.parametrize("name", ["kube", "apiforge"])
def test_dropping_a_stored_version_is_refused_as_check_says(
    servers: dict[str, Server], name: str, tmp_path: Path
) -> None:
    """A new revision without the version objects are stored in: `apiforge check --kubeconfig` says that the
    server will refuse it, in the words the server then refuses it with."""
    (tmp_path / "definitions").mkdir()
    (tmp_path / "definitions" / "droplets.yaml").write_text(yaml.safe_dump(dropping_crd("v2")))
    with servers[name].client(timeout=30) as http:
        created = http.post(CRD_PATH, json=dropping_crd("v1"))
        assert created.status_code == 201, created.text
        try:
            checked = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "apiforge",
                    "check",
                    f"--kubeconfig={servers[name].kubeconfig}",
                ],
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=60,
            )
            refused = replaced(http, dropping_crd("v2"))
        finally:
            http.delete(f"{CRD_PATH}/droplets.drop.example.com")
    assert refused.status_code == 422, refused.text
    (cause,) = refused.json()["details"]["causes"]
    words = f"{cause['field']}: {cause['message']}"
    assert words.startswith(
        'status.storedVersions[0]: Invalid value: "v1": missing from spec.versions'
    )
    assert checked.returncode == 1, checked.stderr
    assert (
        f": breaking: stored-version-removed: Droplet.drop.example.com/v1: {words}\n"
        in checked.stdout
    )


RATCHETS = "ratchets.ratchet.example.com"


def ratcheting_crd(max_length: int) -> dict[str, Any]:
    """A CRD of ratchet.example.com whose spec.name is at most ``max_length`` characters."""
    fields = {"name": {"type": "string", "maxLength": max_length}, "size": {"type": "integer"}}
    root = {"type": "object", "properties": {"spec": {"type": "object", "properties": fields}}}
    version = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": root}}
    spec: dict[str, Any] = {
        "group": "ratchet.example.com",
        "scope": "Namespaced",
        "versions": [version],
    }
    spec["names"] = {"plural": "ratchets", "kind": "Ratchet"}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}
    return {**crd, "metadata": {"name": RATCHETS}, "spec": spec}


def refused_once_served(http: httpx.Client, objects: str, obj: dict[str, Any]) -> None:
    """Wait until the CRD's new schema serves (a server installs it in the background): ``obj`` created
    with dryRun is refused."""
    for _ in range(300):
        if http.post(objects, params={"dryRun": "All"}, json=obj).status_code == 422:
            return
        time.sleep(0.1)
    raise AssertionError("the tightened schema was not served within 300 tries")


def ratcheted(server: Server, cache: Path) -> dict[str, int]:
    """The answers, after spec.name's maxLength went from 20 to 10, to: reading an object stored with a
    15-character name, updating another field of it, updating its name to another 15 characters, and
    creating one with such a name."""
    objects = f"/apis/ratchet.example.com/v1/namespaces/{NAMESPACE}/ratchets"
    body = {"apiVersion": "ratchet.example.com/v1", "kind": "Ratchet", "metadata": {"name": "old"}}
    answers = {}
    with server.client(timeout=30) as http:
        assert http.post(CRD_PATH, json=ratcheting_crd(20)).status_code == 201
        try:
            Kubectl(kubectl_binary(33), server.kubeconfig, cache).run(
                "wait", "--for=condition=Established", "--timeout=60s", "crd/" + RATCHETS
            )
            stored = http.post(
                objects, json={**body, "spec": {"name": "fifteen-letters", "size": 1}}
            )
            assert stored.status_code == 201, stored.text
            assert replaced(http, ratcheting_crd(10)).status_code == 200
            refused_once_served(http, objects, {**body, "spec": {"name": "fifteen-letters"}})
            answers["read"] = http.get(f"{objects}/old").status_code
            for name, spec in (
                ("other field", {"size": 2}),
                ("same field", {"name": "other-15-letter"}),
            ):
                current = http.get(f"{objects}/old").json()
                changed = {**current, "spec": {**current["spec"], **spec}}
                answers[name] = http.put(f"{objects}/old", json=changed).status_code
            new = {**body, "metadata": {"name": "new"}, "spec": {"name": "fifteen-letters"}}
            answers["create"] = http.post(objects, json=new).status_code
        finally:
            http.delete(f"{CRD_PATH}/{RATCHETS}")
    return answers


def test_a_tightened_bound_ratchets_on_kube_and_apiforge_as_check_says(
    servers: dict[str, Server], tmp_path: Path
) -> None:
    """What `apiforge check`'s validation-tightened finding says (generator.evolution_schema.RATCHETING):
    stored objects that fail the new bound still read, updates that leave the value unchanged pass, creates
    and updates that change it are refused."""
    answers = {name: ratcheted(server, tmp_path / name) for name, server in servers.items()}
    assert answers["kube"] == {"read": 200, "other field": 200, "same field": 422, "create": 422}
    assert answers["apiforge"] == answers["kube"]


def stale_invalid_update(server: Server) -> tuple[int, str]:
    """The answer to a PUT of a CronTab that is both invalid (negative replicas) and stale (the
    resourceVersion of the object before another update)."""
    path = f"/apis/stable.example.com/v1/namespaces/{NAMESPACE}/crontabs"
    with server.client(timeout=30) as http:
        created = http.post(path, json=crontab("stale"))
        assert created.status_code == 201, created.text
        first = created.json()
        again = http.put(f"{path}/stale", json={**first, "spec": {**first["spec"], "image": "x"}})
        assert again.status_code == 200, again.text
        answer = http.put(
            f"{path}/stale", json={**first, "spec": {**first["spec"], "replicas": -1}}
        )
        http.delete(f"{path}/stale")
    return answer.status_code, answer.json()["reason"]


def test_a_stale_invalid_update_is_a_conflict_on_kube_and_apiforge(
    servers: dict[str, Server],
) -> None:
    """kube's GuaranteedUpdate checks the resourceVersion before the strategy validates a custom resource
    (k8s.io/apiserver/pkg/registry/generic/registry/store.go, Update): 409, not 422."""
    answers = {name: stale_invalid_update(server) for name, server in servers.items()}
    assert answers == {"kube": (409, "Conflict"), "apiforge": (409, "Conflict")}
