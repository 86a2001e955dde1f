"""Server-side apply racing on a real server process: the create-or-merge retry under true concurrency over
SQLite's writer thread (the other apply cases run in process: tests/unit/endpoints/test_apply.py)."""

from __future__ import annotations

import asyncio

import httpx
import orjson

from tests.serverproc import ServerProcess
from tests.shipped import CRONTABS
from tests.unit.endpoints.test_apply import APPLY, managers


def test_concurrent_applies_of_a_new_object_all_land(server: ServerProcess) -> None:
    """Managers applying different fields of an object that does not exist yet, at once: one creates
    it (201) and the others merge into it (200), as kube's apply does (its GuaranteedUpdate retries a
    create that lost the race as an update of the winner); none gets AlreadyExists."""
    managers_count = 8

    async def race(name: str) -> list[httpx.Response]:
        async with server.async_client(timeout=10) as http:
            return list(
                await asyncio.gather(
                    *(
                        http.patch(
                            f"{CRONTABS}/{name}",
                            content=orjson.dumps(
                                {
                                    "apiVersion": "stable.example.com/v1",
                                    "kind": "CronTab",
                                    "metadata": {"name": name, "labels": {f"by-{i}": "yes"}},
                                }
                            ),
                            params={"fieldManager": f"manager-{i}"},
                            headers=APPLY,
                        )
                        for i in range(managers_count)
                    )
                )
            )

    with server.client(timeout=10) as client:
        for round_number in range(5):
            name = f"raced-{round_number}"
            answers = asyncio.run(race(name))
            codes = sorted(answer.status_code for answer in answers)
            assert codes == [200] * (managers_count - 1) + [201], [a.text for a in answers]
            stored = client.get(f"{CRONTABS}/{name}").json()
            assert set(stored["metadata"]["labels"]) == {f"by-{i}" for i in range(managers_count)}
            assert set(managers(stored)) == {f"manager-{i}" for i in range(managers_count)}
