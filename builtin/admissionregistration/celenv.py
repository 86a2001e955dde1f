"""The CEL environment of admission expressions (match conditions, policy validations, variables, audit
annotations, message expressions): the Kubernetes libraries the schema rules have, plus the authorizer
library. One context per thread, its functions registered once (that costs more than an evaluation), its
variables replaced for each evaluation."""

from __future__ import annotations

import threading
from typing import Any

import cel

from apiserver.schema.cellibs import LIBRARIES
from builtin.admissionregistration.authz import FUNCTIONS as AUTHORIZER

_PER_THREAD = threading.local()


def admission_context(variables: dict[str, Any]) -> Any:
    """The thread's context with ``variables`` bound. Only those: a variable the caller's expressions do
    not read may keep an earlier evaluation's value (binding costs microseconds per value)."""
    context = getattr(_PER_THREAD, "context", None)
    if context is None:
        context = _PER_THREAD.context = cel.Context()
        for name, function in {**LIBRARIES, **AUTHORIZER}.items():
            context.add_function(name, function)
    for name, value in variables.items():
        context.add_variable(name, value)
    return context


def compile_expression(text: str) -> Any:
    """The program of an admission expression; raises ValueError with the CEL parser's message."""
    return cel.compile(text)
