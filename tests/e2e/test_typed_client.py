"""The generated typed clients (generated/<group>/<version>/client.py over apiclient) against a real server
over TLS, configured from its admin kubeconfig: every verb returns the kind's model, lists page through continue
tokens, a watch yields typed events from a resourceVersion, and refusals are kube's errors as exceptions
carrying the Status (NotFound, AlreadyExists, Conflict, Invalid with its causes, Forbidden)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from apiclient import Connection, load_kubeconfig
from apiclient.config import ConfigError
from apiclient.errors import AlreadyExists, Conflict, Forbidden, Invalid, NotFound
from generated.core.v1.client import configmaps
from generated.core.v1.models import ConfigMap
from generated.meta.v1.models import ObjectMeta
from generated.stable_example_com.v1.client import crontabs
from generated.stable_example_com.v1.models import CronTab, CronTabSpec
from tests.serverproc import ServerProcess

NAMESPACE = "default"


@pytest.fixture(scope="module")
def connection(server: ServerProcess) -> Iterator[Connection]:
    with Connection(load_kubeconfig(server.kubeconfig)) as opened:
        yield opened


def crontab(name: str, replicas: int = 1) -> CronTab:
    return CronTab(
        metadata=ObjectMeta(name=name, namespace=NAMESPACE, labels={"app": "typed"}),
        spec=CronTabSpec(cron_spec="* * * * */5", image="nginx", replicas=replicas),
    )


def test_create_get_update_patch_apply_delete_return_models(connection: Connection) -> None:
    tabs = crontabs(connection)
    created = tabs.create(crontab("typed-one"))
    assert isinstance(created, CronTab)
    assert (
        created.metadata is not None and created.metadata.uid and created.metadata.resource_version
    )
    fetched = tabs.get("typed-one", NAMESPACE)
    assert fetched.spec is not None and fetched.spec.replicas == 1
    fetched.spec.replicas = 2
    updated = tabs.update(fetched)
    assert updated.spec is not None and updated.spec.replicas == 2
    patched = tabs.patch("typed-one", {"spec": {"image": "busybox"}}, NAMESPACE)
    assert patched.spec is not None and patched.spec.image == "busybox"
    json_patched = tabs.patch(
        "typed-one",
        [{"op": "replace", "path": "/spec/replicas", "value": 3}],
        NAMESPACE,
        type="json",
    )
    assert json_patched.spec is not None and json_patched.spec.replicas == 3
    applied = tabs.apply(
        {"metadata": {"name": "typed-one", "namespace": NAMESPACE}, "spec": {"replicas": 4}},
        field_manager="typed-test",
        force=True,
    )
    assert applied.spec is not None and applied.spec.replicas == 4
    managers = {entry.manager for entry in applied.metadata.managed_fields or []}  # type: ignore[union-attr]
    assert "typed-test" in managers
    tabs.delete("typed-one", NAMESPACE)
    with pytest.raises(NotFound) as missing:
        tabs.get("typed-one", NAMESPACE)
    assert missing.value.code == 404 and missing.value.reason == "NotFound"
    assert missing.value.message == 'crontabs.stable.example.com "typed-one" not found'


def test_refusals_are_kubes_errors_with_their_status(connection: Connection) -> None:
    tabs = crontabs(connection)
    first = tabs.create(crontab("typed-errors"))
    with pytest.raises(AlreadyExists) as exists:
        tabs.create(crontab("typed-errors"))
    assert exists.value.code == 409 and exists.value.reason == "AlreadyExists"
    tabs.patch("typed-errors", {"spec": {"replicas": 5}}, NAMESPACE)
    with pytest.raises(Conflict) as conflict:
        tabs.update(first)  # conditioned on the resourceVersion it was created at
    assert conflict.value.code == 409 and conflict.value.reason == "Conflict"
    with pytest.raises(Invalid) as invalid:
        tabs.patch("typed-errors", {"spec": {"replicas": -1}}, NAMESPACE)
    assert invalid.value.code == 422
    assert [cause["field"] for cause in invalid.value.causes] == ["spec.replicas", ".spec.replicas"]
    tabs.delete("typed-errors", NAMESPACE, propagation_policy="Foreground")


def test_lists_page_through_continue_tokens(connection: Connection) -> None:
    maps = configmaps(connection)
    names = {f"typed-page-{index}" for index in range(7)}
    for name in names:
        maps.create(
            ConfigMap(metadata=ObjectMeta(name=name, labels={"page": "typed"}), data={"a": "b"}),
            NAMESPACE,
        )
    listed = maps.list(NAMESPACE, label_selector="page=typed", limit=2)
    assert all(isinstance(item, ConfigMap) for item in listed)
    assert {item.metadata.name for item in listed if item.metadata} == names
    maps.delete_collection(NAMESPACE, label_selector="page=typed")
    assert maps.list(NAMESPACE, label_selector="page=typed") == []


def test_a_watch_yields_typed_events_after_a_resource_version(connection: Connection) -> None:
    maps = configmaps(connection)
    start = maps.create(
        ConfigMap(metadata=ObjectMeta(name="typed-watched"), data={"n": "0"}), NAMESPACE
    )
    assert start.metadata is not None
    maps.patch("typed-watched", {"data": {"n": "1"}}, NAMESPACE)
    maps.delete("typed-watched", NAMESPACE)
    events = []
    for event in maps.watch(
        NAMESPACE,
        resource_version=start.metadata.resource_version,
        field_selector="metadata.name=typed-watched",
        timeout_seconds=1,
        bookmarks=False,
    ):
        events.append(event)
        if event.type == "DELETED":
            break
    assert [event.type for event in events] == ["MODIFIED", "DELETED"]
    assert isinstance(events[0].object, ConfigMap) and events[0].object.data == {"n": "1"}
    assert events[0].resource_version


def test_credentials_and_contexts_come_from_the_kubeconfig(
    server: ServerProcess, tmp_path: Path
) -> None:
    anonymous = tmp_path / "anonymous.kubeconfig"
    document = yaml.safe_load(server.kubeconfig.read_text())
    document["users"] = [{"name": "nobody", "user": {}}]
    document["contexts"][0]["context"]["user"] = "nobody"
    anonymous.write_text(yaml.safe_dump(document))
    with Connection(load_kubeconfig(anonymous)) as nobody, pytest.raises(Forbidden) as refused:
        configmaps(nobody).list(NAMESPACE)
    assert refused.value.code == 403
    assert 'User "system:anonymous" cannot list resource "configmaps"' in refused.value.message
    with pytest.raises(ConfigError, match="no context named 'elsewhere'"):
        load_kubeconfig(server.kubeconfig, context="elsewhere")
