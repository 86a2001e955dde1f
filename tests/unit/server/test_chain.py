"""The chain as `apiforge serve` composes it (server/chain.py) around a real APIServer in-process: kube's
order, the options and their validation, lifespan through the chain, and the filters working together
(impersonation before authorization, audit around both, the reviews answering for the request's user)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result

import apiforge.cli
import apiserver.server.cli
from apiserver.authorization.authorizer import Authorizer
from apiserver.endpoints.http import Message
from apiserver.server.app import APIServer
from apiserver.server.chain import HandlerChain, build_handler_chain
from apiserver.server.limits import ConnectionLimits
from apiserver.server.options import ChainOptions, ServeOptions
from apiserver.storage import MemoryStorage
from generated.server import OPENAPI_DIR, build_apis
from tests.unit.filters.support import BASE_URL, RuleAuthorizer

WHOAMI = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
REVIEWS = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


def links(chain: HandlerChain) -> list[str]:
    assert isinstance(chain.server, APIServer)
    return [type(step).__name__ for step in chain.steps]


def test_the_filters_are_in_kube_apiserver_order(tmp_path: Path) -> None:
    server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR)
    chain = build_handler_chain(server, ChainOptions(audit_log_path=str(tmp_path / "audit.log")))
    # the metrics see what every later filter answers (kube records them in the handler, whose timeouts
    # and refusals they count too); WithTimeoutForNonLongRunningRequests and WithRequestDeadline come next
    assert links(chain) == [
        "AuditInitFilter",
        "RequestInfoFilter",
        "MetricsFilter",
        "TimeoutFilter",
        "AuthenticationFilter",
        "AuditFilter",
        "ImpersonationFilter",
        "PriorityAndFairnessFilter",
        "AuthorizationFilter",
    ]
    assert chain.auditor is not None
    chain.auditor.backend.close()
    apart = build_handler_chain(server, ChainOptions(enable_priority_and_fairness=False))
    assert "MaxInFlightFilter" in links(apart) and "PriorityAndFairnessFilter" not in links(apart)
    bare = build_handler_chain(server, ChainOptions(0, 0))
    assert links(bare) == [
        "AuditInitFilter",
        "RequestInfoFilter",
        "MetricsFilter",
        "TimeoutFilter",
        "AuthenticationFilter",
        "ImpersonationFilter",
        "AuthorizationFilter",
    ]


def test_the_options_are_validated_as_kube_apiserver_words_it() -> None:
    assert ChainOptions().validate() == []
    assert ChainOptions(authorization_mode="RBAC,AlwaysAllow").validate() == []
    assert ChainOptions(-1, -2, "AlwaysAllow,Magic,Webhook,AlwaysAllow").validate() == [
        "--max-requests-inflight can not be negative value",
        "--max-mutating-requests-inflight can not be negative value",
        'authorization-mode "Magic" is not a valid mode',
        'authorization-mode "Webhook" is not supported yet: the supported modes are AlwaysAllow, RBAC',
        'authorization-mode "AlwaysAllow,Magic,Webhook,AlwaysAllow" has mode specified more than once',
    ]


def test_serve_takes_the_chain_flags_and_refuses_a_bad_mode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    served: list[ServeOptions] = []
    monkeypatch.setattr(apiforge.cli, "_project_api", lambda: (None, Path("openapi")))
    monkeypatch.setattr(
        apiserver.server.cli, "run", lambda scheme, openapi_dir, options: served.append(options)
    )

    def serve_command(*arguments: str) -> Result:
        return CliRunner().invoke(apiforge.cli.main, ["serve", *arguments])

    flags = [
        "--max-requests-inflight=10",
        "--max-mutating-requests-inflight=0",
        "--audit-log-path=-",
        "--request-timeout=1m30s",
        "--min-request-timeout=60",
        "--read-header-timeout=2",
        "--read-body-timeout=3",
        "--idle-timeout=4",
        "--anonymous-auth=false",
        "--authorization-mode=AlwaysAllow",
        "--enable-priority-and-fairness=false",
    ]
    assert serve_command(*flags).exit_code == 0
    assert serve_command().exit_code == 0
    assert [options.chain for options in served] == [
        ChainOptions(
            10,
            0,
            "AlwaysAllow",
            "-",
            90.0,
            60.0,
            anonymous_auth=False,
            enable_priority_and_fairness=False,
        ),
        ChainOptions(400, 200, "RBAC", "", 60.0, 1800.0),  # secure by default
    ]
    assert [options.connection for options in served] == [
        ConnectionLimits(2.0, 3.0, 4.0),
        ConnectionLimits(32.0, 60.0, 90.0),  # kube's ReadHeaderTimeout and IdleTimeout
    ]
    no_unit = serve_command("--request-timeout=10")
    assert no_unit.exit_code == 2
    assert 'time: missing unit in duration "10"' in no_unit.output
    negative = serve_command("--request-timeout=-1s", "--min-request-timeout=-1")
    assert negative.exit_code == 2
    assert (
        "--request-timeout can not be negative value; --min-request-timeout can not be negative value"
        in negative.output
    )
    refused = serve_command("--authorization-mode=Webhook", "--max-requests-inflight=-1")
    assert refused.exit_code == 2
    assert (
        '--max-requests-inflight can not be negative value; authorization-mode "Webhook" is not'
        " supported yet: the supported modes are AlwaysAllow, RBAC"
    ) in refused.output
    assert len(served) == 2
    assert serve_command("--authorization-mode=RBAC,AlwaysAllow").exit_code == 0
    assert served[-1].chain.authorization_modes == ("RBAC", "AlwaysAllow")
    help_text = serve_command("--help").output
    for flag in (
        "--max-requests-inflight",
        "--max-mutating-requests-inflight",
        "--authorization-mode",
        "--audit-log-path",
        "--request-timeout",
        "--min-request-timeout",
    ):
        assert flag in help_text


def serve(
    options: ChainOptions,
    exchange: Callable[[httpx.AsyncClient], Awaitable[Any]],
    authorizer: Authorizer | None = None,
) -> Any:
    """Run the chain around a started APIServer (lifespan driven through the chain, as uvicorn drives it)
    and ``exchange`` with a client of it; stop it after."""

    async def main() -> Any:
        server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR, authorizer=authorizer)
        chain = build_handler_chain(server, options)
        inbox: asyncio.Queue[Message] = asyncio.Queue()
        outbox: asyncio.Queue[Message] = asyncio.Queue()
        lifespan = asyncio.create_task(chain({"type": "lifespan"}, inbox.get, outbox.put))
        await inbox.put({"type": "lifespan.startup"})
        assert (await outbox.get())["type"] == "lifespan.startup.complete"
        try:
            transport = httpx.ASGITransport(app=chain)
            async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
                return await exchange(client)
        finally:
            await inbox.put({"type": "lifespan.shutdown"})
            assert (await outbox.get())["type"] == "lifespan.shutdown.complete"
            await lifespan

    return asyncio.run(asyncio.wait_for(main(), timeout=30))


def test_whoami_answers_the_request_user_and_the_impersonated_one() -> None:
    async def exchange(client: httpx.AsyncClient) -> list[Any]:
        plain = await client.post(REVIEWS, json=WHOAMI)
        acting = await client.post(
            REVIEWS,
            json=WHOAMI,
            headers=[("Impersonate-User", "jane"), ("Impersonate-Group", "devs")],
        )
        return [plain.json()["status"]["userInfo"], acting.json()["status"]["userInfo"]]

    assert serve(ChainOptions(), exchange) == [
        {"username": "system:anonymous", "groups": ["system:unauthenticated"]},
        {"username": "jane", "groups": ["devs", "system:authenticated"]},
    ]


def test_authorization_judges_the_impersonated_user_and_audit_records_both(
    tmp_path: Path,
) -> None:
    audit_log = tmp_path / "audit.log"

    def rule(attributes: Any) -> bool:
        return attributes.verb == "impersonate" or attributes.user.name == "jane"

    async def exchange(client: httpx.AsyncClient) -> list[int]:
        path = "/api/v1/namespaces/default"
        refused = await client.get(path)
        served = await client.get(path, headers={"Impersonate-User": "jane"})
        return [refused.status_code, served.status_code]

    statuses = serve(ChainOptions(audit_log_path=str(audit_log)), exchange, RuleAuthorizer(rule))
    assert statuses == [403, 200]
    events = [json.loads(line) for line in audit_log.read_text().splitlines()]
    complete = [event for event in events if event["stage"] == "ResponseComplete"]
    assert [(e["responseStatus"]["code"], e.get("impersonatedUser", {}).get("username")) for e in complete] == [
        (403, None),
        (200, "jane"),
    ]  # fmt: skip
    assert {event["objectRef"]["name"] for event in events} == {"default"}


def test_a_review_and_the_request_it_describes_get_one_verdict() -> None:
    """The chain authorizes with the authorizer the access reviews answer from (the server's context)."""

    def rule(attributes: Any) -> bool:
        return attributes.verb != "delete"

    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {
            "resourceAttributes": {"verb": "delete", "resource": "configmaps", "namespace": "a"}
        },
    }

    async def exchange(client: httpx.AsyncClient) -> tuple[int, Any]:
        deleted = await client.delete("/api/v1/namespaces/a/configmaps/cm")
        answered = await client.post(
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json=review
        )
        return deleted.status_code, answered.json()["status"]

    assert serve(ChainOptions(), exchange, RuleAuthorizer(rule)) == (403, {"allowed": False})


def test_without_anonymous_auth_a_request_without_credentials_is_401() -> None:
    """kube's --anonymous-auth=false: no authenticator recognises the request, so it is refused 401
    (public info included); with the default, it is system:anonymous."""

    async def exchange(client: httpx.AsyncClient) -> list[int]:
        return [(await client.get(path)).status_code for path in ("/version", "/api")]

    assert serve(ChainOptions(anonymous_auth=False), exchange) == [401, 401]
    assert serve(ChainOptions(), exchange) == [200, 200]
