"""The `apiforge` command line. It sits above both halves: `init`/`new`/`generate` use the compiler, `serve` runs
the project's generated server (imported only then, so generating never needs a previous generation to import).
Every command works on the project in the current directory by default (its definitions/ and generated/)."""

from __future__ import annotations

import json
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from generator.definition import DefinitionErrors

if TYPE_CHECKING:
    from apiserver.server.apis import APIs
    from apiserver.server.options import ServeOptions


SCOPE = click.option(
    "--scope", type=click.Choice(["Namespaced", "Cluster"]), default="Namespaced", show_default=True
)

DEFINITIONS = click.option(
    "--definitions",
    "definitions_dir",
    type=click.Path(path_type=Path),
    default=Path("definitions"),
    show_default=True,
    help="Directory of definition files.",
)


class _LazyServe(click.Group):
    """The group, with `serve` built only when it is asked for (run, or listed by --help): its options come
    from the server's option module, which imports the serving machinery (0.2-0.3 s) that `generate`, `new`
    and `init` never use (one added kind regenerates in under 2 s)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), "serve"])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name == "serve":
            return _serve_command()
        return super().get_command(ctx, cmd_name)


@click.group(cls=_LazyServe)
@click.version_option(package_name="apiforge", prog_name="apiforge", message="%(prog)s %(version)s")
def main() -> None:
    """Compile Kubernetes-style resource definitions into a Kubernetes-compatible API server."""


@main.command()
@DEFINITIONS
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
@click.option("-q", "--quiet", is_flag=True, help="Print errors only (no progress, no summary).")
def generate(definitions_dir: Path, out_dir: Path, check: bool, quiet: bool) -> None:
    """Regenerate OUT from DEFINITIONS (only what changed), printing each group-version as it is rendered
    and the run's outcome and total time."""
    from generator.pipeline import GenerateConfig
    from generator.pipeline import generate as run

    started = time.perf_counter()
    rendered: list[str] = []

    def progress(line: str) -> None:
        rendered.append(line)
        click.echo(line)

    try:
        changes = run(
            GenerateConfig(
                definitions_dir, out_dir, check, progress=None if quiet or check else progress
            )
        )
    except DefinitionErrors as failure:
        for error in failure.errors:
            click.echo(f"error: {error}", err=True)
        sys.exit(1)
    took = f"{time.perf_counter() - started:.1f} s"
    if check and changes:
        for change in changes:
            click.echo(f"{change.change}: {out_dir / change.path}", err=True)
        click.echo(f"{out_dir} is out of date: run `make generate`", err=True)
        sys.exit(1)
    if quiet:
        return
    if changes:
        click.echo(f"{len(changes)} file(s) changed in {out_dir} ({took})")
    elif rendered:  # e.g. a fresh clone, whose committed output has no render cache beside it
        count = f"{len(rendered)} group-version{'s' if len(rendered) != 1 else ''}"
        click.echo(f"{out_dir} is up to date: rendered {count}, no file changed ({took})")
    else:
        click.echo(f"{out_dir} is up to date ({took})")


@main.command()
@click.option(
    "--group", required=True, help="API group, e.g. stable.example.com (core for the core group)."
)
@click.option("--kind", required=True, help="Kind, UpperCamelCase, e.g. CronTab.")
@SCOPE
@click.option(
    "--definitions",
    "definitions_dir",
    type=click.Path(path_type=Path),
    default=Path("definitions"),
    show_default=True,
)
def new(group: str, kind: str, scope: str, definitions_dir: Path) -> None:
    """Scaffold a definition file for a new kind."""
    from generator.scaffold import definition_path, scaffold_definition

    target = definition_path(definitions_dir, group, kind)
    if target.exists():
        click.echo(f"error: {target} already exists", err=True)
        sys.exit(1)
    try:
        text = scaffold_definition(group, kind, scope)
    except ValueError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(1)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    click.echo(f"wrote {target}; edit it, then run `make generate`")


