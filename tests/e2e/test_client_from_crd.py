"""`apiforge client --from-crd`: a package of typed clients for every real-world CRD under tests/fixtures/crds
(cert-manager, Gateway API, prometheus-operator, kubebuilder, Argo, Crossplane, Knative, the k8s docs' CronTab),
each generated, imported and round-tripped through a server that has the CRD applied (the samples of
tests/fixtures/custom-resources, or a small object of the kind where the fixtures have none): created from the
model, read back, listed, watched, patched, applied and deleted through the typed client, the object the
model reads back being the server's. One package is pip-installed, and a program using it type-checks under
``mypy --strict``."""

from __future__ import annotations

import copy
import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from mypy import api

from apiclient import Connection, Kind, Resource
from apiclient.applyconfig import extract_fields
from apiforge.cli import main
from apiforge.testing import Settings, TestServer
from tests.e2e.test_crd_runtime import CRDS, RUNTIME_GROUP, SAMPLE_FILES, SAMPLES, renamed

pytestmark = pytest.mark.timeout(600)

ROOT = Path(__file__).parents[2]
CRONTAB = CRDS / "k8s-docs-crontab"
# every CRD fixture; the k8s docs' CronTab (in all its variants) moved out of the project's own group
CRD_FILES = sorted(CRDS.glob("*.yaml")) + sorted(CRONTAB.glob("*.yaml"))
# the CRD each served name is installed from (the multi-version CronJob supersedes the single-version one)
INSTALLED = [
    path
    for path in CRD_FILES
    if path.parent == CRDS and path.name != "batch.tutorial.kubebuilder.io_cronjobs.yaml"
] + [CRONTAB / "crontab-basic.yaml"]
# objects of the kinds the fixtures hold no sample of, written for this test
OWN_SAMPLES: list[dict[str, Any]] = [
    {
        "apiVersion": "apiextensions.crossplane.io/v1",
        "kind": "Composition",
        "metadata": {"name": "xdatabases"},
        "spec": {
            "compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XDatabase"},
            "mode": "Pipeline",
            "pipeline": [
                {"step": "patch", "functionRef": {"name": "function-patch-and-transform"}}
            ],
        },
    },
    {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "guestbook", "namespace": "default"},
        "spec": {
            "project": "default",
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "guestbook"},
            "source": {"repoURL": "https://example.org/apps.git", "path": "guestbook"},
        },
    },
    {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"name": "hello", "namespace": "default"},
        "spec": {
            "entrypoint": "main",
            "templates": [{"name": "main", "container": {"image": "busybox"}}],
        },
    },
    {
        "apiVersion": "serving.knative.dev/v1",
        "kind": "Service",
        "metadata": {"name": "hello", "namespace": "default"},
        "spec": {"template": {"spec": {"containers": [{"image": "example.org/hello"}]}}},
    },
    {
        "apiVersion": f"{RUNTIME_GROUP}/v1",
        "kind": "CronTab",
        "metadata": {"name": "my-new-cron-object", "namespace": "default"},
        "spec": {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image"},
    },
]


def crd_text(path: Path) -> str:
    return renamed(path.read_text())


def package_of(path: Path) -> str:
    return "crd_" + path.stem.replace(".", "_").replace("-", "_")


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every CRD's package, written by the command line, importable from the returned directory."""
    root = tmp_path_factory.mktemp("clients")
    sources = tmp_path_factory.mktemp("crds")
    runner = CliRunner()
    for path in CRD_FILES:
        source = sources / path.name
        source.write_text(crd_text(path))
        result = runner.invoke(
            main,
            [
                "client",
                "--from-crd",
                str(source),
                "--package",
                package_of(path),
                "--out",
                str(root / path.stem),
            ],
        )
        assert result.exit_code == 0, result.output
    sys.path[:0] = [str(root / path.stem) for path in CRD_FILES]
    yield root
    del sys.path[: len(CRD_FILES)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestServer]:
    crds = [yaml.load(crd_text(path), Loader=yaml.CSafeLoader) for path in INSTALLED]
    settings = Settings(project=ROOT)
    with TestServer(settings, tmp_path_factory.mktemp("server"), crds=crds) as test_server:
        with test_server.http() as client:
            for namespace in ("infra-ns", "monitoring"):
                client.post("/api/v1/namespaces", json={"metadata": {"name": namespace}})
        yield test_server


def samples() -> list[dict[str, Any]]:
    documents = [
        document
        for sample in SAMPLE_FILES
        for document in yaml.safe_load_all((SAMPLES / sample).read_text())
        if document
    ]
    return documents + OWN_SAMPLES


def client_module(path: Path, group: str, version: str) -> ModuleType:
    group_package = group.replace(".", "_").replace("-", "_")
    return importlib.import_module(f"{package_of(path)}.{group_package}.{version}.client")


def crd_of(kind: str, api_version: str) -> Path:
    group = api_version.split("/")[0]
    for path in INSTALLED:
        crd = yaml.load(crd_text(path), Loader=yaml.CSafeLoader)
        if crd["spec"]["group"] == group and crd["spec"]["names"]["kind"] == kind:
            return path
    raise LookupError(kind)


