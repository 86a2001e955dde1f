"""The `apiforge` command line. It sits above both halves: `generate`/`new` use the compiler, `serve` runs the
generated server (imported only then, so generating never needs a previous generation to import)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from generator.definition import DefinitionErrors


@click.group()
def main() -> None:
    """Compile Kubernetes-style resource definitions into a Kubernetes-compatible API server."""


@main.command()
@click.option(
    "--definitions",
    "definitions_dir",
    type=click.Path(path_type=Path),
    default=Path("definitions"),
    show_default=True,
    help="Directory of definition files.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    default=Path("generated"),
    show_default=True,
    help="Output directory.",
)
@click.option(
    "--check", is_flag=True, help="Fail if the output differs from what would be generated."
)
def generate(definitions_dir: Path, out_dir: Path, check: bool) -> None:
    """Regenerate OUT from DEFINITIONS (only what changed)."""
    from generator.pipeline import GenerateConfig
    from generator.pipeline import generate as run

    try:
        changes = run(GenerateConfig(definitions_dir, out_dir, check))
    except DefinitionErrors as failure:
        for error in failure.errors:
            click.echo(f"error: {error}", err=True)
        sys.exit(1)
    if check:
        if changes:
            for change in changes:
                click.echo(f"{change.change}: {out_dir / change.path}", err=True)
            click.echo(f"{out_dir} is out of date: run `make generate`", err=True)
            sys.exit(1)
        click.echo(f"{out_dir} is up to date")
        return
    click.echo(
        f"{len(changes)} file(s) changed in {out_dir}" if changes else f"{out_dir} is up to date"
    )


@main.command()
@click.option(
    "--group", required=True, help="API group, e.g. stable.example.com (core for the core group)."
)
@click.option("--kind", required=True, help="Kind, UpperCamelCase, e.g. CronTab.")
@click.option(
    "--scope", type=click.Choice(["Namespaced", "Cluster"]), default="Namespaced", show_default=True
)
@click.option(
    "--definitions",
    "definitions_dir",
    type=click.Path(path_type=Path),
    default=Path("definitions"),
    show_default=True,
)
def new(group: str, kind: str, scope: str, definitions_dir: Path) -> None:
    """Scaffold a definition file for a new kind."""
    from generator.scaffold import scaffold_definition

    target = definitions_dir / group / f"{kind.lower()}.yaml"
    if target.exists():
        click.echo(f"error: {target} already exists", err=True)
        sys.exit(1)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(scaffold_definition(group, kind, scope))
    click.echo(f"wrote {target}; edit it, then run `make generate`")


@main.command(
    context_settings={
        "ignore_unknown_options": True,
        "allow_extra_args": True,
        "help_option_names": [],
    }
)
@click.pass_context
def serve(context: click.Context) -> None:
    """Serve the generated API (see `apiforge serve --help`)."""
    from generated.server import main as serve_generated

    serve_generated(list(context.args))
