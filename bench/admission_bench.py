"""What one ValidatingAdmissionPolicy costs a write (issue 13: at most 50 µs of CPU).

Two servers side by side on memory storage: one without policies, one with the issue's case: a
ValidatingAdmissionPolicy with params (a ConfigMap: `variables.replicas <= int(params.data.maxReplicas)`, with
a variable and a message expression) and a binding naming the params, bound to CronTabs. Each round
creates CronTabs through each server's Store (the path every write takes: prune, default, admission,
validation, storage); reported: CPU µs per create (median of interleaved rounds) and what the policy adds.
A third server has the same policy reading each write's name too, so that no write is decided from the
plugin's memory of earlier decisions (compiled.py): what an evaluation costs every time.

Run from the repository root: ``.venv/bin/python -m bench.admission_bench``.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import time
from typing import Any

from apiserver.server.app import APIServer
from apiserver.storage import MemoryStorage
from bench.chain_bench import as_served
from bench.common import Row, median, print_rows, rotated, spread
from generated.server import OPENAPI_DIR, build_scheme

ROUNDS = 7
WRITES = 400
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
"""The issue's policy reading each write's name too: no two writes give it the same inputs, so none is
decided from memory (the evaluator's cost every time)."""
ISSUE = "one ValidatingAdmissionPolicy"
EVERY = "the same, reading each write's name"


async def policed_server(policy: dict[str, Any] = POLICY) -> APIServer:
    server = APIServer(build_scheme(), MemoryStorage(), OPENAPI_DIR)
    await server.start()
    await server.context.store("", "configmaps").create("default", PARAMS)
    await server.context.store(GROUP, "validatingadmissionpolicies").create(None, policy)
    await server.context.store(GROUP, "validatingadmissionpolicybindings").create(None, BINDING)
    store = server.context.store("stable.example.com", "crontabs")
    refused = {**crontab(), "spec": {"cronSpec": "* * * * */5", "image": "x", "replicas": 11}}
    deadline = time.monotonic() + 30
    while True:  # until the plugin's informers have the binding
        try:
            await store.create("default", {**refused, "metadata": {"name": "probe"}}, dry_run=True)
        except Exception:  # the policy's denial: it applies
            return server
        if time.monotonic() > deadline:
            raise RuntimeError("the policy never applied")
        await asyncio.sleep(0.02)


async def cpu_per_write(server: APIServer) -> float:
    store = server.context.store("stable.example.com", "crontabs")
    bodies = [crontab() for _ in range(WRITES)]
    gc.collect()
    started = time.process_time()
    for body in bodies:
        await store.create("default", body)
    return (time.process_time() - started) / WRITES * 1e6


async def measure() -> dict[str, list[float]]:
    plain = APIServer(build_scheme(), MemoryStorage(), OPENAPI_DIR)
    await plain.start()
    policed = await policed_server()
    named = await policed_server(NAMED)
    try:
        variants = {"no policy": plain, ISSUE: policed, EVERY: named}
        samples: dict[str, list[float]] = {name: [] for name in variants}
        for server in variants.values():  # warm-up
            await cpu_per_write(server)
        for round_number in range(ROUNDS):
            for name in rotated(list(variants), round_number):
                samples[name].append(await cpu_per_write(variants[name]))
    finally:
        for server in (plain, policed, named):
            await server.stop()
    return samples


def run() -> list[Row]:
    samples = as_served(measure())
    rows = [
        Row("admission", f"{name}: CPU µs per create", spread(values, ",.1f"))
        for name, values in samples.items()
    ]
    plain = median(samples["no policy"])
    added = median(samples[ISSUE]) - plain
    rows.append(
        Row("admission", "policy adds CPU µs per create", f"{added:,.1f}", "<= 50", added <= 50)
    )
    rows.append(
        Row("admission", "ratio with/without the policy", f"{median(samples[ISSUE]) / plain:.2f}x")
    )
    every = median(samples[EVERY]) - plain
    rows.append(Row("admission", "reading each name adds CPU µs per create", f"{every:,.1f}"))
    print_rows(rows)
    return rows


if __name__ == "__main__":
    run()
