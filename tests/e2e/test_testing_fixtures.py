"""apiforge.testing's pytest fixtures as a project's suite uses them: this repository's own API served in the
test process, reached by kubectl through the kubeconfig fixture and by the typed client, a namespace per test,
a server per test forked from the session's, TLS and RBAC as options, and the ini options in a suite of its
own (pytester)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from apiclient import Connection
from apiclient.errors import Forbidden, NotFound
from apiforge.testing import Settings, TestServer
from apiforge.testing.plugin import namespace_name
from generated.meta.v1.models import ObjectMeta
from generated.stable_example_com.v1.client import CRON_TAB, crontabs
from generated.stable_example_com.v1.models import CronTab, CronTabSpec
from tests.kubectl import kubectl_binary

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).parents[2]
ISSUERS_CRD = ROOT / "tests/fixtures/crds/cert-manager.io_issuers.yaml"


def kubectl(kubeconfig: Path, *args: str) -> str:
    command = [str(kubectl_binary(33)), "--kubeconfig", str(kubeconfig), *args]
    return subprocess.run(command, capture_output=True, text=True, check=True, timeout=60).stdout


def tab(name: str, namespace: str) -> CronTab:
    return CronTab(
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=CronTabSpec(cron_spec="* * * * */5", image="report:1"),
    )


def test_kubectl_reads_what_the_typed_client_wrote_in_the_tests_namespace(
    apiforge_connection: Connection, apiforge_namespace: str, apiforge_kubeconfig: Path
) -> None:
    crontabs(apiforge_connection).create(tab("nightly", apiforge_namespace))
    listed = json.loads(kubectl(apiforge_kubeconfig, "get", "crontabs", "-o", "json"))
    assert [item["metadata"]["name"] for item in listed["items"]] == ["nightly"]
    assert listed["items"][0]["metadata"]["namespace"] == apiforge_namespace


SEEN: list[str] = []


@pytest.mark.parametrize("run", [1, 2])
def test_each_test_has_an_empty_namespace_of_its_own(
    apiforge_connection: Connection, apiforge_namespace: str, run: int
) -> None:
    tabs = crontabs(apiforge_connection)
    assert tabs.list(apiforge_namespace) == []  # the other run's tab is in its own namespace
    tabs.create(tab("same-name", apiforge_namespace))
    SEEN.append(apiforge_namespace)
    assert len(set(SEEN)) == run


def test_namespace_names_are_dns_labels() -> None:
    long = namespace_name("test_a_very_long_name[" + "x" * 80 + "]", 12)
    assert long.startswith("t12-test-a-very-long-name-x") and len(long) <= 63
    assert not long.endswith("-")
    assert namespace_name("TestCase::test[1-2]", 3) == "t3-testcase-test-1-2"


def test_a_fresh_server_is_the_tests_own(
    apiforge_server: TestServer, apiforge_fresh_server: TestServer
) -> None:
    assert apiforge_fresh_server.url != apiforge_server.url
    with apiforge_fresh_server.http() as fresh:
        created = fresh.post(
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            json={"metadata": {"name": "only-here"}, "rules": []},
        )
        assert created.status_code == 201, created.text
        # what the session's server wrote when it started is there: the default namespaces and roles
        assert fresh.get("/api/v1/namespaces/kube-system").status_code == 200
    with apiforge_server.http() as session:
        path = "/apis/rbac.authorization.k8s.io/v1/clusterroles/only-here"
        assert session.get(path).status_code == 404


def test_plain_http_with_rbac(tmp_path: Path) -> None:
    """TLS off: the kubeconfig names an http:// server and no credentials, and a request without any is
    kube's insecure-port user (system:masters); RBAC on: any other user is refused what it was not given."""
    with TestServer(Settings(project=ROOT, tls=False, rbac=True), tmp_path) as server:
        assert server.url.startswith("http://")
        assert "client-certificate-data" not in server.kubeconfig.read_text()
        assert "kube-system" in kubectl(server.kubeconfig, "get", "namespaces")
        with httpx.Client(base_url=server.url, headers={"Impersonate-User": "jane"}) as jane:
            refused = jane.get("/api/v1/namespaces/default/configmaps")
        assert refused.status_code == 403
        assert refused.json()["reason"] == "Forbidden"
        with Connection(server.config()) as connection, pytest.raises(NotFound):
            crontabs(connection).get("absent", "default")


