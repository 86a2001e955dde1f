"""What one ValidatingAdmissionPolicy costs a write (at most 50 µs of CPU).

One server on memory storage, its CronTabs created through its Store (the path every write takes: prune,
default, admission, validation, storage), in rounds of three phases in a rotating order: without any
binding (the plugin is not even asked), with the issue's case bound (a ValidatingAdmissionPolicy with params,
a ConfigMap: `variables.replicas <= int(params.data.maxReplicas)`, with a variable and a message expression,
and a binding naming the params), and with the same policy reading each write's name too, so that no write
is decided from the plugin's memory of earlier decisions (compiled.py): what an evaluation costs every time.
Reported: CPU µs per create (median of the rounds) and what each policy adds: the median of the rounds'
differences, each between phases run back to back on the same server (so that the load of the machine,
shared with others, weighs on both alike).

Run from the repository root: ``.venv/bin/python -m bench.admission_bench``.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import time
from typing import Any

from apiserver.admission.interface import Attributes
from apiserver.machinery.errors import APIError
from apiserver.registry.store import ListOptions
from apiserver.server.app import APIServer
from apiserver.storage import MemoryStorage
from bench.chain_bench import as_served
from bench.common import Row, median, print_rows, rotated, spread
from builtin.admissionregistration.policy import validating_policies
from generated.server import OPENAPI_DIR, build_apis

ROUNDS = 15
WRITES = 200
GROUP = "admissionregistration.k8s.io"
POLICY = {
    "apiVersion": f"{GROUP}/v1",
    "kind": "ValidatingAdmissionPolicy",
    "metadata": {"name": "max-replicas"},
    "spec": {
        "failurePolicy": "Fail",
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "matchConstraints": {
            "resourceRules": [
                {
                    "apiGroups": ["stable.example.com"],
                    "apiVersions": ["*"],
                    "operations": ["CREATE", "UPDATE"],
                    "resources": ["crontabs"],
                }
            ]
        },
        "variables": [{"name": "replicas", "expression": "object.spec.replicas"}],
        "validations": [
            {
                "expression": "variables.replicas <= int(params.data.maxReplicas)",
                "messageExpression": "'replicas must be at most ' + params.data.maxReplicas + ', not ' "
                "+ string(variables.replicas)",
            }
        ],
    },
}
BINDING = {
    "apiVersion": f"{GROUP}/v1",
    "kind": "ValidatingAdmissionPolicyBinding",
    "metadata": {"name": "max-replicas"},
    "spec": {
        "policyName": "max-replicas",
        "paramRef": {"name": "limits", "namespace": "default", "parameterNotFoundAction": "Deny"},
        "validationActions": ["Deny"],
    },
}
PARAMS = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "limits"},
    "data": {"maxReplicas": "10"},
}
_names = itertools.count()


def crontab() -> dict[str, Any]:
    """A CronTab whose replicas vary (each write's value is new to the evaluator)."""
    number = next(_names)
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": f"bench-{number}", "labels": {"app": "bench"}},
        "spec": {"cronSpec": "* * * * */5", "image": "busybox", "replicas": number % 10},
    }


NAMED = {
    **POLICY,
    "metadata": {"name": "max-replicas-named"},
    "spec": {
        **POLICY["spec"],
        "validations": [
            *POLICY["spec"]["validations"],
            {
                "expression": "object.metadata.name.startsWith('bench-') || object.metadata.name == 'probe'"
            },
        ],
    },
}
"""The issue's policy reading each write's name too: no two writes give it the same inputs."""
NAMED_BINDING = {
    **BINDING,
    "metadata": {"name": "max-replicas-named"},
    "spec": {**BINDING["spec"], "policyName": "max-replicas-named"},
}
PLAIN = "no policy"
ISSUE = "one ValidatingAdmissionPolicy"
EVERY = "the same, reading each write's name"
BINDINGS = {ISSUE: BINDING, EVERY: NAMED_BINDING}


