"""kube-apiserver's health endpoints (/healthz, /livez, /readyz), as k8s.io/apiserver/pkg/server/healthz
serves them: named checks run on every request; ``?verbose`` lists them as ``[+]name ok`` and
``[-]name failed: reason withheld`` (and ``[+]name excluded: ok``) and ends with ``<endpoint> check passed``; a failing check makes the
endpoint a 500 whose body always lists the checks and ends with ``<endpoint> check failed`` (the reasons are
withheld from the client and logged); ``?exclude=name`` skips a check (an unknown one is warned about in the
listing); ``/<endpoint>/<check>`` runs one check (``ok``, or a 500 ``internal server error: <reason>``); an
unknown check is a 404.

The storage check is named ``etcd`` whatever the backend, as kube names it, and reads one key as kube's
etcd health check does (``GET /registry/health`` with a 2 s timeout,
k8s.io/apiserver/pkg/storage/storagebackend/factory/etcd3.go ``newETCD3Check``): at most one read per half
of that timeout, each endpoint's check on its own (kube makes one check for /healthz and one for /readyz); a
request in between gets the verdict of the last read sent, so a flood of probes costs the storage nothing.
/livez does not run it: restarting the server does not bring a database back, so liveness tells only whether
this process answers. The checks of a request run one after another, as kube's ``handleRootHealth`` runs
them: a check that need not wait answers within the turn of the loop that parsed the request.

The checks are a registry (kube's AddHealthChecks, AddReadyzChecks, AddLivezChecks): the server registers
``ping``, ``log``, ``etcd``, ``informer-sync`` (readyz: every watch cache has listed), one
``poststarthook/<name>`` per post-start hook (failing until the hook has run) and ``shutdown`` (readyz: fails
from the moment the server starts shutting down, through ``--shutdown-delay-duration``, so load balancers
stop sending before the listener closes); any other component adds its own with :meth:`Health.add`.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qsl

from apiserver.endpoints.http import Scope, Send, respond
from apiserver.registry.admit import go_quoted
from apiserver.storage.interface import Storage

log = logging.getLogger(__name__)

ENDPOINTS: Final = ("healthz", "livez", "readyz")
STORAGE_TIMEOUT: Final = 2.0
"""kube's ``--etcd-healthcheck-timeout`` default."""
HEALTH_KEY: Final = "/registry/health"
"""The key kube's etcd check reads (``path.Join("/", prefix, "health")``): no resource lives there."""
_TEXT: Final = b"text/plain; charset=utf-8"
_NOSNIFF: Final = [(b"x-content-type-options", b"nosniff")]

