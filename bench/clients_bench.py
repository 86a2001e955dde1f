"""`python -m bench clients`: the generated typed client against kubernetes-python, kubernetes_asyncio,
lightkube and kr8s, against one apiforge server (a child process, plain HTTP, memory storage) in one run.

Per client: LIST 1,000 ConfigMaps into its typed objects (the generated models; kubernetes-python's and
kubernetes_asyncio's V1ConfigMap; lightkube's and kr8s's own), LIST 1,000 CronTabs into its own objects (the generated client: the kind's pydantic models;
kubernetes-python and kubernetes_asyncio: CustomObjectsApi's dictionaries, what they offer for a custom
resource; lightkube: its generic resource; kr8s: its APIObjects), 50 creates, and a watch from
resourceVersion 0 consumed for its 1,000 ADDED events. Rounds rotate the clients' order and report medians.
Target: the generated client's LIST at least 3x faster than kubernetes-python's and no slower than
lightkube's.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import ChildServer, Row, free_port, median, print_rows, rotated

GROUP, VERSION, PLURAL = "stable.example.com", "v1", "crontabs"
OBJECTS = 1000
CREATES = 50
ROUNDS = 5
NAMESPACE = "bench"
WRITES = "bench-writes"  # where the creates go, so that every LIST and watch sees the same 1,000


def _body(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "CronTab",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": "bench"}},
        "spec": {"cronSpec": "* * * * */5", "image": f"image-{name}", "replicas": 1},
    }


def _configmap(name: str) -> dict[str, Any]:
    data = {"schedule": "* * * * */5", "image": f"image-{name}", "replicas": "1"}
    return {"metadata": {"name": name, "labels": {"app": "bench"}}, "data": data}


class Clients:
    """Each client's LIST, create and watch, over one kubeconfig."""

    def __init__(self, kubeconfig: Path) -> None:
        from kubernetes import client, config

        from apiclient import Connection, load_kubeconfig
        from generated.core.v1.client import configmaps
        from generated.stable_example_com.v1.client import crontabs

        self.connection = Connection(load_kubeconfig(kubeconfig))
        self.typed = crontabs(self.connection)
        self.configmaps = configmaps(self.connection)
        self.api_client = config.new_client_from_config(config_file=str(kubeconfig))
        self.custom = client.CustomObjectsApi(self.api_client)
        self.core = client.CoreV1Api(self.api_client)
        self.kubeconfig = kubeconfig
        import lightkube
        from lightkube.generic_resource import create_namespaced_resource

        self.lightkube = lightkube.Client(lightkube.KubeConfig.from_file(kubeconfig))
        self.light_crontab = create_namespaced_resource(GROUP, VERSION, "CronTab", PLURAL)

    def close(self) -> None:
        self.connection.close()
        self.api_client.close()
        self.lightkube._client._client.close()  # lightkube keeps an httpx client open

    # --- LIST of ConfigMaps: every client decodes into its own typed model ---------------------
    def cm_generated(self) -> int:
        return len(self.configmaps.list(NAMESPACE))

    def cm_kubernetes(self) -> int:
        return len(self.core.list_namespaced_config_map(NAMESPACE).items)

    def cm_kubernetes_asyncio(self) -> int:
        async def main() -> int:
            from kubernetes_asyncio import client, config

            api = await config.new_client_from_config(config_file=str(self.kubeconfig))
            async with api:
                listed = await client.CoreV1Api(api).list_namespaced_config_map(NAMESPACE)
                return len(listed.items)

        return asyncio.run(main())

    def cm_lightkube(self) -> int:
        from lightkube.resources.core_v1 import ConfigMap

        return len(list(self.lightkube.list(ConfigMap, namespace=NAMESPACE)))

    def cm_kr8s(self) -> int:
        import kr8s

        api = kr8s.api(kubeconfig=str(self.kubeconfig))
        return len(list(api.get("configmaps", namespace=NAMESPACE)))

    # --- LIST of CronTabs: a custom resource (CustomObjectsApi answers dictionaries) ------------
    def list_generated(self) -> int:
        return len(self.typed.list(NAMESPACE))

    def list_kubernetes(self) -> int:
        listed = self.custom.list_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL)
        return len(listed["items"])

    def list_kubernetes_asyncio(self) -> int:
        async def main() -> int:
            from kubernetes_asyncio import client, config

            api = await config.new_client_from_config(config_file=str(self.kubeconfig))
            async with api:
                custom = client.CustomObjectsApi(api)
                listed = await custom.list_namespaced_custom_object(
                    GROUP, VERSION, NAMESPACE, PLURAL
                )
                return len(listed["items"])

        return asyncio.run(main())

    def list_lightkube(self) -> int:
        return len(list(self.lightkube.list(self.light_crontab, namespace=NAMESPACE)))

    def list_kr8s(self) -> int:
        import kr8s

        api = kr8s.api(kubeconfig=str(self.kubeconfig))
        return len(list(api.get(f"{PLURAL}.{GROUP}", namespace=NAMESPACE)))

    # --- creates ----------------------------------------------------------------------------
    def create_generated(self, names: list[str], namespace: str = WRITES) -> None:
        from generated.stable_example_com.v1.models import CronTab

        for name in names:
            self.typed.create(CronTab.model_validate(_body(name, namespace)))

    def create_kubernetes(self, names: list[str], namespace: str = WRITES) -> None:
        for name in names:
            self.custom.create_namespaced_custom_object(
                GROUP, VERSION, namespace, PLURAL, _body(name, namespace)
            )

    def create_lightkube(self, names: list[str], namespace: str = WRITES) -> None:
        for name in names:
            self.lightkube.create(self.light_crontab.from_dict(_body(name, namespace)))

    # --- watch ------------------------------------------------------------------------------
    def watch_generated(self) -> int:
        seen = 0
        for _ in self.typed.watch(NAMESPACE, resource_version="0", timeout_seconds=30):
            seen += 1
            if seen == OBJECTS:
                break
        return seen

    def watch_kubernetes(self) -> int:
        from kubernetes import watch

        seen = 0
        stream = watch.Watch().stream(
            self.custom.list_namespaced_custom_object,
            GROUP,
            VERSION,
            NAMESPACE,
            PLURAL,
            resource_version="0",
            timeout_seconds=30,
        )
        for _ in stream:
            seen += 1
            if seen == OBJECTS:
                break
        return seen

    def watch_lightkube(self) -> int:
        seen = 0
        for _ in self.lightkube.watch(
            self.light_crontab, namespace=NAMESPACE, resource_version="0", server_timeout=30
        ):
            seen += 1
            if seen == OBJECTS:
                break
        return seen


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def measure(clients: Clients) -> dict[str, dict[str, float]]:
    """Median seconds per operation and client."""
    configmap_lists = {
        "generated": clients.cm_generated,
        "kubernetes": clients.cm_kubernetes,
        "kubernetes_asyncio": clients.cm_kubernetes_asyncio,
        "lightkube": clients.cm_lightkube,
        "kr8s": clients.cm_kr8s,
    }
    lists = {
        "generated": clients.list_generated,
        "kubernetes": clients.list_kubernetes,
        "kubernetes_asyncio": clients.list_kubernetes_asyncio,
        "lightkube": clients.list_lightkube,
        "kr8s": clients.list_kr8s,
    }
    watches = {
        "generated": clients.watch_generated,
        "kubernetes": clients.watch_kubernetes,
        "lightkube": clients.watch_lightkube,
    }
    creates = {
        "generated": clients.create_generated,
        "kubernetes": clients.create_kubernetes,
        "lightkube": clients.create_lightkube,
    }
    for name, call in [*lists.items(), *configmap_lists.items()]:  # imports, first use: untimed
        assert call() == OBJECTS, name
    times: dict[str, dict[str, list[float]]] = {"cmlist": {}, "list": {}, "watch": {}, "create": {}}
    for number in range(ROUNDS):
        for name in rotated(list(configmap_lists), number):
            times["cmlist"].setdefault(name, []).append(_timed(configmap_lists[name]))
        for name in rotated(list(lists), number):
            times["list"].setdefault(name, []).append(_timed(lists[name]))
        for name in rotated(list(watches), number):
            times["watch"].setdefault(name, []).append(_timed(watches[name]))
        for name in rotated(list(creates), number):
            names = [f"{name.replace('_', '-')}-{number}-{i}" for i in range(CREATES)]
            times["create"].setdefault(name, []).append(
                _timed(lambda c=creates[name], n=names: c(n))  # type: ignore[misc]
            )
    return {op: {name: median(values) for name, values in by.items()} for op, by in times.items()}