def test_tls_with_rbac_serves_the_admin_certificate(tmp_path: Path) -> None:
    with TestServer(Settings(project=ROOT, rbac=True), tmp_path) as server:
        assert server.url.startswith("https://")
        assert "certificate-authority-data" in server.kubeconfig.read_text()
        with Connection(server.config()) as connection:  # the admin: system:masters
            assert crontabs(connection).list("default") == []
        impersonating = dataclasses.replace(server.config(), impersonate_user="jane")
        with Connection(impersonating) as connection, pytest.raises(Forbidden):
            crontabs(connection).list("default")


def test_a_projects_suite_configured_by_ini_options(pytester: pytest.Pytester) -> None:
    """A suite of its own: its ini names the project and a CRD; its tests use the fixtures by name only."""
    shutil.copy(ISSUERS_CRD, pytester.path / "issuers.yaml")
    pytester.makeini(
        f"""
        [pytest]
        apiforge_project = {ROOT}
        apiforge_crds = issuers.yaml
        apiforge_tls = false
        """
    )
    pytester.makepyfile(
        test_operator="""
        import subprocess

        from tests.kubectl import kubectl_binary


        def test_the_crd_is_served(apiforge_server, apiforge_kubeconfig, apiforge_namespace):
            assert apiforge_server.url.startswith("http://")
            issuer = {
                "apiVersion": "cert-manager.io/v1",
                "kind": "Issuer",
                "metadata": {"name": "selfsigned", "namespace": apiforge_namespace},
                "spec": {"selfSigned": {}},
            }
            with apiforge_server.http() as client:
                path = f"/apis/cert-manager.io/v1/namespaces/{apiforge_namespace}/issuers"
                assert client.post(path, json=issuer).status_code == 201
            out = subprocess.run(
                [str(kubectl_binary(33)), "--kubeconfig", str(apiforge_kubeconfig), "get", "issuers"],
                capture_output=True, text=True, check=True,
            ).stdout
            assert "selfsigned" in out


        def test_a_fresh_server_has_the_crd(apiforge_fresh_server):
            with apiforge_fresh_server.http() as client:
                assert client.get("/apis/cert-manager.io/v1/issuers").status_code == 200
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-W", "ignore")
    result.assert_outcomes(passed=2)


def test_each_xdist_worker_serves_a_cluster_of_its_own(pytester: pytest.Pytester) -> None:
    """Under pytest-xdist (``--dist each``: every worker runs the one test) each worker has its own server:
    both create the same cluster-wide name, which one shared server would refuse the second time (409)."""
    pytester.makeini(f"[pytest]\napiforge_project = {ROOT}\napiforge_tls = false\n")
    pytester.makepyfile(
        test_workers="""
        from pathlib import Path


        def test_a_cluster_wide_name(apiforge_server, worker_id):
            with apiforge_server.http() as client:
                created = client.post(
                    "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                    json={"metadata": {"name": "one-per-cluster"}, "rules": []},
                )
            assert created.status_code == 201, created.text
            (Path.cwd() / f"{worker_id}.url").write_text(apiforge_server.url)
        """
    )
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "each", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    urls = {path.stem: path.read_text() for path in pytester.path.glob("*.url")}
    assert sorted(urls) == ["gw0", "gw1"]
    assert urls["gw0"] != urls["gw1"]


COLD_START = """
import json, sys, tempfile
from pathlib import Path
from apiforge.testing import Settings, TestServer
with tempfile.TemporaryDirectory() as scratch:
    with TestServer(Settings(project=Path(sys.argv[1])), Path(scratch)):
        print(json.dumps(sorted(sys.modules)))
"""


def test_the_session_server_starts_without_what_only_some_requests_need() -> None:
    """A new process's first server start (what each pytest-xdist worker pays) imports neither the generated
    pydantic models, nor the typed clients' machinery, nor cel-rust (whose import loads its command line),
    nor the generator's CRD checks: each is imported when first used."""
    argv = [sys.executable, "-c", COLD_START, str(ROOT)]
    output = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True, timeout=60)
    started = set(json.loads(output.stdout.splitlines()[-1]))
    assert "generated.server" in started  # the project's API was served
    assert not {name for name in started if name.endswith(".models") and "generated" in name}
    assert not started & {"pydantic", "cel", "apiclient.connection", "generator.check"}


def test_the_scheme_names_the_model_the_typed_client_uses() -> None:
    """A version's model is named in the generated REST bindings (imported when first read): the name
    leads to the very class the typed client decodes into."""
    from generated.stable_example_com.rest import RESOURCES

    (resource,) = [r for r in RESOURCES if r.kind == "CronTab"]
    served = resource.version("v1")
    assert served is not None
    assert served.model_ref == "generated.stable_example_com.v1.models:CronTab"
    assert served.model is CRON_TAB.model is CronTab
