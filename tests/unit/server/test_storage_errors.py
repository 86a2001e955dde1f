"""What a client is told when storage fails, per class of failure, as kube-apiserver tells it: a write that
reached etcd without an answer may still be applied, so it is kube's 504 Timeout (its request deadline passing:
k8s.io/apiserver/pkg/endpoints/handlers/finisher/finisher.go), never a 503 that reads as "not processed" nor a
500; storage nobody could reach is a 503; no message names where storage runs."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from apiserver.storage import MemoryStorage
from apiserver.storage.etcd import EtcdUnavailableError
from apiserver.storage.interface import KeyValue, StorageError, StorageTimeoutError
from tests.inprocess import build_app, inprocess_client

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


class FailingWrites(MemoryStorage):
    """Memory storage whose creates fail with ``error`` once armed (start-up writes go through)."""

    def __init__(self) -> None:
        super().__init__()
        self.error: StorageError | None = None

    async def create(self, key: str, value: bytes) -> KeyValue:
        if self.error is not None and "/configmaps/" in key:
            raise self.error
        return await super().create(key, value)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            StorageTimeoutError(
                "etcd gave no answer to a Txn (DEADLINE_EXCEEDED); it may still be applied"
            ),
            {
                "code": 504,
                "reason": "Timeout",
                "message": "Timeout: request did not complete within requested timeout - context deadline exceeded",
            },
        ),
        (
            EtcdUnavailableError("etcd: no connection to any member"),
            {
                "code": 503,
                "reason": "ServiceUnavailable",
                "message": "storage is unavailable: etcd: no connection to any member",
            },
        ),
    ],
    ids=["may-still-be-applied", "never-reached"],
)
def test_a_storage_failure_is_answered_as_kube_answers_it(
    error: StorageError, expected: dict[str, Any]
) -> None:
    async def post() -> httpx.Response:
        storage = FailingWrites()
        async with inprocess_client(build_app(storage)) as client:
            storage.error = error
            return await client.post(CONFIGMAPS, json={"metadata": {"name": "x"}})

    response = asyncio.run(post())
    status = response.json()
    assert response.status_code == expected["code"]
    assert {key: status[key] for key in expected} == expected
    assert status["kind"] == "Status" and status["status"] == "Failure"
    assert "http://" not in response.text and "127.0.0.1" not in response.text
