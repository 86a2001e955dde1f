"""/readyz tells the truth about storage (it answered 200 while etcd was down): a server on a real
etcd is not ready while etcd is stopped, is ready again by itself once etcd is back, and stays live
throughout. The body is kube's (k8s.io/apiserver/pkg/server/healthz/healthz.go and its tests): the checks
listed with reasons withheld, then ``readyz check failed``; ``/readyz/etcd`` gives the reason."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from tests.etcdproc import EtcdProcess, running_etcd
from tests.serverproc import client_on_backend

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def own_etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdProcess]:
    """This module's own etcd: the test stops it."""
    yield from running_etcd(tmp_path_factory.mktemp("etcd"))


@pytest.fixture(scope="module", params=["sqlite", "etcd"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, httpx.Client]]:
    with client_on_backend(request, tmp_path_factory, etcd_fixture="own_etcd") as client:
        yield request.param, client


HOOKS = (
    "[+]poststarthook/generic-apiserver-start-informers ok\n"
    "[+]poststarthook/bootstrap-controller ok\n"
    "[+]poststarthook/kube-apiserver-autoregistration ok\n"
    "[+]poststarthook/rbac/bootstrap-roles ok\n"
)
"""Every endpoint lists the post-start hooks after the server's own checks, as kube does."""


def wait_for(client: httpx.Client, path: str, status: int, within: float = 20.0) -> httpx.Response:
    deadline = time.monotonic() + within
    while True:
        response = client.get(path)
        if response.status_code == status or time.monotonic() > deadline:
            return response
        time.sleep(0.2)


def test_ready_and_verbose(server: tuple[str, httpx.Client]) -> None:
    _, client = server
    response = client.get("/readyz")
    assert (response.status_code, response.text) == (200, "ok")
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["x-content-type-options"] == "nosniff"
    verbose = client.get("/readyz?verbose")
    assert verbose.text == (
        f"[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]informer-sync ok\n{HOOKS}[+]shutdown ok\n"
        "readyz check passed\n"
    )
    assert (
        client.get("/livez?verbose").text == f"[+]ping ok\n[+]log ok\n{HOOKS}livez check passed\n"
    )
    assert client.get("/healthz/etcd").text == "ok"


def test_exclude_and_unknown_checks(server: tuple[str, httpx.Client]) -> None:
    _, client = server
    response = client.get("/readyz?verbose&exclude=etcd&exclude=nope")
    assert response.text == (
        f"[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\n[+]informer-sync ok\n{HOOKS}[+]shutdown ok\n"
        'warn: some health checks cannot be excluded: no matches for "nope"\nreadyz check passed\n'
    )
    missing = client.get("/readyz/bogus")
    assert (missing.status_code, missing.text) == (404, "404 page not found\n")
    assert client.get("/livez/etcd").status_code == 404  # livez has no storage check


@pytest.mark.parametrize(
    "server", ["etcd"], indirect=True
)  # only etcd stops under a running server
def test_not_ready_while_etcd_is_down_and_ready_again_after(
    server: tuple[str, httpx.Client], request: pytest.FixtureRequest
) -> None:
    _, client = server
    etcd: EtcdProcess = request.getfixturevalue("own_etcd")
    etcd.stop()
    try:
        down = wait_for(client, "/readyz", 500)
        assert down.status_code == 500, down.text
        assert down.text == (
            "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n[+]informer-sync ok\n"
            f"{HOOKS}[+]shutdown ok\nreadyz check failed\n"
        )
        verbose = client.get("/readyz?verbose")
        assert (verbose.status_code, verbose.text) == (500, down.text)
        one = client.get("/readyz/etcd")
        assert one.status_code == 500
        assert one.text.startswith("internal server error: error getting data from etcd: ")
        assert client.get("/healthz").status_code == 500
        live = client.get("/livez")
        assert (live.status_code, live.text) == (200, "ok")
        excluded = client.get("/readyz?exclude=etcd")
        assert (excluded.status_code, excluded.text) == (200, "ok")
    finally:
        etcd.restart()
    up = wait_for(client, "/readyz", 200)
    assert (up.status_code, up.text) == (200, "ok")
    assert client.get("/readyz/etcd").text == "ok"
