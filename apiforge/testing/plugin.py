"""The pytest plugin (entry point ``pytest11``: loaded by every pytest run where apiforge is installed).

Fixtures, all named ``apiforge_*``:

* ``apiforge_server`` (session): the project's API served in the test process (apiforge.testing.server), one
  per process, so one per pytest-xdist worker; nothing is shared between workers (each has its own port and
  memory storage).
* ``apiforge_namespace``: a namespace of the test's own, created for it and deleted after it: tests that
  keep to their namespace share the session's server without seeing each other's objects.
* ``apiforge_kubeconfig``: a kubeconfig file for tools in other processes (kubectl, a kopf operator), whose
  context defaults to the test's namespace.
* ``apiforge_connection``: a typed-client connection (apiclient) as the admin; ``apiforge_server.config()``
  configures others (an ``AsyncConnection``).
* ``apiforge_fresh_server``: a server of the test's own, started from the session server's storage as it was
  at start (so with its CRDs): for tests that change what is cluster-wide (CRDs, ClusterRoles).

What is served comes from the ini options ``apiforge_project`` (the directory whose ``generated/`` package
is served; default: the rootdir), ``apiforge_crds`` (CRD files installed at start, relative to the rootdir),
``apiforge_tls`` (default true) and ``apiforge_rbac`` (default false: every request is allowed), or from an
``apiforge_settings`` fixture of the project's own.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from apiclient import Connection
    from apiforge.testing.server import Settings, TestServer

NAMESPACE_PATH = "/api/v1/namespaces"
_numbers = itertools.count(1)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "apiforge_project", "directory whose generated/ the test server serves", default=""
    )
    parser.addini("apiforge_crds", "CRD files the test server installs at start", type="paths")
    parser.addini("apiforge_tls", "serve the test server over TLS", type="bool", default=True)
    parser.addini("apiforge_rbac", "authorize by RBAC (else allow all)", type="bool", default=False)


@pytest.fixture(scope="session")
def apiforge_settings(pytestconfig: pytest.Config) -> Settings:
    """What the session's servers serve, from the ini options."""
    from apiforge.testing.server import Settings

    project = str(pytestconfig.getini("apiforge_project") or "")
    root = pytestconfig.rootpath
    return Settings(
        project=root / project if project else root,
        crds=tuple(Path(path) for path in pytestconfig.getini("apiforge_crds")),
        tls=bool(pytestconfig.getini("apiforge_tls")),
        rbac=bool(pytestconfig.getini("apiforge_rbac")),
    )


@pytest.fixture(scope="session")
def apiforge_server(
    apiforge_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestServer]:
    from apiforge.testing.server import TestServer

    with TestServer(apiforge_settings, tmp_path_factory.mktemp("apiforge")) as server:
        yield server


@pytest.fixture
def apiforge_fresh_server(apiforge_server: TestServer, tmp_path: Path) -> Iterator[TestServer]:
    with apiforge_server.fork(tmp_path / "apiforge") as server:
        yield server


@pytest.fixture
def apiforge_namespace(
    apiforge_server: TestServer, request: pytest.FixtureRequest
) -> Iterator[str]:
    """A new namespace named after the test (``t<n>-<test name>``), deleted after it."""
    name = namespace_name(request.node.name, next(_numbers))
    with apiforge_server.http() as client:
        created = client.post(NAMESPACE_PATH, json={"metadata": {"name": name}})
        created.raise_for_status()
        yield name
        client.delete(f"{NAMESPACE_PATH}/{name}")


def namespace_name(test: str, number: int) -> str:
    """A DNS label (kube's namespace names) from a test's name, unique in the process by ``number``."""
    slug = re.sub(r"[^a-z0-9]+", "-", test.lower()).strip("-")
    return f"t{number}-{slug}"[:63].rstrip("-")


@pytest.fixture
def apiforge_kubeconfig(
    apiforge_server: TestServer, apiforge_namespace: str, tmp_path: Path
) -> Path:
    return apiforge_server.write_kubeconfig(tmp_path / "kubeconfig", apiforge_namespace)


@pytest.fixture
def apiforge_connection(apiforge_server: TestServer) -> Iterator[Connection]:
    from apiclient import Connection

    with Connection(apiforge_server.config()) as connection:
        yield connection
