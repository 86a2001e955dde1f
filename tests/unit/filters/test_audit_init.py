"""The Audit-Id response header (kube's WithAuditInit, the outermost filter): on every response, whichever
filter answers it (401, 403, 429, 504, a 400 before authentication, the handler's own), with no audit
backend configured at all; the client's own Audit-ID echoed; a new UUID otherwise, one per request."""

from __future__ import annotations

import asyncio
import uuid

import httpx

from apiserver.audit.policy import MetadataPolicy
from apiserver.authentication.authenticator import request_authenticator
from apiserver.authentication.user import UserInfo
from apiserver.endpoints.http import (
    SCOPE_AUDIT_ID,
    SCOPE_USER,
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
    respond_json,
    transport_of,
)
from apiserver.filters.audit import AuditFilter, Auditor
from apiserver.filters.auditinit import AuditInitFilter, new_audit_id
from apiserver.filters.authentication import AuthenticationFilter
from apiserver.filters.authorization import AuthorizationFilter
from apiserver.filters.impersonation import ImpersonationFilter
from apiserver.filters.maxinflight import MaxInFlightFilter
from apiserver.filters.pipeline import Pipeline, Step
from apiserver.filters.requestinfo import RequestInfoFilter
from apiserver.filters.timeout import TimeoutFilter
from builtin.authentication.impersonation import IMPERSONATION_KINDS
from tests.unit.filters.support import RuleAuthorizer, TokenFile, request, run
from tests.unit.filters.test_audit_filter import Recorder

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
TOKENS = TokenFile({"alice-token": UserInfo("alice")})


async def slow(scope: Scope, receive: Receive, send: Send) -> None:
    """Answers with the audit ID the scope carries, after a while when asked to (``?slow``)."""
    if b"slow" in scope["query_string"]:
        await asyncio.sleep(0.3)
    await respond_json(send, 200, {"auditID": scope[SCOPE_AUDIT_ID]})


def chain(timeout: float = 0.05) -> ASGIApp:
    """kube's order, without audit: alice may do anything but delete; one request of each kind at once;
    ``timeout`` seconds to answer. (One chain per event loop: the timeout filter's timer is its loop's.)"""
    authorizer = RuleAuthorizer(lambda attributes: attributes.verb != "delete")
    steps = [
        AuditInitFilter(),
        RequestInfoFilter(),
        TimeoutFilter(timeout, 1800.0),
        AuthenticationFilter(request_authenticator([TOKENS])),
        ImpersonationFilter(authorizer, IMPERSONATION_KINDS),
        MaxInFlightFilter(1, 1),
        AuthorizationFilter(authorizer),
    ]
    return Pipeline(steps, slow)


def test_every_refusal_carries_an_audit_id() -> None:
    answers = {
        "unauthenticated": request(
            chain(), "GET", CONFIGMAPS, [("Authorization", "Bearer forged")]
        ),
        "forbidden": request(chain(), "DELETE", f"{CONFIGMAPS}/cm"),
        "timed out": request(chain(), "GET", f"{CONFIGMAPS}?slow=1"),
        "bad timeout": request(chain(), "GET", f"{CONFIGMAPS}?timeout=soon"),
        "served": request(chain(), "GET", CONFIGMAPS),
    }
    assert {name: answer.status_code for name, answer in answers.items()} == {
        "unauthenticated": 401,
        "forbidden": 403,
        "timed out": 504,
        "bad timeout": 400,
        "served": 200,
    }
    ids = [answer.headers["audit-id"] for answer in answers.values()]
    assert all(uuid.UUID(audit_id).version == 4 for audit_id in ids)
    assert len(set(ids)) == len(ids)
    # the handler sees the ID its response carries
    assert answers["served"].json() == {"auditID": answers["served"].headers["audit-id"]}


def test_new_audit_ids_are_distinct_random_uuids_in_their_text_form_past_one_pool() -> None:
    ids = [new_audit_id() for _ in range(2000)]  # more than one pool's worth
    assert len(set(ids)) == len(ids)
    for audit_id in ids:
        parsed = uuid.UUID(audit_id.decode())
        assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)
        assert str(parsed).encode() == audit_id


