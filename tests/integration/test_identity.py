"""An object's identity (namespace, name, uid) cannot change once the request names it, whoever tries: the
client's body, patch or apply configuration, a mutating webhook or a MutatingAdmissionPolicy. Every write,
field and source gets kube's answer, and a refused write stores nothing: the object keeps its
resourceVersion, and no list (in the other namespace, or cluster-wide by ``metadata.namespace``) sees it
anywhere else. kube's checks: k8s.io/apiserver/pkg/endpoints/handlers/rest.go (checkName),
pkg/registry/rest/meta.go (EnsureObjectNamespaceMatchesRequestNamespace, BeforeCreate/BeforeUpdate),
k8s.io/apimachinery/pkg/api/validation/objectmeta.go (ValidateObjectMetaUpdate) and
pkg/storage/interfaces.go (Preconditions.Check: a PUT body's uid)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.webhookserver import WebhookServer, patch_answer, wait_for, webhook_server

CRONTABS = "/apis/stable.example.com/v1/namespaces/default/crontabs"
ALL_CRONTABS = "/apis/stable.example.com/v1/crontabs"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
ADMISSION = "/apis/admissionregistration.k8s.io"
FIELDS = ("namespace", "name", "uid")
CHANGED = {"namespace": "kube-system", "name": "renamed", "uid": "0e6f7a58-forged"}
MERGE = "application/merge-patch+json"
NAMESPACE_MISMATCH = (
    "the namespace of the provided object does not match the namespace sent on the request"
)


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebhookServer]:
    with webhook_server(tmp_path_factory.mktemp("webhook")) as server:
        yield server


@pytest.fixture(scope="module")
def mutators(api: httpx.Client, hooks: WebhookServer) -> None:
    """For each identity field, a mutating webhook and a mutating policy that set it on CronTabs and
    ConfigMaps labelled ``identity: <source>-<field>``."""
    rules = [
        {"apiGroups": ["stable.example.com", ""], "apiVersions": ["*"],
         "operations": ["CREATE", "UPDATE"], "resources": ["crontabs", "configmaps"]}
    ]  # fmt: skip
    for field in FIELDS:
        hooks.answers[f"/set-{field}"] = patch_answer(
            [{"op": "add", "path": f"/metadata/{field}", "value": CHANGED[field]}]
        )
        selector = {"matchLabels": {"identity": f"webhook-{field}"}}
        webhook = {
            "name": f"{field}.identity.example.com",
            "clientConfig": {"url": hooks.url(f"/set-{field}"), "caBundle": hooks.ca_bundle},
            "rules": rules,
            "objectSelector": selector,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }
        created = api.post(
            f"{ADMISSION}/v1/mutatingwebhookconfigurations",
            json={"metadata": {"name": f"identity-{field}"}, "webhooks": [webhook]},
        )
        assert created.status_code == 201, created.text
        expression = (
            f"[JSONPatch{{op: 'add', path: '/metadata/{field}', value: '{CHANGED[field]}'}}]"
        )
        policy = {
            "metadata": {"name": f"identity-{field}"},
            "spec": {
                "matchConstraints": {
                    "resourceRules": rules,
                    "objectSelector": {"matchLabels": {"identity": f"policy-{field}"}},
                },
                "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": expression}}],
                "reinvocationPolicy": "Never",
            },
        }
        binding = {
            "metadata": {"name": f"identity-{field}"},
            "spec": {"policyName": f"identity-{field}"},
        }
        for plural, body in (
            ("mutatingadmissionpolicies", policy),
            ("mutatingadmissionpolicybindings", binding),
        ):
            created = api.post(f"{ADMISSION}/v1beta1/{plural}", json=body)
            assert created.status_code == 201, created.text
    probe = f"{CRONTABS}/identity-probe"
    assert api.post(CRONTABS, json=crontab("identity-probe")).status_code == 201
    for source in ("webhook", "policy"):  # the plugins learn of configurations through a watch
        for field in FIELDS:
            patch = json.dumps({"metadata": {"labels": {"identity": f"{source}-{field}"}}})
            wait_for(lambda patch=patch: _refused(api, probe, patch), timeout=10)


def _refused(api: httpx.Client, url: str, patch: str) -> bool:
    """Whether a dry-run merge patch of ``url`` is refused (a plugin changed the object's identity)."""
    headers = {"Content-Type": MERGE}
    answer = api.patch(url, params={"dryRun": "All"}, content=patch, headers=headers)
    return answer.status_code in (400, 422)


def crontab(name: str, identity: str = "") -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if identity:
        metadata["labels"] = {"identity": identity}
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": metadata,
        "spec": {"cronSpec": "* * * * */5", "image": "busybox"},
    }


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def assert_status(response: httpx.Response, code: int, reason: str, message: str) -> None:
    assert response.status_code == code, response.text
    status = response.json()
    assert (status["kind"], status["status"], status["reason"]) == ("Status", "Failure", reason)
    assert status["message"] == message


