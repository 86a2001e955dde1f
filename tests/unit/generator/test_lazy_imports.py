"""What importing the command line costs: `apiforge generate`, `new` and `init` must not pay for the serving
machinery or the generator's heavy libraries before they need them (one added kind under
2 s; `serve`'s imports alone were 0.2-0.3 s of every run), and the generator's modules import
datamodel-code-generator and the OpenAPI validator only in the work that uses them (generator/render.py). Checked
in a fresh interpreter, since this test process has long imported all of them."""

from __future__ import annotations

import subprocess
import sys

import pytest

# the serving stack (apiserver.server.options pulled in uvicorn's siblings, httpx, jwt and cryptography),
# model generation and OpenAPI validation, and cel-rust's package (its __init__ loads its command line,
# prompt_toolkit and typer: ~0.2 s), which checking rules does not need
HEAVY = (
    "apiserver.server.options",
    "uvicorn",
    "httpx",
    "datamodel_code_generator",
    "openapi_spec_validator",
    "cel",
)


def imported_after(statement: str) -> set[str]:
    """The HEAVY modules in sys.modules after running ``statement`` in a new interpreter."""
    probe = f"import sys\n{statement}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    return set(result.stdout.split())


@pytest.mark.parametrize(
    "statement",
    ["import apiforge.cli", "import generator.pipeline, generator.render, generator.check"],
)
def test_the_command_line_imports_nothing_heavy(statement: str) -> None:
    assert imported_after(statement) == set()


def test_the_probe_sees_an_import() -> None:
    """The check above can fail: the same probe sees the serving options once `serve` is built."""
    assert "apiserver.server.options" in imported_after(
        "import click, apiforge.cli\n"
        "apiforge.cli.main.get_command(click.Context(apiforge.cli.main), 'serve')"
    )
