"""Python conversion hooks declared in a definition run in the generated converters: a v2 that splits one hub
field into two converts through the hub and back without loss (checked in a fresh interpreter, because the
generated package of a temporary project must not clash with the repository's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from generator.pipeline import GenerateConfig, generate

DEFINITION = """\
group: hooks.example.com
kind: Endpoint
versions:
  v1:
    storage: true
    schema:
      spec:
        address: string
  v2:
    schema:
      spec:
        host: string
        port: integer
    conversion:
      toHub: endpoint_hooks:v2_to_v1
      fromHub: endpoint_hooks:v1_to_v2
"""

HOOKS = """\
def v2_to_v1(obj):
    spec = obj.get("spec", {})
    obj["spec"] = {"address": f"{spec.pop('host')}:{spec.pop('port')}"}
    return obj


def v1_to_v2(obj):
    host, _, port = obj["spec"]["address"].rpartition(":")
    obj["spec"] = {"host": host, "port": int(port)}
    return obj
"""

CHECK = """\
import json
from generated.hooks_example_com.v2 import conversion
obj = {"apiVersion": "hooks.example.com/v2", "kind": "Endpoint", "metadata": {"name": "e"},
       "spec": {"host": "db.internal", "port": 5432}}
hub = conversion.endpoint_to_internal(obj)
back = conversion.endpoint_from_internal(hub)
print(json.dumps({"hub": hub, "back": back, "input": obj}))
"""


def test_hooks_convert_both_ways(tmp_path: Path) -> None:
    (tmp_path / "definitions").mkdir()
    (tmp_path / "definitions" / "endpoint.yaml").write_text(DEFINITION)
    (tmp_path / "endpoint_hooks.py").write_text(HOOKS)
    generate(GenerateConfig(tmp_path / "definitions", tmp_path / "generated"))
    result = subprocess.run(
        [sys.executable, "-c", CHECK], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    converted = json.loads(result.stdout)
    assert converted["hub"]["apiVersion"] == "hooks.example.com/v1"
    assert converted["hub"]["spec"] == {"address": "db.internal:5432"}
    assert converted["back"] == converted["input"]
