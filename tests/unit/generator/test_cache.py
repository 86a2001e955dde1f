"""The build cache (generator/cache.py): what a run re-renders after each kind of change, and that cold,
incremental and parallel runs write the same bytes. Units are observed through ``render.render_job``, which
every unit a run renders goes through (runs here use one worker, so the spy sees them all)."""

from __future__ import annotations

import json
import multiprocessing
import shutil
from collections.abc import Callable, Iterator
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import pytest

from generator import cache, pipeline, render, toolprint
from generator.load import load_checked
from generator.pipeline import GenerateConfig, generate
from generator.plan import VersionPlan, build_plan
from generator.units import Job, Rendered, jobs, unit_key

WIDGET = """\
group: example.com
kind: Widget
shortNames: [wd]
versions:
  v1:
    storage: true
    schema:
      spec:
        color: string
        size: integer
"""
GADGET = WIDGET.replace("Widget", "Gadget").replace("[wd]", "[gd]")
BUILTIN_GROUPS = ("core", "authentication_k8s_io", "authorization_k8s_io")


def write_project(root: Path, *texts: str) -> Path:
    definitions = root / "definitions"
    for text in texts:
        kind = text.split("kind: ", 1)[1].split("\n", 1)[0]
        target = definitions / "example.com" / f"{kind.lower()}.yaml"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return definitions


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.name != cache.MANIFEST
    }


Renderings = dict[str, Rendered]
"""Each unit's rendering in the cold run, by unit."""


@pytest.fixture(scope="module")
def cold_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Renderings]:
    """A one-kind project (plus the built-in kinds) generated once, serially: (definitions, output, each
    unit's rendering)."""
    root = tmp_path_factory.mktemp("project")
    definitions = write_project(root, WIDGET)
    out = root / "generated"
    renderings: Renderings = {}
    real = render.render_job

    def keep(job: Job, models: render.ModelsSource = render.version_models) -> Rendered:
        renderings[unit_key(job)] = rendered = real(job, models)
        return rendered

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(render, "render_job", keep)
        generate(GenerateConfig(definitions, out, workers=1))
    return definitions, out, renderings


