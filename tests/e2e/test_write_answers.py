"""The answer to a create, update or patch is the written object, byte for byte what a GET of it returns
right after (both put the resourceVersion last in metadata, as kube's JSON of a read and a write does), for
a custom resource and a built-in kind, through a real server process; YAML and a Table still answer as
asked."""

from __future__ import annotations

import httpx
import pytest
import yaml

CRONTABS = "/apis/stable.example.com/v1/namespaces/default/crontabs"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
LABELS = {"app": "answers", "tier": "x" * 40}
ANNOTATIONS = {"note": 'quotes " and \\ and \u00e9 and \u2028'}


def crontab(name: str) -> dict[str, object]:
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name, "labels": LABELS, "annotations": ANNOTATIONS},
        "spec": {"cronSpec": "* * * * */5", "image": "my-cron-image", "replicas": 2},
    }


def configmap(name: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": LABELS, "annotations": ANNOTATIONS},
        "data": {"k": "v", "z": "\u00e9"},
    }


def read_back(client: httpx.Client, path: str) -> bytes:
    response = client.get(path)
    assert response.status_code == 200, response.text
    return response.content


@pytest.mark.parametrize(("collection", "make"), [(CRONTABS, crontab), (CONFIGMAPS, configmap)])
def test_write_answers_are_what_a_read_returns(
    client: httpx.Client, collection: str, make: object
) -> None:
    assert callable(make)
    path = f"{collection}/answers"
    created = client.post(collection, json=make("answers"))
    assert created.status_code == 201, created.text
    assert created.headers["content-type"] == "application/json"
    assert created.content == read_back(client, path)

    body = created.json()
    body["metadata"]["labels"]["tier"] = "updated"
    updated = client.put(path, json=body)
    assert updated.status_code == 200, updated.text
    assert updated.json()["metadata"]["resourceVersion"] != body["metadata"]["resourceVersion"]
    assert updated.content == read_back(client, path)

    patch = {"metadata": {"annotations": {"patched": "yes"}}}
    headers = {"Content-Type": "application/merge-patch+json"}
    patched = client.patch(path, json=patch, headers=headers)
    assert patched.status_code == 200, patched.text
    assert patched.json()["metadata"]["annotations"]["patched"] == "yes"
    assert patched.content == read_back(client, path)


def test_a_yaml_or_table_answer_is_still_rendered(client: httpx.Client) -> None:
    as_yaml = client.post(
        CRONTABS, json=crontab("answers-yaml"), headers={"Accept": "application/yaml"}
    )
    assert as_yaml.status_code == 201, as_yaml.text
    assert as_yaml.headers["content-type"] == "application/yaml"
    assert yaml.safe_load(as_yaml.text) == client.get(f"{CRONTABS}/answers-yaml").json()

    table = "application/json;as=Table;v=v1;g=meta.k8s.io"
    as_table = client.post(CONFIGMAPS, json=configmap("answers-table"), headers={"Accept": table})
    assert as_table.status_code == 201, as_table.text
    assert as_table.json()["kind"] == "Table"
    assert as_table.json()["rows"][0]["cells"][0] == "answers-table"