Probe = Callable[[], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Check:
    """One named check: ``probe`` returns when healthy and raises (with the reason) when not."""

    name: str
    probe: Probe


class Health:
    """The three endpoints over named checks. Every request asks again (the storage's check at most once
    per half of its timeout), so a check that failed recovers as soon as what it probes does."""

    def __init__(self, storage: Storage) -> None:
        self.checks: dict[str, list[Check]] = {endpoint: [] for endpoint in ENDPOINTS}
        self.shutting_down = False
        """Set when shutdown begins: readiness fails from then on (kube's ShutdownInitiated)."""
        self.add(Check("ping", _ok))
        self.add(Check("log", _ok))  # kube's checks that the log flushes; ours writes synchronously
        for endpoint in ("healthz", "readyz"):
            self.add(Check("etcd", StorageProbe(storage)), endpoint)

    def add(self, check: Check, *endpoints: str) -> None:
        """Register ``check`` on ``endpoints`` (all three when none are named), after those there.
        A name is registered once per endpoint, as kube refuses a second check of one name."""
        for endpoint in endpoints or ENDPOINTS:
            listed = self.checks[endpoint]
            if any(known.name == check.name for known in listed):
                raise ValueError(f"{endpoint}: a health check named {check.name!r} is registered")
            listed.append(check)

    def post_start_hook(self, name: str) -> Callable[[], None]:
        """Register ``poststarthook/<name>`` on every endpoint, failing until the returned callable is
        called once the hook has run (kube's postStartHookHealthz: ``not finished``)."""
        done = asyncio.Event()

        async def probe() -> None:
            if not done.is_set():
                raise RuntimeError("not finished")

        self.add(Check(f"poststarthook/{name}", probe))
        return done.set

    def add_shutdown_check(self) -> None:
        """The readyz ``shutdown`` check, registered last as kube lists it."""

        async def probe() -> None:
            if self.shutting_down:
                raise RuntimeError("process is shutting down")

        self.add(Check("shutdown", probe), "readyz")

    def handles(self, path: str) -> bool:
        endpoint = path.strip("/").partition("/")[0]
        return endpoint in ENDPOINTS

    async def serve(self, scope: Scope, send: Send) -> None:
        """Answer a request whose path :meth:`handles`."""
        endpoint, _, name = scope["path"].strip("/").partition("/")
        checks = list(self.checks[endpoint])  # as registered now: a check added meanwhile waits
        if name:
            await self._serve_one(send, checks, name)
            return
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        verbose = any(key == "verbose" for key, _ in query)
        excluded = {value for key, value in query if key == "exclude"}
        await self._serve_all(send, endpoint, checks, excluded, verbose)

    async def _serve_one(self, send: Send, checks: list[Check], name: str) -> None:
        check = next((c for c in checks if c.name == name), None)
        if check is None:
            await _respond(send, 404, "404 page not found\n")
            return
        reason = await _run(check)
        if reason is None:
            await _respond(send, 200, "ok")
        else:
            await _respond(send, 500, f"internal server error: {reason}\n")

    async def _serve_all(
        self,
        send: Send,
        endpoint: str,
        checks: list[Check],
        excluded: set[str],
        verbose: bool,
    ) -> None:
        """kube's handleRootHealth: every check not excluded, in order; an excluded one is listed as
        ``[+]name excluded: ok`` (healthz_test.go)."""
        reasons = {check: await _run(check) for check in checks if check.name not in excluded}
        lines: list[str] = []
        failed: list[str] = []
        for check in checks:
            if check not in reasons:
                lines.append(f"[+]{check.name} excluded: ok\n")
            elif (reason := reasons[check]) is None:
                lines.append(f"[+]{check.name} ok\n")
            else:
                lines.append(f"[-]{check.name} failed: reason withheld\n")
                failed.append(f"[-]{check.name} failed: {reason}")
        unknown = sorted(excluded - {c.name for c in checks})
        if unknown:
            quoted = ",".join(go_quoted(name) for name in unknown)
            lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}\n")
        listing = "".join(lines)
        if failed:
            log.warning("%s check failed: %s", endpoint, "; ".join(failed))
            await _respond(
                send, 500, f"{listing}{endpoint} check failed\n"
            )  # Go's http.Error adds \n
        elif verbose:
            await _respond(send, 200, f"{listing}{endpoint} check passed\n")
        else:
            await _respond(send, 200, "ok")


class StorageProbe:
    """kube's etcd check (etcd3.go ``newETCD3Check``): one read of a key no resource uses, bounded by the
    timeout (a backend that cannot answer in time is down), sent at most once per half of the timeout
    (``rate.NewLimiter(rate.Every(timeout/2), 1)``); a request the limit turns away gets the verdict of the
    last read sent, which is "not yet established" until the first read answers."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self._next_read = -math.inf
        """Loop time from which a read may be sent again."""
        self._verdict: Exception | None = RuntimeError("etcd client connection not yet established")
        self._verdict_sent = -math.inf
        """When the read that gave ``_verdict`` was sent: an older read answering later changes nothing."""

    async def __call__(self) -> None:
        now = asyncio.get_running_loop().time()
        if now < self._next_read:
            verdict = self._verdict
        else:
            self._next_read = now + STORAGE_TIMEOUT / 2
            verdict = await self._read()
            if now > self._verdict_sent:
                self._verdict, self._verdict_sent = verdict, now
        if verdict is not None:
            raise verdict

    async def _read(self) -> Exception | None:
        try:
            await asyncio.wait_for(self.storage.get(HEALTH_KEY), STORAGE_TIMEOUT)
        except TimeoutError:
            return RuntimeError(f"error getting data from etcd: no answer in {STORAGE_TIMEOUT:g}s")
        except Exception as error:  # kube's words (etcd3.go newETCD3Check), whatever went wrong
            return RuntimeError(f"error getting data from etcd: {error}")
        return None


async def _ok() -> None:
    """The checks that hold whenever this process answers at all."""


async def _run(check: Check) -> str | None:
    """None when ``check`` passes, else its reason."""
    try:
        await check.probe()
    except Exception as error:  # any failure is the check's verdict, never the request's
        return str(error) or type(error).__name__
    return None


async def _respond(send: Send, status: int, text: str) -> None:
    """kube answers health endpoints as text/plain with nosniff (healthz.go, http.Error)."""
    await respond(send, status, text.encode(), _TEXT, headers=_NOSNIFF)
