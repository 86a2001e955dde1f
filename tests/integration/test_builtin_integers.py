"""A built-in kind's integer fields take what Go decodes into them, and nothing else: kube decodes the body into
the kind's Go struct first, where encoding/json refuses a fraction, an integral number written as one (``3.0``,
``1e3``) and a value past the field's type (int32 for most), so the request is a 400 "cannot be handled" and
nothing is stored. Each case below was answered so by kube-apiserver v1.34.4 (for example ``Service in version
"v1" cannot be handled as a Service: json: cannot unmarshal number 3.0 into Go struct field
ServicePort.spec.ports.port of type int32``). In-range integers are stored as sent."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.inprocess import InProcessServer

INT32_MAX = 2**31 - 1
Body = Callable[[str], str]
"""Builds a manifest's JSON text with the integer's JSON text in place."""


def lease(number: str) -> str:
    return (
        '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},'
        f'"spec":{{"leaseDurationSeconds":{number}}}}}'
    )


def service_port(number: str) -> str:
    return (
        '{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},'
        f'"spec":{{"ports":[{{"port":{number}}}]}}}}'
    )


def service_target_port(number: str) -> str:  # an IntOrString: its number is an int32
    return (
        '{"apiVersion":"v1","kind":"Service","metadata":{"name":"t"},'
        f'"spec":{{"ports":[{{"port":80,"targetPort":{number}}}]}}}}'
    )


def webhook_timeout(number: str) -> str:
    return (
        '{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration",'
        '"metadata":{"name":"w"},"webhooks":[{"name":"a.example.com","timeoutSeconds":'
        f"{number},"
        '"clientConfig":{"url":"https://hook.example.com"},"sideEffects":"None",'
        '"admissionReviewVersions":["v1"]}]}'
    )


def event_count(number: str) -> str:
    return (
        '{"apiVersion":"v1","kind":"Event","metadata":{"name":"e"},'
        f'"involvedObject":{{"name":"x"}},"count":{number}}}'
    )


# (collection, manifest, field read back, the kind, the largest value its validation accepts)
CASES: dict[str, tuple[str, Body, Callable[[Any], Any], str, int]] = {
    "lease": (
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        lease,
        lambda o: o["spec"]["leaseDurationSeconds"],
        "Lease",
        INT32_MAX,
    ),
    "service-port": (
        "/api/v1/namespaces/default/services",
        service_port,
        lambda o: o["spec"]["ports"][0]["port"],
        "Service",
        65535,
    ),
    "service-target-port": (
        "/api/v1/namespaces/default/services",
        service_target_port,
        lambda o: o["spec"]["ports"][0]["targetPort"],
        "Service",
        65535,
    ),
    "webhook-timeout": (
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        webhook_timeout,
        lambda o: o["webhooks"][0]["timeoutSeconds"],
        "ValidatingWebhookConfiguration",
        30,
    ),
    "event-count": (
        "/api/v1/namespaces/default/events",
        event_count,
        lambda o: o["count"],
        "Event",
        INT32_MAX,
    ),
}
REFUSED = {
    "fraction": "1.5",
    "integral-fraction": "3.0",
    "exponent": "1e3",
    "past-int32": str(INT32_MAX + 1),
    "below-int32": str(-(2**31) - 1),
    "past-int64": str(2**64),
}


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with InProcessServer() as server, server.client() as http:
        yield http


def post(client: httpx.Client, path: str, text: str) -> httpx.Response:
    return client.post(path, content=text, headers={"Content-Type": "application/json"})


@pytest.mark.parametrize("value", REFUSED.values(), ids=REFUSED.keys())
@pytest.mark.parametrize("case", CASES.keys())
def test_numbers_go_cannot_decode_are_a_400_and_nothing_is_stored(
    client: httpx.Client, case: str, value: str
) -> None:
    path, body, _, kind, _ = CASES[case]
    response = post(client, path, body(value))
    assert response.status_code == 400, response.text
    status = response.json()
    assert status["reason"] == "BadRequest"
    assert status["message"].startswith(f'{kind} in version "v1" cannot be handled as a {kind}: ')
    name = json.loads(body("1"))["metadata"]["name"]
    assert client.get(f"{path}/{name}").status_code == 404


@pytest.mark.parametrize("case", CASES.keys())
def test_the_largest_valid_integer_is_stored_as_sent(client: httpx.Client, case: str) -> None:
    path, body, read, _, largest = CASES[case]
    response = post(client, path, body(str(largest)))
    assert response.status_code == 201, response.text
    name = response.json()["metadata"]["name"]
    assert read(client.get(f"{path}/{name}").json()) == largest
    assert client.delete(f"{path}/{name}").status_code == 200
