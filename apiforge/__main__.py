"""`python -m apiforge` is the `apiforge` command."""

from apiforge.cli import main

main(prog_name="apiforge")
