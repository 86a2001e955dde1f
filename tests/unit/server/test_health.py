"""The health endpoints' verdicts and kube's healthz.go format (its healthz_test.go cases), over a storage
whose reads can be made to fail or to hang: the storage check fails while they do (a hang within the 2 s
timeout), withholds the reason from the listing, gives it on /readyz/etcd, logs it, and recovers by itself;
as kube's etcd check, it reads at most once per half of its timeout and answers in between with the verdict
of the last read sent."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from apiserver.server import health
from apiserver.server.chain import HandlerChain
from apiserver.storage.interface import KeyValue, StorageUnavailableError
from apiserver.storage.memory import MemoryStorage
from tests.inprocess import InProcessServer, build_app

HOOKS = (
    "[+]poststarthook/generic-apiserver-start-informers ok\n"
    "[+]poststarthook/bootstrap-controller ok\n"
    "[+]poststarthook/kube-apiserver-autoregistration ok\n"
    "[+]poststarthook/rbac/bootstrap-roles ok\n"
)
"""The post-start hooks, listed by every endpoint after the server's own checks, as kube lists them."""
DOWN = "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n"
LISTING_DOWN = {
    "healthz": DOWN + HOOKS,
    "readyz": DOWN + "[+]informer-sync ok\n" + HOOKS + "[+]shutdown ok\n",
}


class FlakyStorage(MemoryStorage):
    """Memory storage whose health-key read fails (``down``) or hangs (``hang``) on demand."""

    down = False
    hang = False
    reads = 0
    """Reads of the health key."""

    async def get(self, key: str) -> KeyValue | None:
        if key == health.HEALTH_KEY:
            self.reads += 1
            if self.down:
                raise StorageUnavailableError("connection refused")
            if self.hang:
                await asyncio.sleep(60)
        return await super().get(key)


@pytest.fixture
def storage() -> FlakyStorage:
    return FlakyStorage()


@pytest.fixture
def client(storage: FlakyStorage) -> Iterator[httpx.Client]:
    with InProcessServer(build_app(storage)) as server, server.client() as http:
        yield http


@pytest.mark.parametrize("endpoint", ["healthz", "readyz"])
def test_a_failing_storage_fails_the_endpoint_with_the_reason_withheld(
    client: httpx.Client, storage: FlakyStorage, endpoint: str, caplog: pytest.LogCaptureFixture
) -> None:
    storage.down = True
    with caplog.at_level(logging.WARNING, logger=health.__name__):
        for query in ("", "?verbose"):
            response = client.get(f"/{endpoint}{query}")
            assert response.status_code == 500
            assert response.text == f"{LISTING_DOWN[endpoint]}{endpoint} check failed\n"
            assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert "error getting data from etcd: connection refused" in caplog.text  # logged, not shown
    one = client.get(f"/{endpoint}/etcd")
    assert (one.status_code, one.text) == (
        500,
        "internal server error: error getting data from etcd: connection refused\n",
    )
    assert client.get(f"/{endpoint}/ping").text == "ok"
    excluded = client.get(f"/{endpoint}?exclude=etcd")
    assert (excluded.status_code, excluded.text) == (200, "ok")


def test_livez_does_not_depend_on_storage(client: httpx.Client, storage: FlakyStorage) -> None:
    storage.down = True
    response = client.get("/livez?verbose")
    assert (response.status_code, response.text) == (
        200,
        f"[+]ping ok\n[+]log ok\n{HOOKS}livez check passed\n",
    )


