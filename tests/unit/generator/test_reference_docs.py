"""`apiforge docs`: the API reference of the shipped definitions, in Markdown and one HTML page, says each
field's type, default and validation in the section of the version that declares them, and is the same
bytes every time."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from apiforge.cli import main
from tests.shipped import shipped_definitions

RULED = """\
group: ruled.example.com
kind: Widget
versions:
  v1:
    storage: true
    schema:
      spec:
        type: object
        x-kubernetes-validations:
          - rule: self.min <= self.max
            message: min must not exceed max
        properties:
          min: {type: int32, default: 0}
          max: {type: int32, example: 5, required: true}
"""


def render(definitions: Path, out: Path) -> dict[str, str]:
    result = CliRunner().invoke(
        main, ["docs", "--definitions", str(definitions), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    return {path.name: path.read_text() for path in sorted(out.iterdir())}


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return render(shipped_definitions(), tmp_path_factory.mktemp("reference"))


def section(page: str, heading: str) -> str:
    """The text under ``heading`` up to the next heading of its level or above."""
    level = heading.split(" ")[0]
    start = page.index(f"\n{heading}\n")
    rest = page[start + len(heading) + 2 :]
    ends = [m.start() for m in re.finditer(rf"\n#{{1,{len(level)}}} ", rest)]
    return rest[: ends[0]] if ends else rest


def row(table_text: str, field: str) -> list[str]:
    line = next(line for line in table_text.splitlines() if line.startswith(f"| {field} |"))
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]


def test_a_page_per_group_and_an_index(shipped: dict[str, str]) -> None:
    assert set(shipped) == {
        "index.md",
        "index.html",
        "stable.example.com.md",
        "platform.example.com.md",
    }
    assert "- [stable.example.com](stable.example.com.md)" in shipped["index.md"]


def test_fields_say_type_default_and_validation_in_their_version(shipped: dict[str, str]) -> None:
    page = shipped["stable.example.com.md"]
    v1beta1 = section(page, "### CronTab v1beta1")
    v1 = section(page, "### CronTab v1")
    # v1beta1 defaults replicas to 1; v1 declares no default
    assert row(v1beta1, "spec.replicas")[:5] == ["spec.replicas", "integer", "", "1", "minimum: 0"]
    assert row(v1, "spec.replicas")[3] == ""
    assert row(v1, "spec.cronSpec")[4] == r"pattern: ^(\d+\|\*)(/\d+)?(\s+(\d+\|\*)(/\d+)?){4}$"
    assert "spec.schedule" not in v1 and row(v1beta1, "spec.schedule")[1] == "string"
    assert row(v1, "status.conditions[].status")[2:5] == [
        "yes",
        "",
        'enum: "True", "False", "Unknown"',
    ]
    assert (
        "deprecated. Deprecation warning: stable.example.com/v1beta1 CronTab is deprecated"
        in v1beta1
    )
    assert "| Schedule | string | .spec.schedule | 0 |" in v1beta1
    assert "| Spec | string | .spec.cronSpec | 0 |" in v1 and "Schedule" not in v1


def test_kinds_say_scope_names_and_required_fields(shipped: dict[str, str]) -> None:
    cluster = section(shipped["platform.example.com.md"], "## ComputeCluster")
    assert "scope Cluster; resource `computeclusters`" in cluster and "short names `cc`" in cluster
    assert row(cluster, "spec.region")[:3] == ["spec.region", "string", "yes"]
    assert row(cluster, "spec.tier")[3:5] == ['"standard"', 'enum: "standard", "premium"']
    assert row(cluster, "spec.labels")[1] == "map[string]string"
    # the example is a valid minimal object: the required region, the defaulted fields it may leave out
    assert (
        "kind: ComputeCluster\nmetadata:\n  name: example-computecluster\nspec:\n  region: x\n"
        in cluster
    )


def test_cel_rules_and_examples(tmp_path: Path) -> None:
    (tmp_path / "definitions").mkdir()
    (tmp_path / "definitions" / "widget.yaml").write_text(RULED)
    page = render(tmp_path / "definitions", tmp_path / "out")["ruled.example.com.md"]
    assert row(page, "spec")[4] == "rule: self.min <= self.max (min must not exceed max)"
    assert row(page, "spec.min")[3] == "0"
    assert "spec:\n  max: 5\n" in page  # the required field's example value


def test_the_html_page_is_self_contained(shipped: dict[str, str]) -> None:
    page = shipped["index.html"]
    assert "<script" not in page and 'src="' not in page and "http" not in page.split("<body>")[0]
    assert '<a href="#crontab-stable-example-com">CronTab</a>' in page
    assert '<h3 id="crontab-stable-example-com-v1beta1">CronTab v1beta1</h3>' in page
    assert "<td>spec.replicas</td><td>integer</td><td></td><td>1</td><td>minimum: 0</td>" in page


def test_the_output_is_deterministic(shipped: dict[str, str], tmp_path: Path) -> None:
    assert render(shipped_definitions(), tmp_path) == shipped