def assert_nowhere_else(api: httpx.Client, name: str) -> None:
    """No CronTab of that name (if it has one) in kube-system, by its namespace's list or a cluster-wide
    field selector."""
    if name:
        gone = api.get(f"/apis/stable.example.com/v1/namespaces/kube-system/crontabs/{name}")
        assert gone.status_code == 404
    for url, params in (
        ("/apis/stable.example.com/v1/namespaces/kube-system/crontabs", {}),
        (ALL_CRONTABS, {"fieldSelector": "metadata.namespace=kube-system"}),
        (ALL_CRONTABS, {"fieldSelector": "metadata.name=renamed"}),
    ):
        listed = api.get(url, params=params)
        assert listed.status_code == 200, listed.text
        assert listed.json()["items"] == [], (url, params)


# -- create --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["webhook", "policy"])
@pytest.mark.parametrize("generated", [False, True], ids=["name", "generateName"])
def test_admission_moving_a_create_to_another_namespace_is_400_and_stores_nothing(
    api: httpx.Client, mutators: None, source: str, generated: bool
) -> None:
    body = crontab(unique("moved"), f"{source}-namespace")
    if generated:
        body["metadata"]["generateName"] = body["metadata"].pop("name") + "-"
    before = api.get(CRONTABS).json()["items"]
    assert_status(api.post(CRONTABS, json=body), 400, "BadRequest", NAMESPACE_MISMATCH)
    assert api.get(CRONTABS).json()["items"] == before
    assert_nowhere_else(api, body["metadata"].get("name", ""))


@pytest.mark.parametrize("source", ["webhook", "policy"])
def test_admission_renaming_a_create_stores_it_under_the_new_name(
    api: httpx.Client, mutators: None, source: str
) -> None:
    """kube names a created object after admission (Store.Create takes the name from the object), so a
    mutating plugin may choose it; the URL names none."""
    name = unique("named")
    created = api.post(CRONTABS, json=crontab(name, f"{source}-name"))
    assert created.status_code == 201, created.text
    try:
        assert created.json()["metadata"]["name"] == "renamed"
        assert api.get(f"{CRONTABS}/{name}").status_code == 404
        assert api.get(f"{CRONTABS}/renamed").json()["metadata"]["namespace"] == "default"
    finally:
        api.delete(f"{CRONTABS}/renamed")


@pytest.mark.parametrize("source", ["user", "webhook", "policy"])
def test_a_uid_set_before_a_create_is_replaced_by_the_servers(
    api: httpx.Client, mutators: None, source: str
) -> None:
    """kube fills uid after admission (FillObjectMetaSystemFields in Store.Create): nobody chooses it."""
    body = crontab(unique("uid"), "" if source == "user" else f"{source}-uid")
    if source == "user":
        body["metadata"]["uid"] = CHANGED["uid"]
    created = api.post(CRONTABS, json=body)
    assert created.status_code == 201, created.text
    uid = created.json()["metadata"]["uid"]
    assert uid != CHANGED["uid"]
    assert api.get(f"{CRONTABS}/{body['metadata']['name']}").json()["metadata"]["uid"] == uid


# -- updates, patches and apply ---------------------------------------------------------------------


def _write(
    api: httpx.Client, how: str, url: str, stored: dict[str, Any], metadata: dict[str, Any]
) -> httpx.Response:
    """The write ``how`` of ``metadata``'s changes to the stored object at ``url``."""
    if how == "put":
        body = json.loads(json.dumps(stored))
        body["metadata"].update(metadata)
        return api.put(url, json=body)
    if how == "apply":
        applied = {key: stored[key] for key in ("apiVersion", "kind")}
        applied["metadata"] = {"name": stored["metadata"]["name"], **metadata}
        params = {"fieldManager": "identity", "force": "true"}
        headers = {"Content-Type": "application/apply-patch+yaml"}
        return api.patch(url, content=json.dumps(applied), headers=headers, params=params)
    if how == "json":
        operations = [
            {"op": "add", "path": f"/metadata/{key}", "value": value}
            for key, value in metadata.items()
        ]
        if (
            "labels" in metadata
        ):  # a label is added beside the others: the plugin's selector matches it
            operations = [op for op in operations if op["path"] != "/metadata/labels"] + [
                {"op": "add", "path": "/metadata/labels", "value": metadata["labels"]}
            ]
        headers = {"Content-Type": "application/json-patch+json"}
        return api.patch(url, content=json.dumps(operations), headers=headers)
    content_type = MERGE if how == "merge" else "application/strategic-merge-patch+json"
    return api.patch(
        url, content=json.dumps({"metadata": metadata}), headers={"Content-Type": content_type}
    )


