"""Conversion strategy Webhook in a generated server: the same CRD and webhook as
tests/e2e/test_crd_conversion_webhook.py, but the CRD is a file of the project's definitions/ that `apiforge
generate` compiles, and the served kind calls the webhook as the CRD posted at run time does. The run-time
module's tests run here unchanged against the generated server (they are imported below): one judgement for
both paths."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from generator.pipeline import GenerateConfig, generate
from tests.e2e.test_crd_conversion_webhook import (  # the run-time module's webhook and tests
    V1,
    V2,
    crd,
    create_service,
    mode,
    started,
    test_a_failing_webhook_is_kubes_500_and_writes_nothing,
    test_a_list_page_is_one_review,
    test_a_watch_in_the_other_version_gets_converted_events,
    test_objects_are_converted_by_the_webhook_both_ways,
    test_only_labels_and_annotations_of_the_answer_are_taken,
    wait_for,
    webhook,
)
from tests.serverproc import ServerProcess

__all__ = [
    "mode",
    "test_a_failing_webhook_is_kubes_500_and_writes_nothing",
    "test_a_list_page_is_one_review",
    "test_a_watch_in_the_other_version_gets_converted_events",
    "test_objects_are_converted_by_the_webhook_both_ways",
    "test_only_labels_and_annotations_of_the_answer_are_taken",
    "webhook",
]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, webhook: tuple[int, str]) -> Path:
    """A project whose only definition is the CRD with its webhook, generated."""
    root = tmp_path_factory.mktemp("project")
    (root / "definitions").mkdir()
    document = crd(*webhook)
    (root / "definitions" / "cronjobs.yaml").write_text(yaml.safe_dump(document))
    generate(GenerateConfig(root / "definitions", root / "generated"))
    return root


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, project: Path) -> Iterator[ServerProcess]:
    process = started(tmp_path_factory.mktemp("data"), cwd=project)
    yield process
    process.stop()


@pytest.fixture(scope="module")
def installed(client: httpx.Client, webhook: tuple[int, str]) -> dict[str, Any]:
    """The kind is served from the start (no CRD object: it is generated); the Service naming localhost."""
    create_service(client)
    wait_for(lambda: client.get(V2).status_code == 200)
    return crd(*webhook)


def test_the_kind_is_generated_not_installed(
    client: httpx.Client, installed: dict[str, Any]
) -> None:
    """No CustomResourceDefinition object serves it: the generated code calls the webhook itself."""
    name = installed["metadata"]["name"]
    assert (
        client.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}").status_code
        == 404
    )
    assert client.get(V1).status_code == 200
