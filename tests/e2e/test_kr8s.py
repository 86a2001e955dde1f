"""kr8s (sync API) against a real apiforge server: discovery through trailing-slash paths, lookups by plural and
short name, and the object API: create, patch, label, scale, exists, watch, delete (API-CONVENTIONS.md §12)."""

from __future__ import annotations

import gc
import threading
import time
from pathlib import Path
from typing import Any

import kr8s
import pytest
from kr8s.objects import APIObject, new_class

from tests.serverproc import ServerProcess
from tests.tokens import kubeconfig_with_token

pytestmark = pytest.mark.timeout(60)

NAMESPACE = "default"
CronTab = new_class(kind="CronTab", version="stable.example.com/v1", namespaced=True, scalable=True)


def crontab(api: kr8s.Api, name: str, **spec: Any) -> APIObject:
    return CronTab(
        {
            "apiVersion": "stable.example.com/v1",
            "kind": "CronTab",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"cronSpec": "* * * * */5", "image": "kr-image", "replicas": 1, **spec},
        },
        api=api,
    )


@pytest.fixture(scope="module")
def api(server: ServerProcess) -> kr8s.Api:
    return kr8s.api(kubeconfig=str(server.kubeconfig))


def names(objects: Any) -> list[str]:
    return sorted(obj.name for obj in objects)


def test_version_and_api_resources(api: kr8s.Api) -> None:
    assert api.version()["major"] == "1"
    resources = {(r["name"], r["version"]): r for r in api.api_resources()}
    entry = resources[("crontabs", "stable.example.com/v1")]
    assert entry["kind"] == "CronTab" and entry["shortNames"] == ["ct"]
    assert ("namespaces", "v1") in resources


def test_object_lifecycle(api: kr8s.Api) -> None:
    obj = crontab(api, "kr-life")
    assert not obj.exists()
    obj.create()
    assert obj.exists()
    assert obj.metadata.uid and obj.raw["metadata"]["generation"] == 1

    # lookups by plural and by short name, listed and by name
    assert "kr-life" in names(api.get("crontabs", namespace=NAMESPACE))
    assert "kr-life" in names(api.get("ct", namespace=NAMESPACE))
    assert "kr-life" in names(api.get("crontabs.stable.example.com", namespace=kr8s.ALL))
    assert CronTab.get("kr-life", namespace=NAMESPACE, api=api).spec.replicas == 1

    obj.patch({"spec": {"image": "kr-patched"}})
    assert obj.spec.image == "kr-patched" and obj.raw["metadata"]["generation"] == 2
    obj.label({"team": "kr"})
    obj.annotate({"note": "from kr8s"})
    obj.refresh()
    assert obj.labels == {"team": "kr"} and obj.annotations == {"note": "from kr8s"}
    assert names(api.get("ct", namespace=NAMESPACE, label_selector={"team": "kr"})) == ["kr-life"]
    assert names(api.get("ct", namespace=NAMESPACE, label_selector="team=nope")) == []
    assert names(
        api.get("ct", namespace=NAMESPACE, field_selector={"metadata.name": "kr-life"})
    ) == ["kr-life"]
    obj.remove_label("team")
    assert "team" not in obj.labels

    obj.delete()
    assert not obj.exists()
    assert "kr-life" not in names(api.get("ct", namespace=NAMESPACE))


def test_scale(api: kr8s.Api) -> None:
    obj = crontab(api, "kr-scale", replicas=2)
    obj.create()
    assert obj.replicas == 2
    obj.scale(5)
    obj.refresh()
    assert obj.spec.replicas == 5
    obj.delete()


def test_watch_since_a_resource_version(api: kr8s.Api) -> None:
    obj = crontab(api, "kr-watch")
    obj.create()
    since = obj.metadata.resourceVersion

    def patch_later() -> None:
        time.sleep(0.5)
        obj.patch({"spec": {"image": "kr-watched"}})

    writer = threading.Thread(target=patch_later)
    writer.start()
    event, seen = next(iter(api.watch("ct", namespace=NAMESPACE, since=since)))
    writer.join()
    assert (event, seen.name, seen.spec.image) == ("MODIFIED", "kr-watch", "kr-watched")
    obj.delete()


def test_get_by_name(api: kr8s.Api) -> None:
    obj = crontab(api, "kr-named")
    obj.create()
    try:
        [found] = api.get("ct", "kr-named", namespace=NAMESPACE)
        assert found.spec.image == "kr-image" and found.metadata.uid == obj.metadata.uid
    finally:
        obj.delete()


def test_whoami_is_the_client_certificates_user_and_an_unknown_token_is_not_authenticated(
    api: kr8s.Api, server: ServerProcess
) -> None:
    """kr8s's whoami reads the CommonName of the kubeconfig's client certificate (it posts a TokenReview
    only for a kubeconfig with a token). A token no authenticator knows is answered as kube answers a token
    it cannot verify: ``authenticated: false``, no user, and why in ``error``."""
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview"}
    review["spec"] = {"token": "apiforge-admin", "audiences": ["a"]}
    response = server.http(
        "POST", "/apis/authentication.k8s.io/v1/tokenreviews", json=review, timeout=10
    )
    assert response.status_code == 201
    assert response.json()["status"] == {"user": {}, "error": "invalid bearer token"}
    assert api.whoami() == "system:admin"


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_whoami_reviews_a_service_account_token(server: ServerProcess, tmp_path: Path) -> None:
    """With a kubeconfig holding a token, kr8s's whoami posts a TokenReview of it and reads the user: a
    service-account token from the serviceaccounts/token subresource is the account's user."""
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest"}
    answer = server.http(
        "POST", "/api/v1/namespaces/default/serviceaccounts/default/token", json=request, timeout=10
    )
    assert answer.status_code == 201
    token = answer.json()["status"]["token"]
    # a TokenReview needs system:auth-delegator's right, as on kube, where kr8s's whoami also needs it
    binding = {
        "metadata": {"name": "default-auth-delegator"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "system:auth-delegator",
        },
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "default"}],
    }
    bound = server.http(
        "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", json=binding, timeout=10
    )
    assert bound.status_code == 201, bound.text
    config = kubeconfig_with_token(server.kubeconfig, token, tmp_path / "token.kubeconfig")
    api = kr8s.api(kubeconfig=str(config))
    deadline = time.monotonic() + 10  # the authorizer follows the bindings' watch
    while True:
        try:
            assert api.whoami() == "system:serviceaccount:default:default"
            break
        except kr8s.ServerError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    # kr8s leaves the files it read this kubeconfig's credentials through to the garbage collector:
    # collected here (and their warning tolerated by this test's mark), so that it cannot surface in
    # whatever test runs next
    del api
    gc.collect()
