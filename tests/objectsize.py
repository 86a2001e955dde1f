"""What the object-size tests share (unit, in process, and integration, on SQLite and etcd): kube's
words for the two limits, a custom resource of a chosen size, and the Status assertion."""

from __future__ import annotations

from typing import Any, Final

import httpx

MIB: Final = 1024 * 1024
CONFIGMAPS: Final = "/api/v1/namespaces/default/configmaps"
SECRETS: Final = "/api/v1/namespaces/default/secrets"
CRONTABS: Final = "/apis/stable.example.com/v1/namespaces/default/crontabs"
APPLY: Final = {"Content-Type": "application/apply-patch+yaml"}
TOO_LONG: Final = "Too long: may not be more than 1048576 bytes"
"""field.TooLong with core.MaxSecretSize (k8s.io/apimachinery/pkg/util/validation/field)."""
TOO_LARGE: Final = "etcdserver: request is too large"
"""etcd's rpctypes.ErrRequestTooLarge, which kube-apiserver passes on as the message."""


def crontab(name: str, image_bytes: int) -> dict[str, object]:
    """A CronTab whose JSON is about ``image_bytes`` long: its image has no maxLength."""
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": {"cronSpec": "* * * * *", "image": "i" * image_bytes},
    }


def assert_status(response: httpx.Response, code: int, reason: str, message: str) -> dict[str, Any]:
    """``response`` is the Status ``code``/``reason`` with exactly ``message``; returns it."""
    assert response.status_code == code, response.text[:500]
    status: dict[str, Any] = response.json()
    assert (status["kind"], status["code"], status["reason"]) == ("Status", code, reason)
    assert status["message"] == message
    return status
