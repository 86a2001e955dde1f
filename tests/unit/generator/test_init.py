"""`apiforge init DIR` lays out a new API project, and never writes into a directory that holds something;
`apiforge new` answers bad arguments with an error, not a traceback."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from apiforge.cli import main
from generator.load import load_checked
from generator.scaffold import scaffold_definition


def test_init_lays_out_a_project_with_one_example_kind(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    result = CliRunner().invoke(main, ["init", str(project)])
    assert result.exit_code == 0, result.output
    files = sorted(
        path.relative_to(project).as_posix() for path in project.rglob("*") if path.is_file()
    )
    assert files == [
        ".gitignore",
        "Makefile",
        "README.md",
        "definitions/stable.example.com/crontab.yaml",
    ]
    definition = project / "definitions" / "stable.example.com" / "crontab.yaml"
    assert definition.read_text() == scaffold_definition(
        "stable.example.com", "CronTab", "Namespaced"
    )
    (loaded,) = [d for d in load_checked(project / "definitions") if not d.server.builtin]
    assert (loaded.group, loaded.kind) == ("stable.example.com", "CronTab")
    assert "next: cd" in result.output


def test_the_makefile_calls_the_installed_apiforge(tmp_path: Path) -> None:
    CliRunner().invoke(main, ["init", str(tmp_path / "shop")])
    makefile = (tmp_path / "shop" / "Makefile").read_text()
    assert makefile.startswith("# shop: ")
    assert "APIFORGE ?= apiforge\n" in makefile
    assert (
        "generate:\n\t$(APIFORGE) generate --definitions definitions --out generated\n" in makefile
    )
    assert (
        "check:\n\t$(APIFORGE) generate --definitions definitions --out generated --check\n"
        in makefile
    )
    assert "run: generate\n\t$(APIFORGE) serve --data-dir $(DATA_DIR) " in makefile
    ignored = (tmp_path / "shop" / ".gitignore").read_text().splitlines()
    assert {".apiforge-data/", "generated/.manifest.json"} <= set(ignored)


def test_the_readme_shows_the_example_kind(tmp_path: Path) -> None:
    arguments = [
        "init",
        str(tmp_path / "p"),
        "--group",
        "core",
        "--kind",
        "Box",
        "--scope",
        "Cluster",
    ]
    assert CliRunner().invoke(main, arguments).exit_code == 0
    readme = (tmp_path / "p" / "README.md").read_text()
    assert readme.startswith("# p\n")
    assert "apiVersion: v1\nkind: Box\n" in readme
    assert "kubectl get boxes\n" in readme
    (loaded,) = [d for d in load_checked(tmp_path / "p" / "definitions") if not d.server.builtin]
    assert (loaded.group, loaded.scope) == ("", "Cluster")


def test_init_refuses_a_directory_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    result = CliRunner().invoke(main, ["init", str(tmp_path)])
    assert result.exit_code == 1
    assert f"error: {tmp_path} is not an empty directory" in result.output
    assert [path.name for path in tmp_path.iterdir()] == ["notes.txt"]


def test_init_refuses_a_file(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("")
    result = CliRunner().invoke(main, ["init", str(tmp_path / "taken")])
    assert result.exit_code == 1
    assert "is not an empty directory" in result.output


def test_init_into_an_empty_directory(tmp_path: Path) -> None:
    assert CliRunner().invoke(main, ["init", str(tmp_path)]).exit_code == 0
    assert (tmp_path / "Makefile").is_file()


def test_init_with_a_bad_kind_writes_nothing(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["init", str(tmp_path / "p"), "--kind", "lower"])
    assert result.exit_code == 1
    assert 'error: kind "lower" must be UpperCamelCase' in result.output
    assert not (tmp_path / "p").exists()


def test_new_answers_bad_arguments_with_an_error(tmp_path: Path) -> None:
    arguments = ["new", "--group", "nodot", "--kind", "Gadget", "--definitions", str(tmp_path)]
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert 'error: group "nodot" needs at least one dot' in result.output
    assert list(tmp_path.iterdir()) == []
