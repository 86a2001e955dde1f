"""The toolchain as a user gets it: a wheel built from this repository and installed into a
fresh virtualenv outside it, then used in an empty directory with nothing of the repository on the import path:
`apiforge init`, `apiforge new`, `apiforge generate`, the project's `make check`, `apiforge serve`, and kubectl
1.27 creating and reading an object of the new kind. One wheel and one virtualenv for the module: pip resolves
every dependency of the wheel from the package index, which takes most of this module's time (~40 s)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import REPO, ServerProcess, free_port

# what a build must not see: the repository's virtualenv and caches (large, and not sources)
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", "__pycache__", "*.egg-info", "build", "dist", ".apiforge-data", ".*_cache"
)
GADGET = """\
apiVersion: tools.example.com/v1
kind: Gadget
metadata: {name: first, namespace: default}
spec: {replicas: 3}
"""


def _isolated(venv: Path) -> dict[str, str]:
    """The environment of a user of ``venv``: its commands first on PATH, and an empty PYTHONPATH (which
    Python ignores) so that nothing of the repository, which the test run itself imports, is importable or
    seen by pip as installed."""
    path = f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"
    return {**os.environ, "PYTHONPATH": "", "VIRTUAL_ENV": str(venv), "PATH": path}


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    result = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=240, check=False
    )
    assert result.returncode == 0, (
        f"{' '.join(command)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    )
    return result.stdout


@dataclass(frozen=True)
class Installed:
    """The wheel, and the virtualenv it is installed in."""

    wheel: Path
    venv: Path

    @property
    def environment(self) -> dict[str, str]:
        return _isolated(self.venv)

    def run(self, *command: str, cwd: Path) -> str:
        return _run(list(command), cwd, self.environment)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    venv = work / "venv"
    # built from a copy, so that the build leaves no build/ or *.egg-info in the repository
    shutil.copytree(REPO, source, ignore=NOT_SOURCES)
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet"]
    _run([*pip_wheel, "--wheel-dir", str(work / "dist"), str(source)], work, _isolated(venv))
    (wheel,) = (work / "dist").glob("apiforge-*.whl")
    _run([sys.executable, "-m", "venv", str(venv)], work, _isolated(venv))
    # --no-compile: the few modules used compile on first import, not all of every dependency
    pip_install = [str(venv / "bin" / "pip"), "install", "--quiet", "--no-compile", str(wheel)]
    _run(pip_install, work, _isolated(venv))
    return Installed(wheel, venv)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty directory outside the repository."""
    directory = tmp_path / "workspace"
    directory.mkdir()
    return directory


def test_the_wheel_ships_the_toolchain_but_not_this_repositorys_generated_package(
    installed: Installed,
) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    assert not [name for name in names if name.startswith("generated/")]
    assert {"apiforge/py.typed", "apiserver/py.typed", "generator/py.typed"} <= names
    assert {
        "generator/templates/server.py.j2",
        "generator/templates/openapi/shared-schemas.json",
        "generator/templates/project/Makefile.j2",
    } <= names


def test_the_installed_toolchain_is_the_wheels(installed: Installed, workspace: Path) -> None:
    """What the next test runs is the installed copy, not the repository's sources."""
    origin = installed.run(
        "python", "-c", "import generator; print(generator.__file__)", cwd=workspace
    )
    assert Path(origin.strip()).is_relative_to(installed.venv)
    probe = "import importlib.util; print(importlib.util.find_spec('generated'))"
    assert installed.run("python", "-c", probe, cwd=workspace).strip() == "None"


def test_serve_outside_a_project_says_what_to_do(installed: Installed, workspace: Path) -> None:
    result = subprocess.run(
        ["apiforge", "serve", "--port", str(free_port())],
        cwd=workspace,
        env=installed.environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert f"no generated API in {workspace}: run `apiforge generate`" in result.stderr


@pytest.fixture
def project(installed: Installed, workspace: Path) -> Path:
    """`apiforge init` then `apiforge new` and `apiforge generate` in the project, as its README says."""
    installed.run("apiforge", "init", "proj", cwd=workspace)
    project = workspace / "proj"
    assert {".gitignore", "Makefile", "README.md", "definitions"} == {
        path.name for path in project.iterdir()
    }
    definitions = sorted(
        path.relative_to(project / "definitions").as_posix()
        for path in (project / "definitions").rglob("*.yaml")
    )
    assert definitions == ["stable.example.com/crontab.yaml"]
    installed.run(
        "apiforge", "new", "--group", "tools.example.com", "--kind", "Gadget", cwd=project
    )
    installed.run("apiforge", "generate", cwd=project)
    assert "generated is up to date" in installed.run("make", "check", cwd=project)
    return project


@pytest.fixture
def kubectl(installed: Installed, project: Path, tmp_path: Path) -> Iterator[Kubectl]:
    """`apiforge serve` (the installed console script) in the project, and kubectl 1.27 for it."""
    command = (str(installed.venv / "bin" / "apiforge"),)
    server = ServerProcess(tmp_path / "data", free_port(), cwd=project, command=command)
    server.start(installed.environment)
    yield Kubectl(kubectl_binary(27), server.kubeconfig, tmp_path / "kubectl-cache")
    server.stop()


def test_an_init_project_is_generated_and_served_to_kubectl(kubectl: Kubectl) -> None:
    created = kubectl.run("create", "-f", "-", stdin=GADGET).stdout
    assert "gadget.tools.example.com/first created" in created
    replicas = kubectl.run(
        "get", "gadget", "first", "-n", "default", "-o", "jsonpath={.spec.replicas}"
    )
    assert replicas.stdout == "3"
    assert "crontabs" in kubectl.run("api-resources", "--api-group", "stable.example.com").stdout