def test_a_429_carries_an_audit_id() -> None:
    async def exchange(client: httpx.AsyncClient) -> list[httpx.Response]:
        first = asyncio.create_task(client.get(f"{CONFIGMAPS}?slow=1"))
        await asyncio.sleep(0.1)  # the first is in flight, holding the one read-only place
        second = await client.get(CONFIGMAPS)
        return [await first, second]

    held, refused = run(chain(timeout=5), exchange)
    assert (held.status_code, refused.status_code) == (200, 429)
    assert refused.headers["audit-id"]
    assert refused.headers["audit-id"] != held.headers["audit-id"]


def test_the_client_s_audit_id_is_echoed_and_used() -> None:
    response = request(chain(), "GET", CONFIGMAPS, [("Audit-ID", "trace-42")])
    assert response.headers.get_list("audit-id") == ["trace-42"]
    assert response.json() == {"auditID": "trace-42"}


def test_the_server_s_transport_stays_reachable_through_the_audit_filters() -> None:
    """The watch writer finds the socket through ``send`` (``http.transport_of``), to cut off a client that
    stopped reading; the audit filters' wrappers keep it there."""

    class Cycle:  # stands for uvicorn's RequestResponseCycle, whose bound send holds the transport
        transport = object()

        async def send(self, message: Message) -> None:
            """Nothing is sent anywhere."""

    seen: list[object] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(transport_of(send))

    cycle = Cycle()
    recorder = Recorder()
    auditor = Auditor(MetadataPolicy(), recorder)
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/api/v1/configmaps",
        "query_string": b"watch=1",
        "headers": [],
        SCOPE_USER: UserInfo("alice"),
    }
    chained = Pipeline([AuditInitFilter(), RequestInfoFilter(), AuditFilter(auditor)], app)
    asyncio.run(chained(scope, receive_nothing, cycle.send))
    assert seen == [Cycle.transport]
    assert [event["stage"] for event in recorder.events] == ["RequestReceived", "ResponseComplete"]


async def receive_nothing() -> Message:
    return {"type": "http.disconnect"}


def test_a_whole_response_leaves_in_one_call_with_its_audit_id_as_two_messages_would() -> None:
    """``respond`` hands the exchange a whole response; it reaches the server's ``send_whole`` with the
    Audit-Id added, and when audit must see each message it goes as the two messages instead: the
    server gets the same response either way, and audit still records it."""

    class Cycle:  # the server's cycle: a whole response, or its messages one by one
        transport = None

        def __init__(self) -> None:
            self.calls: list[tuple[str, list[Message]]] = []

        async def send(self, message: Message) -> None:
            self.calls.append(("send", [message]))

        async def send_whole(self, start: Message, body: bytes) -> None:
            self.calls.append(("send_whole", [start, {"type": "http.response.body", "body": body}]))

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await respond_json(send, 201, {"kind": "CronTab"})

    def served(steps: list[Step]) -> tuple[list[str], list[Message]]:
        cycle = Cycle()
        scope = {
            "type": "http",
            "method": "POST",
            "path": CONFIGMAPS,
            "query_string": b"",
            "headers": [(b"audit-id", b"trace-7")],
            SCOPE_USER: UserInfo("alice"),
        }
        asyncio.run(Pipeline(steps, app)(scope, receive_nothing, cycle.send))
        return [name for name, _ in cycle.calls], [m for _, sent in cycle.calls for m in sent]

    recorder = Recorder()
    plain_calls, plain = served([AuditInitFilter(), RequestInfoFilter()])
    audited_calls, audited = served(
        [AuditInitFilter(), RequestInfoFilter(), AuditFilter(Auditor(MetadataPolicy(), recorder))]
    )
    assert plain_calls == ["send_whole"] and audited_calls == ["send", "send"]
    assert plain == audited
    assert plain[0]["status"] == 201 and plain[0]["headers"][-1] == (b"audit-id", b"trace-7")
    assert plain[1]["body"] == b'{"kind":"CronTab"}'
    assert recorder.events[-1]["responseStatus"]["code"] == 201