@pytest.fixture(scope="module")
def cold(cold_run: tuple[Path, Path, Renderings]) -> tuple[Path, Path]:
    """The cold project: (definitions, output)."""
    return cold_run[0], cold_run[1]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cold project with a second kind, generated cold and serially: what any other way of getting
    there must write. Its output."""
    root = tmp_path_factory.mktemp("fresh")
    out = root / "generated"
    generate(GenerateConfig(write_project(root, WIDGET, GADGET), out, workers=1))
    return out


@pytest.fixture
def project(cold: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the cold project and its output (with the manifest) to change."""
    definitions, out = tmp_path / "definitions", tmp_path / "generated"
    shutil.copytree(cold[0], definitions)
    shutil.copytree(cold[1], out)
    return definitions, out


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The units rendered from now on."""
    seen: list[str] = []
    real: Callable[[Job, render.ModelsSource], Rendered] = render.render_job

    def spy(job: Job, models: render.ModelsSource = render.version_models) -> Rendered:
        seen.append(unit_key(job))
        return real(job, models)

    monkeypatch.setattr(render, "render_job", spy)
    yield seen


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch, cold_run: tuple[Path, Path, Renderings]) -> list[str]:
    """The units a run asks for from now on, answered with the cold run's rendering of the same unit: for
    the changes that invalidate every unit but leave what they render alone (a tool's version, a
    template's comment), the question is which units are rendered, not what (the other tests render)."""
    seen: list[str] = []

    def recorded(job: Job, models: render.ModelsSource = render.version_models) -> Rendered:
        seen.append(unit_key(job))
        return cold_run[2][unit_key(job)]

    monkeypatch.setattr(render, "render_job", recorded)
    return seen


def every_unit(out: Path) -> set[str]:
    """The units of the last run, as its manifest's index (first line) lists them, the shared one aside."""
    index = json.loads((out / cache.MANIFEST).read_text().splitlines()[0])
    return {unit for unit in index["units"] if unit != ""}


def run(definitions: Path, out: Path) -> list[str]:
    return [change.path for change in generate(GenerateConfig(definitions, out, workers=1))]


def test_a_no_op_run_reads_no_definition_and_renders_nothing(
    project: tuple[Path, Path], rendered: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_loading(directory: Path, previous: object) -> None:
        raise AssertionError("a no-op run parsed the definitions")

    monkeypatch.setattr(pipeline, "checked_definitions", no_loading)
    assert run(*project) == []
    assert rendered == []


def test_an_added_kind_renders_its_group_version_and_its_group_only(
    project: tuple[Path, Path], rendered: list[str], fresh: Path
) -> None:
    definitions, out = project
    write_project(definitions.parent, GADGET)
    changed = run(definitions, out)
    assert sorted(rendered) == ["example_com", "example_com.v1"]
    assert "example_com/v1/models.py" in changed and "openapi/aggregate.json" in changed
    assert snapshot(out) == snapshot(fresh)


def test_a_changed_definition_renders_its_units_again(
    project: tuple[Path, Path], rendered: list[str]
) -> None:
    definitions, out = project
    widget = definitions / "example.com" / "widget.yaml"
    widget.write_text(widget.read_text().replace("size: integer", "size: boolean"))
    assert "example_com/v1/models.py" in run(definitions, out)
    assert sorted(rendered) == ["example_com", "example_com.v1"]


def test_a_definition_file_renamed_changes_the_inputs(
    project: tuple[Path, Path], rendered: list[str]
) -> None:
    """Same definitions, another file name: the inputs differ (no no-op shortcut), the output does not."""
    definitions, out = project
    widget = definitions / "example.com" / "widget.yaml"
    inputs = cache.inputs_digest(definitions)
    widget.rename(widget.with_name("widgets.yaml"))
    assert cache.inputs_digest(definitions) != inputs
    assert run(definitions, out) == []


@pytest.fixture
def package_copy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A copy of the generator package, which the fingerprint reads from now on (to edit it)."""
    copy = tmp_path / "package" / "generator"
    shutil.copytree(
        Path(str(resources.files("generator"))), copy, ignore=shutil.ignore_patterns("__pycache__")
    )
    monkeypatch.setattr(toolprint.resources, "files", lambda package: copy)
    return copy


def test_a_template_edit_renders_everything_again(
    project: tuple[Path, Path], asked: list[str], package_copy: Path
) -> None:
    template = package_copy / "templates" / "rest.py.j2"
    template.write_text(template.read_text() + "{# edited #}\n")
    assert run(*project) == []  # the edit renders nothing: same files, all rendered again
    assert set(asked) == every_unit(project[1])


def test_a_generator_source_edit_renders_everything_again(
    project: tuple[Path, Path], asked: list[str], package_copy: Path
) -> None:
    source = package_copy / "openapi.py"
    source.write_text(source.read_text() + "# edited\n")
    run(*project)
    assert set(asked) == every_unit(project[1])


@pytest.mark.parametrize("distribution", ["apiforge", "datamodel-code-generator", "ruff"])
def test_another_version_of_apiforge_or_of_a_code_writing_tool_renders_everything_again(
    distribution: str,
    project: tuple[Path, Path],
    asked: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert distribution in toolprint.VERSIONED
    real = metadata.version

    def other_version(name: str) -> str:
        return "999.0" if name == distribution else real(name)

    monkeypatch.setattr(toolprint.metadata, "version", other_version)
    run(*project)
    assert set(asked) == every_unit(project[1])
    assert len(asked) == len(set(asked))
    assert {*BUILTIN_GROUPS, "example_com", "<meta>"} <= set(asked)


def test_an_edited_file_is_rendered_again(project: tuple[Path, Path], rendered: list[str]) -> None:
    definitions, out = project
    models = out / "example_com" / "v1" / "models.py"
    expected = models.read_bytes()
    models.write_text("# edited by hand\n")
    assert run(definitions, out) == ["example_com/v1/models.py"]
    assert rendered == ["example_com.v1"]
    assert models.read_bytes() == expected


def test_check_trusts_no_cache(project: tuple[Path, Path]) -> None:
    """A manifest that vouches for an edited file fools the cache, never --check."""
    definitions, out = project
    models = out / "example_com" / "v1" / "models.py"
    models.write_text("# edited by hand\n")
    manifest = out / cache.MANIFEST
    index, *rest = manifest.read_text().splitlines()
    recorded = json.loads(index)["units"]["example_com.v1"]["files"]["example_com/v1/models.py"]
    forged = index.replace(recorded, cache.sha256(models.read_bytes()))
    manifest.write_text("".join(f"{line}\n" for line in (forged, *rest)))
    assert run(definitions, out) == []  # the cache believes the manifest
    differences = generate(GenerateConfig(definitions, out, check=True, workers=1))
    assert [(d.path, d.change) for d in differences] == [("example_com/v1/models.py", "changed")]


def test_cold_incremental_and_parallel_runs_write_the_same_bytes(
    cold: tuple[Path, Path], fresh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    definitions = tmp_path / "definitions"
    shutil.copytree(cold[0], definitions)
    incremental, forked = tmp_path / "incremental", tmp_path / "forked"
    shutil.copytree(cold[1], incremental)
    shutil.copytree(cold[1], forked)
    write_project(tmp_path, GADGET)
    run(definitions, incremental)
    # the same added kind with a second core: its models are written by a forked process
    forks: list[bool] = []
    real = render._forked_models

    def spy(versions: list[VersionPlan], fork: bool) -> Any:
        forks.append(fork)
        return real(versions, fork)

    monkeypatch.setattr(render, "_forked_models", spy)
    generate(GenerateConfig(definitions, forked, workers=2))
    assert forks == [True] or "fork" not in multiprocessing.get_all_start_methods()
    parallel = tmp_path / "parallel"
    # enough units that two workers do render them in worker processes
    assert len(jobs(build_plan(load_checked(definitions)))) >= render.PARALLEL_FROM_UNITS
    generate(GenerateConfig(definitions, parallel, workers=2))
    assert snapshot(fresh) == snapshot(parallel) == snapshot(incremental) == snapshot(forked)
