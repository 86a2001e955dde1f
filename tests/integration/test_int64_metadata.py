"""ObjectMeta's integers beyond Go's int64, as kube's decoder reads them: a built-in kind's body is decoded
into its Go struct, so ``metadata.generation: 18446744073709551616`` is a 400 with encoding/json's message as
the serializer wraps it (transformDecodeError in staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go);
a custom resource's metadata is read with DropMalformedFields, so the value is dropped and the write proceeds."""

from __future__ import annotations

import httpx
import pytest

from tests.inprocess import InProcessServer

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
CRONTABS = "/apis/stable.example.com/v1/namespaces/default/crontabs"

# (metadata field, the number as written: integers beyond 64 bits only as far as a float keeps them, so
# powers of two and of ten here)
OUT_OF_RANGE = [
    ("generation", "18446744073709551616"),
    ("generation", "9223372036854775808"),
    ("generation", "-100000000000000000000"),
    ("generation", "1.5"),
    ("deletionGracePeriodSeconds", "18446744073709551616"),
]


@pytest.fixture(scope="module")
def client() -> httpx.Client:
    with InProcessServer() as server, server.client() as http:
        yield http


def _body(api_version: str, kind: str, name: str, field: str, number: str) -> bytes:
    return (
        f'{{"apiVersion":"{api_version}","kind":"{kind}",'
        f'"metadata":{{"name":"{name}","{field}":{number}}},"spec":{{}}}}'
    ).encode()


@pytest.mark.parametrize(("field", "number"), OUT_OF_RANGE)
def test_a_built_in_kind_refuses_it_with_the_go_decoders_message(
    client: httpx.Client, field: str, number: str
) -> None:
    body = _body("v1", "ConfigMap", "big", field, number).replace(b',"spec":{}', b"")
    answer = client.post(CONFIGMAPS, content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 400
    assert answer.json()["reason"] == "BadRequest"
    assert answer.json()["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number '
        f"{number} into Go struct field ObjectMeta.metadata.{field} of type int64"
    )
    assert client.get(f"{CONFIGMAPS}/big").status_code == 404


@pytest.mark.parametrize(("field", "number"), OUT_OF_RANGE)
def test_a_custom_resource_drops_it(client: httpx.Client, field: str, number: str) -> None:
    name = f"big-{OUT_OF_RANGE.index((field, number))}"
    body = _body("stable.example.com/v1", "CronTab", name, field, number)
    answer = client.post(CRONTABS, content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 201, answer.text
    stored = client.get(f"{CRONTABS}/{name}").json()["metadata"]
    assert stored.get(field) != float(number)
    assert field != "deletionGracePeriodSeconds" or field not in stored