@main.command()
@click.argument("directory", type=click.Path(path_type=Path))
@click.option(
    "--group",
    default="stable.example.com",
    show_default=True,
    help="API group of the example kind.",
)
@click.option("--kind", default="CronTab", show_default=True, help="The example kind.")
@SCOPE
def init(directory: Path, group: str, kind: str, scope: str) -> None:
    """Lay out a new API project in DIRECTORY (new or empty): definitions/ with one example kind, a
    Makefile (generate, check, run), a README and a .gitignore."""
    from generator.scaffold import ProjectExists, scaffold_project

    try:
        written = scaffold_project(directory, group, kind, scope)
    except (ProjectExists, ValueError) as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(1)
    for path in written:
        click.echo(f"wrote {path}")
    click.echo(f"next: cd {directory} && make generate && make run")


@main.group()
def export() -> None:
    """Write the project's API in other forms (CustomResourceDefinitions for existing clusters)."""


@export.command("crds")
@DEFINITIONS
@click.option(
    "--out", "out_dir", type=click.Path(path_type=Path), required=True, help="Output directory."
)
@click.option(
    "--webhook-namespace",
    default="apiforge-system",
    show_default=True,
    help="Namespace of the conversion webhook's Service.",
)
@click.option(
    "--webhook-service",
    default="apiforge-conversion-webhook",
    show_default=True,
    help="Name of the conversion webhook's Service.",
)
@click.option(
    "--webhook-port", type=int, default=443, show_default=True, help="Port of the Service."
)
@click.option(
    "--ca-bundle",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="PEM file of the CA that signed the webhook's certificate: the CRDs' caBundle.",
)
def export_crds(
    definitions_dir: Path,
    out_dir: Path,
    webhook_namespace: str,
    webhook_service: str,
    webhook_port: int,
    ca_bundle: Path | None,
) -> None:
    """One apiextensions.k8s.io/v1 CustomResourceDefinition per kind of DEFINITIONS in OUT; kinds whose
    versions declare renames or hooks convert through `apiforge conversion-webhook`, whose example
    Deployment and Service are written beside them."""
    from generator.export_crd import export_crds as run
    from generator.export_webhook import WebhookService

    webhook = WebhookService(
        namespace=webhook_namespace,
        name=webhook_service,
        port=webhook_port,
        ca_bundle=ca_bundle.read_bytes() if ca_bundle else b"",
    )
    _write(lambda: run(definitions_dir, out_dir, webhook))


def _refuse(failure: DefinitionErrors, code: int) -> NoReturn:
    """Every definition error on stderr, then exit ``code``."""
    for error in failure.errors:
        click.echo(f"error: {error}", err=True)
    sys.exit(code)


def _write(produce: Callable[[], list[Path]]) -> None:
    """Run a command that writes files and name each; definition errors are exit 1."""
    try:
        written = produce()
    except DefinitionErrors as failure:
        _refuse(failure, 1)
    for path in written:
        click.echo(f"wrote {path}")


