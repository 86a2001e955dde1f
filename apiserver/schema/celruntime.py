"""cel-rust (the ``common-expression-language`` package), imported when a rule is first compiled or run:
``import cel`` also loads its command line (prompt_toolkit, ~0.1 s), which neither a server that has not
evaluated a rule yet (a test fixture's first start, `apiforge serve`) nor the generator should pay."""

from __future__ import annotations

from types import ModuleType


def evaluator() -> ModuleType:
    """The ``cel`` module (compile, Context, OptionalValue), imported on the first call."""
    import cel

    return cel