async def bench_server() -> APIServer:
    """The server, with the params and both policies (no binding yet)."""
    server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR)
    await server.start()
    await server.context.store("", "configmaps").create("default", PARAMS)
    for policy in (POLICY, NAMED):
        await server.context.store(GROUP, "validatingadmissionpolicies").create(None, policy)
    return server


async def bound(server: APIServer, phase: str) -> None:
    """Only ``phase``'s binding (none for PLAIN), once the plugin's informers have it: a CronTab with too
    many replicas is refused exactly when a binding is there."""
    bindings = server.context.store(GROUP, "validatingadmissionpolicybindings")
    for name, binding in BINDINGS.items():
        present = {b["metadata"]["name"] for b in (await bindings.list(None, ListOptions())).items}
        if name == phase and binding["metadata"]["name"] not in present:
            await bindings.create(None, binding)
        elif name != phase and binding["metadata"]["name"] in present:
            await bindings.delete(None, binding["metadata"]["name"])
    store = server.context.store("stable.example.com", "crontabs")
    refused = {**crontab(), "spec": {"cronSpec": "* * * * */5", "image": "x", "replicas": 11}}
    refused["metadata"]["name"] = "probe"
    deadline = time.monotonic() + 30
    while True:
        try:
            await store.create("default", refused, dry_run=True)
            applies = False
        except APIError:  # the policy's denial
            applies = True
        if applies == (phase != PLAIN):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the bindings of {phase!r} never applied")
        await asyncio.sleep(0.01)


async def cpu_per_write(server: APIServer) -> float:
    store = server.context.store("stable.example.com", "crontabs")
    bodies = [crontab() for _ in range(WRITES)]
    gc.collect()
    started = time.process_time()
    for body in bodies:
        await store.create("default", body)
    return (time.process_time() - started) / WRITES * 1e6


class Timed:
    """The CPU the plugin's own ``validate`` takes, by phase (the plugin object is the chain's)."""

    def __init__(self, server: APIServer) -> None:
        self.plugin = validating_policies(server.context)
        self.validate = self.plugin.validate
        self.spent: dict[str, list[float]] = {}
        self.phase = PLAIN
        self.plugin.validate = self.timed  # type: ignore[method-assign]

    async def timed(self, attributes: Attributes) -> None:
        started = time.process_time()
        try:
            await self.validate(attributes)
        finally:
            self.spent.setdefault(self.phase, []).append(time.process_time() - started)


async def measure() -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """CPU µs per create by phase and round, and the plugin's own per validate by phase."""
    server = await bench_server()
    timed = Timed(server)
    try:
        phases = [PLAIN, ISSUE, EVERY]
        samples: dict[str, list[float]] = {name: [] for name in phases}
        for phase in phases:  # warm-up
            await bound(server, phase)
            await cpu_per_write(server)
        timed.spent.clear()
        for round_number in range(ROUNDS):
            for phase in rotated(phases, round_number):
                await bound(server, phase)
                timed.phase = phase
                samples[phase].append(await cpu_per_write(server))
                timed.phase = ""
    finally:
        await server.stop()
    return samples, timed.spent


def run() -> list[Row]:
    samples, own = as_served(measure())
    rows = [
        Row("admission", f"{name}: CPU µs per create", spread(values, ",.1f"))
        for name, values in samples.items()
    ]
    for phase in (ISSUE, EVERY):
        added = median([a - b for a, b in zip(samples[phase], samples[PLAIN], strict=True)])
        target = ("<= 50", added <= 50) if phase == ISSUE else ("", None)
        rows.append(Row("admission", f"{phase}: adds CPU µs per create", f"{added:,.1f}", *target))
        plugin = median(own.get(phase) or [0.0]) * 1e6
        rows.append(
            Row("admission", f"{phase}: the plugin's own validate, CPU µs", f"{plugin:,.1f}")
        )
    print_rows(rows)
    return rows


if __name__ == "__main__":
    run()