def rows(medians: dict[str, dict[str, float]]) -> list[Row]:
    lists = medians["cmlist"]
    result = [
        Row("clients", f"LIST {OBJECTS} ConfigMaps, {name} (ms)", f"{seconds * 1000:.0f}")
        for name, seconds in lists.items()
    ]
    result += [
        Row("clients", f"LIST {OBJECTS} CronTabs, {name} (ms)", f"{seconds * 1000:.0f}")
        for name, seconds in medians["list"].items()
    ]
    result += [
        Row("clients", f"{CREATES} creates, {name} (ms)", f"{seconds * 1000:.0f}")
        for name, seconds in medians["create"].items()
    ]
    result += [
        Row("clients", f"watch of {OBJECTS} events, {name} (ms)", f"{seconds * 1000:.0f}")
        for name, seconds in medians["watch"].items()
    ]
    speedup = lists["kubernetes"] / lists["generated"]
    result.append(
        Row(
            "clients",
            "ConfigMap LIST: generated vs kubernetes-python",
            f"{speedup:.1f}x",
            ">= 3x",
            speedup >= 3,
        )
    )
    ratio = lists["lightkube"] / lists["generated"]
    result.append(
        Row(
            "clients",
            "ConfigMap LIST: generated vs lightkube",
            f"{ratio:.1f}x",
            ">= 1x",
            ratio >= 1,
        )
    )
    return result


def run() -> list[Row]:
    with tempfile.TemporaryDirectory() as scratch:
        port = free_port()
        data = Path(scratch) / "data"
        argv = ["-m", "apiforge", "serve", "--data-dir", str(data), "--port", str(port)]
        argv += ["--storage", "memory", "--insecure-serving", "--authorization-mode", "AlwaysAllow"]
        server = ChildServer("apiforge", argv, port, Path(scratch) / "server.log")
        server.start(ready_file=data / "admin.kubeconfig")
        try:
            kubeconfig = data / "admin.kubeconfig"
            clients = Clients(kubeconfig)
            try:
                from kubernetes import client

                core = client.CoreV1Api(clients.api_client)
                for namespace in (NAMESPACE, WRITES):
                    core.create_namespace({"metadata": {"name": namespace}})
                clients.create_kubernetes([f"seed-{i}" for i in range(OBJECTS)], NAMESPACE)
                for i in range(OBJECTS):
                    core.create_namespaced_config_map(NAMESPACE, _configmap(f"seed-{i}"))
                result = rows(measure(clients))
            finally:
                clients.close()
        finally:
            server.stop()
    print_rows(result)
    return result


if __name__ == "__main__":
    run()