def resource_of(sample: dict[str, Any], connection: Connection) -> Resource[Any]:
    """The typed client of the sample's kind, from the module of its CRD's package."""
    group, version = sample["apiVersion"].split("/")
    module = client_module(crd_of(sample["kind"], sample["apiVersion"]), group, version)
    (kind,) = [
        value
        for value in vars(module).values()
        if isinstance(value, Kind) and value.kind == sample["kind"]
    ]
    accessor = getattr(module, kind.plural.replace("-", "_"))
    resource: Resource[Any] = accessor(connection)
    return resource


@pytest.mark.parametrize("path", CRD_FILES, ids=lambda path: path.stem)
def test_every_crd_makes_an_importable_package(packages: Path, path: Path) -> None:
    crd = yaml.load(crd_text(path), Loader=yaml.CSafeLoader)
    spec = crd["spec"]
    for version in (v for v in spec["versions"] if v.get("served", True)):
        module = client_module(path, spec["group"], version["name"])
        models = importlib.import_module(module.__name__.rsplit(".", 1)[0] + ".models")
        assert isinstance(getattr(models, spec["names"]["kind"]), type)
        assert callable(getattr(module, spec["names"]["plural"].replace("-", "_") + "_async"))
    assert (packages / path.stem / "pyproject.toml").is_file()


@pytest.mark.parametrize(
    "sample",
    samples(),
    ids=lambda s: f"{s['kind']}-{s['apiVersion'].split('/')[1]}-{s['metadata']['name']}",
)
def test_a_sample_round_trips_through_the_typed_client(
    packages: Path, server: TestServer, sample: dict[str, Any]
) -> None:
    with Connection(server.config()) as connection, server.http() as http:
        resource = resource_of(sample, connection)
        namespaced = resource.kind.namespaced
        namespace = sample["metadata"].get("namespace", "default") if namespaced else ""
        sample = copy.deepcopy(sample)
        if namespaced:  # as kubectl sets its context's namespace on an object that names none
            sample["metadata"]["namespace"] = namespace
        created = resource.create(resource.kind.model.model_validate(sample))
        name = created.metadata.name
        try:
            raw = http.get(resource.kind.path(namespace, name)).json()
            got = resource.get(name, namespace)
            # the model reads the server's object whole: nothing dropped, nothing added
            assert got.model_dump(mode="json", exclude_unset=True)["spec"] == raw["spec"]
            assert name in [item.metadata.name for item in resource.list(namespace)]
            events = resource.watch(namespace, resource_version="0", timeout_seconds=1)
            assert any(event.object.metadata.name == name for event in events)
            patched = resource.patch(name, {"metadata": {"labels": {"round": "trip"}}}, namespace)
            assert patched.metadata.labels["round"] == "trip"
            sample["metadata"]["labels"] = {"owner": "me"}
            applied = resource.apply(
                resource.kind.model.model_validate(sample), field_manager="tester", force=True
            )
            # what the manager owns (on the wire: a kind whose schema requires a spec the manager may not own)
            owned = extract_fields(applied.model_dump(mode="json", exclude_unset=True), "tester")
            assert owned["metadata"]["labels"] == {"owner": "me"}
        finally:
            resource.delete(name, namespace)


def test_a_package_installs_with_pip_and_type_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two CRDs of one group in one package, installed by pip (from its pyproject), and a program using it
    under ``mypy --strict``: each verb returns the kind's model."""
    out = tmp_path / "certmanager"
    result = CliRunner().invoke(
        main,
        [
            "client",
            "--from-crd",
            str(CRDS / "cert-manager.io_issuers.yaml"),
            str(CRDS / "cert-manager.io_certificates.yaml"),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(out),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    assert (target / "certmanager" / "cert_manager_io" / "v1" / "client.py").is_file()
    assert (target / "certmanager" / "py.typed").is_file()
    usage = tmp_path / "usage.py"
    usage.write_text(USAGE)
    monkeypatch.setenv("MYPYPATH", str(target))
    stdout, stderr, status = api.run(["--strict", "--no-incremental", str(usage)])
    assert status == 0, stdout + stderr


USAGE = """
from typing import assert_type

from apiclient import AsyncConnection, Connection, Informer, extract
from certmanager.cert_manager_io.v1.client import certificates, issuers, issuers_async
from certmanager.cert_manager_io.v1.models import Certificate, Issuer, IssuerSpec, IssuerSpecSelfSigned
from certmanager.meta.v1.models import ObjectMeta


def use(connection: Connection) -> None:
    issuer = issuers(connection).create(
        Issuer(metadata=ObjectMeta(name="a", namespace="default"),
               spec=IssuerSpec(self_signed=IssuerSpecSelfSigned()))
    )
    assert_type(issuer, Issuer)
    assert_type(certificates(connection).list("default"), list[Certificate])
    assert_type(extract(issuer, "me"), Issuer)


async def watch(connection: AsyncConnection) -> None:
    informer = Informer(issuers_async(connection), "default")
    assert_type(informer.lister().get("a", "default"), Issuer | None)
"""
