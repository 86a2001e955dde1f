"""A throwaway project serving one CustomResourceDefinition: its YAML from a kind and a spec schema, its
generated code, and a server running it (integration tests of schema features the shipped kinds lack)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.pipeline import GenerateConfig, generate
from tests.serverproc import ServerProcess, free_port


def crd_yaml(group: str, kind: str, spec_schema: str) -> str:
    """A namespaced apiextensions/v1 CRD with one version, v1, whose ``spec`` has ``spec_schema``
    (YAML of the spec's schema, without the ``spec:`` key)."""
    plural = kind.lower() + "s"
    head = textwrap.dedent(
        f"""\
        apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        metadata:
          name: {plural}.{group}
        spec:
          group: {group}
          scope: Namespaced
          names: {{plural: {plural}, singular: {kind.lower()}, kind: {kind}}}
          versions:
          - name: v1
            served: true
            storage: true
            schema:
              openAPIV3Schema:
                type: object
                properties:
                  spec:
        """
    )
    return head + textwrap.indent(textwrap.dedent(spec_schema).strip("\n") + "\n", " " * 12)


def serve_crd(root: Path, data_dir: Path, group: str, crd: str) -> ServerProcess:
    """(Re)generate ``root``'s project for ``crd`` and start a server on ``data_dir`` (started)."""
    definitions = root / "definitions" / group
    definitions.mkdir(parents=True, exist_ok=True)
    (definitions / "crd.yaml").write_text(crd)
    generate(GenerateConfig(root / "definitions", root / "generated"))
    server = ServerProcess(data_dir, free_port(), cwd=root)
    server.start()
    return server


def crd_server(
    tmp_path_factory: pytest.TempPathFactory, group: str, crd: str
) -> Iterator[ServerProcess]:
    """A module fixture's body: a server of a throwaway project for ``crd``, stopped afterwards."""
    root, data = tmp_path_factory.mktemp(f"{group}-project"), tmp_path_factory.mktemp("data")
    process = serve_crd(root, data, group, crd)
    yield process
    process.stop()