def test_a_hanging_storage_fails_within_the_timeout_and_recovery_needs_nothing(
    client: httpx.Client, storage: FlakyStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(health, "STORAGE_TIMEOUT", 0.2)
    storage.hang = True
    one = client.get("/readyz/etcd")
    assert one.status_code == 500
    assert one.text == "internal server error: error getting data from etcd: no answer in 0.2s\n"
    storage.hang = False
    assert client.get("/readyz").text == "ok"


@pytest.mark.parametrize(
    ("path", "status", "body"),
    [
        ("/readyz", 200, "ok"),
        ("/readyz?exclude=dontexist", 200, "ok"),
        ("/readyz?verbose=true&exclude=etcd", 200,
         "[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\n[+]informer-sync ok\n"
         f"{HOOKS}[+]shutdown ok\nreadyz check passed\n"),
        ("/healthz?verbose&exclude=dontexist", 200,
         f"[+]ping ok\n[+]log ok\n[+]etcd ok\n{HOOKS}"
         'warn: some health checks cannot be excluded: no matches for "dontexist"\n'
         "healthz check passed\n"),
        ("/readyz/log", 200, "ok"),
        ("/readyz/bogus", 404, "404 page not found\n"),
        ("/livez/etcd", 404, "404 page not found\n"),
        ("/livez/shutdown", 404, "404 page not found\n"),
        ("/readyz/poststarthook/rbac/bootstrap-roles", 200, "ok"),
        ("/readyz/informer-sync", 200, "ok"),
    ],
)  # fmt: skip
def test_healthy_answers(client: httpx.Client, path: str, status: int, body: str) -> None:
    response = client.get(path)
    assert (response.status_code, response.text) == (status, body)
    assert response.headers["x-content-type-options"] == "nosniff"


def test_components_register_checks_and_hooks_of_their_own(storage: FlakyStorage) -> None:
    """The registry others add to (a leader election's readiness, an aggregated API's availability): a
    check on the endpoints it names only, a hook failing ``not finished`` until it has run, a name once."""
    app = build_app(storage)
    assert isinstance(app, HandlerChain)
    registry = app.server.health
    healthy = True

    async def probe() -> None:
        if not healthy:
            raise RuntimeError("no leader")

    registry.add(health.Check("leader-election", probe), "readyz")
    finished = registry.post_start_hook("start-leader-election")
    with pytest.raises(ValueError, match="leader-election"):
        registry.add(health.Check("leader-election", probe), "readyz")
    with InProcessServer(app) as server, server.client() as client:
        hook = client.get("/livez/poststarthook/start-leader-election")
        assert (hook.status_code, hook.text) == (500, "internal server error: not finished\n")
        assert "[-]poststarthook/start-leader-election failed: reason withheld\n" in (
            client.get("/healthz").text
        )
        finished()
        assert client.get("/livez").text == "ok"
        assert client.get("/readyz/leader-election").text == "ok"
        assert client.get("/livez/leader-election").status_code == 404
        healthy = False
        down = client.get("/readyz?verbose")
        assert down.status_code == 500
        assert "[-]leader-election failed: reason withheld\n" in down.text
        assert client.get("/livez").status_code == 200


def test_readiness_fails_once_shutdown_begins(storage: FlakyStorage) -> None:
    app = build_app(storage)
    assert isinstance(app, HandlerChain)
    with InProcessServer(app) as server, server.client() as client:
        assert client.get("/readyz/shutdown").text == "ok"
        app.server.health.shutting_down = True
        down = client.get("/readyz")
        assert down.status_code == 500
        assert "[-]shutdown failed: reason withheld\n" in down.text
        assert client.get("/readyz/shutdown").text == (
            "internal server error: process is shutting down\n"
        )
        assert client.get("/livez").text == "ok"  # alive while it drains


def test_the_storage_is_read_at_most_once_per_half_timeout_per_endpoint(
    client: httpx.Client, storage: FlakyStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """etcd3.go newETCD3Check: ``rate.NewLimiter(rate.Every(timeout/2), 1)``, one check per endpoint; a
    request the limit turns away gets the last read's verdict."""
    monkeypatch.setattr(
        health, "STORAGE_TIMEOUT", 600.0
    )  # one read per 300 s: the rest are turned away
    assert [client.get("/readyz").text for _ in range(5)] == ["ok"] * 5
    assert storage.reads == 1
    assert client.get("/healthz/etcd").text == "ok"  # /healthz's check is another limiter
    assert storage.reads == 2
    storage.down = True
    assert client.get("/readyz").text == "ok"  # the last read's verdict, not a read
    assert client.get("/healthz/etcd").text == "ok"
    assert storage.reads == 2


def test_a_failure_shows_and_clears_once_the_limit_lets_a_read_through(
    client: httpx.Client, storage: FlakyStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(health, "STORAGE_TIMEOUT", 0.2)
    assert client.get("/readyz/etcd").text == "ok"
    storage.down = True
    started = time.monotonic()
    assert _wait_for_status(client, "/readyz/etcd", 500).text == (
        "internal server error: error getting data from etcd: connection refused\n"
    )
    storage.down = False
    assert _wait_for_status(client, "/readyz/etcd", 200).text == "ok"
    # a read per 0.1 s at most: the requests in between were answered without one
    assert storage.reads <= 2 + (time.monotonic() - started) / 0.1


def test_a_request_while_the_first_read_hangs_gets_kubes_initial_verdict(
    client: httpx.Client, storage: FlakyStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before any read has answered, kube's check says the client is "not yet established"."""
    monkeypatch.setattr(health, "STORAGE_TIMEOUT", 1.0)
    storage.hang = True
    first: list[httpx.Response] = []
    reading = threading.Thread(target=lambda: first.append(client.get("/readyz/etcd")))
    reading.start()
    try:
        deadline = time.monotonic() + 10
        while storage.reads == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert storage.reads == 1
        second = client.get("/readyz/etcd")
        assert (second.status_code, second.text) == (
            500,
            "internal server error: etcd client connection not yet established\n",
        )
    finally:
        reading.join()
    assert first[0].text == "internal server error: error getting data from etcd: no answer in 1s\n"


def _wait_for_status(client: httpx.Client, path: str, status: int) -> httpx.Response:
    deadline = time.monotonic() + 10
    while (answer := client.get(path)).status_code != status and time.monotonic() < deadline:
        time.sleep(0.02)
    return answer
