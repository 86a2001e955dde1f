"""A webhook URL's user information is never sent as Basic credentials (httpx would send it; kube refuses
such a URL when the configuration is written, and a configuration stored before that rule must not leak it)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from builtin.webhook.client import WebhookClients
from tests.webhookserver import webhook_server

REVIEW = {
    "apiVersion": "admission.k8s.io/v1",
    "kind": "AdmissionReview",
    "request": {"uid": "u-1"},
}


def test_user_information_in_a_url_is_not_sent(tmp_path: Path) -> None:
    with webhook_server(tmp_path) as hooks:
        url = hooks.url("/allow").replace("https://", "https://admin:s3cret@")

        async def call() -> Any:
            clients = WebhookClients(None)  # type: ignore[arg-type]  # a URL needs no Service lookup
            try:
                return await clients.post({"url": url, "caBundle": hooks.ca_bundle}, REVIEW, 5)
            finally:
                await clients.close()

        answer = asyncio.run(call())
    assert answer["response"]["allowed"] is True
    assert hooks.authorizations == [None]
