"""The order in which `make test`'s two workers (pytest-xdist, ``--dist loadfile``) take the test modules.

xdist hands whole modules to whichever worker is free, in collection order. Collected alphabetically, one of the
slowest modules can come last and run alone on one worker while the other idles. Longest first (LPT) instead:
the slowest modules start first and the many short ones fill the gaps at the end. The figures are each
module's seconds (setup + call + teardown of its tests) from a measured run on the 2-core machine; a module
missing from the table is placed by its directory, servers (e2e, integration) before in-process unit tests.
Refresh the table from a run's JUnit XML: ``python -m tests.schedule durations.xml``."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

import pytest

MEASURED: dict[str, float] = {
    "tests/e2e/test_kubectl.py": 78,
    "tests/unit/test_roundtrip.py": 61,
    "tests/e2e/test_installed_wheel.py": 51,
    "tests/integration/test_schemathesis.py": 48,
    "tests/e2e/test_kopf_operator.py": 44,
    "tests/integration/test_workers.py": 40,
    "tests/unit/generator/test_cache.py": 40,
    "tests/integration/test_etcd_replicas.py": 37,
    "tests/unit/generator/test_pipeline.py": 35,
    "tests/integration/test_ratcheting.py": 34,
    "tests/e2e/test_tls.py": 32,
    "tests/integration/test_startup.py": 32,
    "tests/e2e/test_readme_first_steps.py": 29,
    "tests/integration/test_persistence.py": 28,
    "tests/integration/test_hostile_bodies.py": 28,
    "tests/integration/test_watch_consistency.py": 28,
    "tests/e2e/test_python_client.py": 28,
    "tests/integration/test_watch_stall.py": 26,
    "tests/e2e/test_server_chain.py": 26,
    "tests/unit/generator/test_generate_progress.py": 25,
    "tests/integration/test_watch.py": 24,
    "tests/e2e/test_conversion_moves.py": 24,
    "tests/integration/test_readiness.py": 22,
    "tests/integration/test_connection_limits.py": 21,
    "tests/unit/generator/test_golden.py": 20,
    "tests/unit/patch/test_strategic_hostile.py": 21,
    "tests/e2e/test_security_acceptance.py": 21,
    "tests/unit/generator/test_conversion_hooks.py": 20,
    "tests/e2e/test_crd_runtime.py": 20,
    "tests/e2e/test_new_definition.py": 19,
    "tests/e2e/test_kubectl_protobuf.py": 19,
    "tests/e2e/test_tokens.py": 18,
    "tests/unit/storage/test_conformance.py": 18,
    "tests/e2e/test_kr8s.py": 17,
    "tests/integration/test_conformance_patch.py": 17,
    "tests/integration/test_conformance_validation.py": 17,
    "tests/e2e/test_kubectl_core_validation.py": 17,
    "tests/integration/test_query_ranges.py": 17,
    "tests/unit/encoding/test_protobuf_kinds.py": 15,
    "tests/e2e/test_operability.py": 14,
    "tests/e2e/test_crd_clients.py": 14,
    "tests/unit/fieldmanager/test_fast_paths.py": 13,
    "tests/integration/test_leader_election.py": 13,
    "tests/integration/test_kube_divergences.py": 12,
    "tests/e2e/test_crd_conversion_webhook.py": 11,
    "tests/e2e/test_request_timeouts.py": 11,
    "tests/e2e/test_kubectl_tables.py": 11,
    "tests/e2e/test_readme_security.py": 10,
    "tests/integration/test_object_size.py": 10,
    "tests/integration/test_crd_replicas.py": 9,
    "tests/e2e/test_lightkube.py": 9,
    "tests/unit/generator/test_openapi_documents.py": 8,
    "tests/integration/test_cel_budget.py": 8,
    "tests/e2e/test_serve_rbac.py": 8,
    "tests/unit/server/test_supervisor.py": 8,
    "tests/integration/test_admission_hooks.py": 8,
    "tests/unit/fieldmanager/test_prune_equivalence.py": 7,
    "tests/unit/patch/test_jsonpatch.py": 7,
    "tests/e2e/test_scale_ownership.py": 7,
    "tests/e2e/test_filter_chain.py": 7,
    "tests/e2e/test_kubectl_cascade.py": 7,
    "tests/unit/test_layering.py": 7,
    "tests/unit/storage/test_etcd.py": 6,
    "tests/integration/test_audit_policy_log.py": 6,
    "tests/integration/test_cel_rules.py": 6,
    "tests/unit/encoding/test_gnostic.py": 6,
    "tests/integration/test_hostile_corpus.py": 6,
    "tests/unit/generator/test_check.py": 5,
    "tests/e2e/test_bind_address.py": 5,
    "tests/integration/test_hostile_credentials.py": 5,
    "tests/integration/test_admission_webhooks.py": 5,
}
"""Seconds per module (those of 5 s or more) in a full serial run at load 6-8 on 2026-12-01: 3,320 tests
in 32 min. The generator's golden, cache and pipeline modules since render the tree fewer times: their figures
are the old ones scaled by the full renderings left (golden: the units of one definition per case)."""

UNMEASURED = {"tests/e2e": 10.0, "tests/integration": 10.0}
"""Seconds assumed for a module not in the table, by directory (a unit module: 0, so last)."""


def module_seconds(path: str) -> float:
    """The measured (or assumed) seconds of the module at ``path``, relative to the repository."""
    if path in MEASURED:
        return MEASURED[path]
    return next((s for prefix, s in UNMEASURED.items() if path.startswith(prefix + "/")), 0.0)


def slowest_modules_first(items: list[pytest.Item], root: Path) -> None:
    """Sort ``items`` in place by their module's seconds, descending; stable, so a module's own tests keep
    their order (and its module-scoped fixtures their lifetime)."""
    items.sort(key=lambda item: -module_seconds(item.path.relative_to(root).as_posix()))


def seconds_per_module(junit: Path) -> dict[str, float]:
    """Each module's total seconds in a JUnit XML report (a test case's time is setup + call + teardown)."""
    totals: dict[str, float] = defaultdict(float)
    for case in ElementTree.parse(junit).iter("testcase"):
        parts = case.get("classname", "").split(".")
        module = next(
            (i for i, part in enumerate(parts) if part.startswith("test_")), len(parts) - 1
        )
        totals["/".join(parts[: module + 1]) + ".py"] += float(case.get("time", "0"))
    return dict(sorted(totals.items(), key=lambda entry: -entry[1]))


if __name__ == "__main__":
    for path, seconds in seconds_per_module(Path(sys.argv[1])).items():
        if seconds >= 1:
            print(f'    "{path}": {seconds:.0f},')