@main.command("client")
@click.option(
    "--from-crd",
    "crd_files",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    multiple=True,
    required=True,
    help="A CustomResourceDefinition file (several CRDs per file, and the option repeated, are fine).",
)
@click.option(
    "--out", "out_dir", type=click.Path(path_type=Path), required=True, help="Package directory."
)
@click.option(
    "--package", default="", help="Import name (default: from the --out directory's name)."
)
@click.argument(
    "more_crd_files", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
def client(
    crd_files: tuple[Path, ...], out_dir: Path, package: str, more_crd_files: tuple[Path, ...]
) -> None:
    """A pip-installable package of typed clients (models, clients, informers, apply configurations) for
    the kinds of the CRDs given, usable against any Kubernetes cluster: `apiforge client --from-crd FILE...
    --out DIR`."""
    from generator.client_package import write_client_package

    try:
        written = write_client_package([*crd_files, *more_crd_files], out_dir, package)
    except DefinitionErrors as failure:
        for error in failure.errors:
            click.echo(f"error: {error}", err=True)
        sys.exit(1)
    click.echo(f"wrote {len(written)} files to {out_dir} (pip install {out_dir})")


@main.command("check")
@DEFINITIONS
@click.option(
    "--against",
    "ref",
    help="The old revision: a directory of definitions, or a git ref (its DEFINITIONS directory).",
)
@click.option(
    "--server",
    help="The old revision is the CRDs of this running server (and its stored objects are checked).",
)
@click.option(
    "--kubeconfig",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Credentials for the server (default: $KUBECONFIG, else ~/.kube/config).",
)
@click.option(
    "--format",
    "output",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
def check(
    definitions_dir: Path, ref: str | None, server: str | None, kubeconfig: Path | None, output: str
) -> None:
    """Report what changed from an old revision of the definitions to DEFINITIONS that breaks stored
    objects or clients; exit 1 when a finding is breaking."""
    from apiforge.evolution_check import run_check
    from apiforge.stored_objects import ServerUnreadable

    if (ref is None) == (server is None and kubeconfig is None):
        raise click.UsageError("give either --against REF or --server URL/--kubeconfig FILE")
    try:
        findings = run_check(definitions_dir, ref, server, kubeconfig)
    except DefinitionErrors as failure:
        _refuse(failure, 2)
    except ServerUnreadable as failure:
        click.echo(f"error: cannot read the server: {failure}", err=True)
        sys.exit(2)
    if output == "json":
        click.echo(json.dumps([finding.json() for finding in findings], indent=2))
    else:
        for finding in findings:
            click.echo(finding.text())
        breaking = sum(f.severity == "breaking" for f in findings)
        click.echo(f"{breaking} breaking, {len(findings) - breaking} warning(s)", err=True)
    if any(f.severity == "breaking" for f in findings):
        sys.exit(1)


@main.command("docs")
@DEFINITIONS
@click.option(
    "--out", "out_dir", type=click.Path(path_type=Path), required=True, help="Output directory."
)
def docs(definitions_dir: Path, out_dir: Path) -> None:
    """Write the API reference of DEFINITIONS in OUT: index.md and a Markdown page per group, and one
    self-contained HTML page, index.html."""
    from generator.reference_render import write_reference

    _write(lambda: write_reference(definitions_dir, out_dir))


@main.command("conversion-webhook")
@click.option(
    "--tls-cert-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="PEM serving certificate (issued for <service>.<namespace>.svc).",
)
@click.option(
    "--tls-private-key-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="PEM private key of the certificate.",
)
@click.option("--bind-address", default="0.0.0.0", show_default=True)
@click.option("--port", type=int, default=9443, show_default=True)
def conversion_webhook(
    tls_cert_file: Path, tls_private_key_file: Path, bind_address: str, port: int
) -> None:
    """Serve the project's declared conversions as a CRD conversion webhook (POST /convert, GET /healthz)
    over TLS, until SIGTERM or SIGINT."""
    from apiserver.conversionwebhook.server import StartFailure
    from apiserver.conversionwebhook.server import serve as run

    apis, _ = _project_api()
    try:
        run(apis.scheme, tls_cert_file, tls_private_key_file, bind_address, port)
    except StartFailure as error:
        raise click.ClickException(str(error)) from None


def _serve_command() -> click.Command:
    """`apiforge serve`, its options declared by apiserver.server.options and the built-in kinds' own
    (builtin.flags; imported here, see _LazyServe)."""
    from apiserver.server.options import serve_options
    from builtin.flags import KIND_FLAGS

    return click.command("serve")(serve_options(serve, KIND_FLAGS))


def serve(options: ServeOptions) -> None:
    """Serve the generated API of the project in the current directory until SIGTERM or SIGINT (then exit 0).
    Once it listens (every worker), it writes DATA_DIR/admin.kubeconfig. A failure to start is one line on
    stderr and exit 1, as kube-apiserver's `Error: ...`."""
    from apiserver.server.cli import run
    from apiserver.server.startup import StartupError

    apis, openapi_dir = _project_api()
    try:
        run(apis, openapi_dir, options)
    except StartupError as error:
        if options.verbose:
            traceback.print_exception(error.__cause__ or error, file=sys.stderr)
        raise click.ClickException(str(error)) from None


def _project_api() -> tuple[APIs, Path]:
    """The APIs (the scheme and each resource's wiring) and OpenAPI directory of the project's own generated/ package, imported from the current
    directory: an installed apiforge ships no generated package, and an installed console script does not
    have the current directory on its import path."""
    sys.path.insert(0, str(Path.cwd()))
    try:
        from generated.server import OPENAPI_DIR, build_apis
    except ModuleNotFoundError as error:
        if error.name not in ("generated", "generated.server"):
            raise
        raise click.ClickException(
            f"no generated API in {Path.cwd()}: run `apiforge generate` in the project directory"
        ) from None
    return build_apis(), OPENAPI_DIR
