"""A bounded schemathesis run over the served OpenAPI v3 documents: requests generated
from each operation's schema — valid and invalid bodies, parameters and paths — must never get a 5xx.

Bounded: a few examples per operation, on the memory store, so the whole run takes seconds. Collection
GETs are left out: schemathesis sends ``watch=true`` among their parameters, and a watch is a stream that
lasts until its timeout, which the run would wait for. When a run finds a 5xx, the request goes into
test_hostile_corpus.py as a case of its own; none has so far."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.schemas import BaseSchema

from tests.serverproc import ServerProcess, free_port

pytestmark = pytest.mark.timeout(300)
DOCUMENTS = ("api/v1", "apis/stable.example.com/v1")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(Path(tmp_path_factory.mktemp("data")), free_port(), storage="memory")
    process.start()
    yield process
    process.stop()


def _schema(server: ServerProcess, document: str) -> BaseSchema:
    schema = schemathesis.openapi.from_dict(server.http("GET", f"/openapi/v3/{document}").json())
    return schema.exclude(method="GET", path_regex=r"/[a-z]+$")  # collections: watches (above)


BOUNDED = settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("document", DOCUMENTS)
def test_no_generated_request_gets_a_server_error(served: ServerProcess, document: str) -> None:
    operations = 0
    for result in _schema(served, document).get_all_operations():
        operation = result.ok()
        operations += 1

        @BOUNDED
        @given(operation.as_strategy())
        def never_a_server_error(case: schemathesis.Case) -> None:
            response = case.call(base_url=served.url, timeout=10, **served.requests_tls)
            assert response.status_code < 500, (
                case.method,
                case.formatted_path,
                response.status_code,
                response.text[:500],
            )

        never_a_server_error()
    assert operations >= 10  # the document's operations were all generated for