def _user_answer(how: str, field: str, kind: str, name: str) -> tuple[int, str, str]:
    """kube's answer to a client's own write changing ``field`` of the object ``name``."""
    if field == "name":
        message = f"the name of the object (renamed) does not match the name on the URL ({name})"
        return 400, "BadRequest", message
    if field == "namespace":  # EnsureObjectNamespaceMatchesRequestNamespace, before checkName
        return 400, "BadRequest", NAMESPACE_MISMATCH
    if how == "put":  # the body's uid is a storage precondition
        return (
            409,
            "Conflict",
            (
                f'Operation cannot be fulfilled on {kind} "{name}": Precondition failed: UID in '
                f"precondition: {CHANGED['uid']}, UID in object meta: "
            ),
        )
    return 422, "Invalid", ""


WRITES = ["put", "merge", "json", "apply"]


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("how", WRITES)
def test_a_clients_write_changing_identity_gets_kubes_answer_and_changes_nothing(
    api: httpx.Client, how: str, field: str
) -> None:
    name = unique(f"user-{how}")
    stored = api.post(CRONTABS, json=crontab(name)).json()
    url = f"{CRONTABS}/{name}"
    response = _write(api, how, url, stored, {field: CHANGED[field]})
    code, reason, message = _user_answer(how, field, "crontabs.stable.example.com", name)
    assert response.status_code == code, response.text
    status = response.json()
    assert status["reason"] == reason
    if code == 409:
        assert status["message"] == message + stored["metadata"]["uid"]
    elif code == 422:
        assert status["message"] == (
            f'CronTab.stable.example.com "{name}" is invalid: metadata.uid: Invalid value: '
            f'"{CHANGED["uid"]}": field is immutable'
        )
        assert status["details"]["causes"] == [
            {"reason": "FieldValueInvalid", "field": "metadata.uid",
             "message": f'Invalid value: "{CHANGED["uid"]}": field is immutable'}
        ]  # fmt: skip
    else:
        assert status["message"] == message
    assert api.get(url).json() == stored
    assert_nowhere_else(api, name)


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("how", ["put", "merge", "strategic", "json", "apply"])
def test_a_builtin_kinds_write_changing_identity_gets_the_same_answers(
    api: httpx.Client, how: str, field: str
) -> None:
    """The same checks on a Go-typed kind, with strategic merge patch among the patch types."""
    name = unique(f"cm-{how}")
    stored = api.post(CONFIGMAPS, json={"metadata": {"name": name}, "data": {"a": "1"}}).json()
    url = f"{CONFIGMAPS}/{name}"
    response = _write(api, how, url, stored, {field: CHANGED[field]})
    code, reason, message = _user_answer(how, field, "configmaps", name)
    assert (response.status_code, response.json()["reason"]) == (code, reason), response.text
    if code == 422:
        message = (
            f'ConfigMap "{name}" is invalid: metadata.uid: Invalid value: "{CHANGED["uid"]}": '
            "field is immutable"
        )
    elif code == 409:
        message += stored["metadata"]["uid"]
    assert response.json()["message"] == message
    assert api.get(url).json() == stored
    assert api.get(f"/api/v1/namespaces/kube-system/configmaps/{name}").status_code == 404


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("how", WRITES)
@pytest.mark.parametrize("source", ["webhook", "policy"])
def test_admission_changing_identity_on_update_gets_kubes_answer_and_changes_nothing(
    api: httpx.Client, mutators: None, source: str, how: str, field: str
) -> None:
    """The write only adds the label the plugin selects; the plugin then changes the identity field."""
    name = unique(f"{source}-{how}")
    stored = api.post(CRONTABS, json=crontab(name)).json()
    url = f"{CRONTABS}/{name}"
    response = _write(api, how, url, stored, {"labels": {"identity": f"{source}-{field}"}})
    if field == "namespace":  # BeforeUpdate's EnsureObjectNamespaceMatchesRequestNamespace
        assert_status(response, 400, "BadRequest", NAMESPACE_MISMATCH)
    else:  # BeforeUpdate's ValidateObjectMetaUpdate, named after the object as admission left it
        shown = CHANGED["name"] if field == "name" else name
        assert_status(
            response, 422, "Invalid",
            f'CronTab.stable.example.com "{shown}" is invalid: metadata.{field}: Invalid value: '
            f'"{CHANGED[field]}": field is immutable',
        )  # fmt: skip
        causes = response.json()["details"]["causes"]
        assert [(c["reason"], c["field"]) for c in causes] == [
            ("FieldValueInvalid", f"metadata.{field}")
        ]
    assert api.get(url).json() == stored
    assert_nowhere_else(api, name)
