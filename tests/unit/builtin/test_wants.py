"""The built-in parts are made with the server's one config, each typed as the narrow Protocol of what it uses
(builtin/wants.py, and the Protocols that combine them beside their parts). mypy holds a part to its
Protocol, but not the config to it: the generated bindings hand the config on untyped. So here: every such
Protocol names only what the config has, and every maker the built-in definitions name takes one."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from typing import Any, Protocol, get_type_hints

import builtin
from apiserver.server.config import ServerConfig
from apiserver.storage import MemoryStorage
from builtin import wants
from generated.server import build_apis

_NOT_MEMBERS = {"_is_protocol", "_is_runtime_protocol"}


def builtin_protocols() -> Iterator[type]:
    """Every Protocol class defined in builtin/ that is, or extends, one of builtin.wants."""
    wanted = {
        c for c in vars(wants).values() if inspect.isclass(c) and c.__module__ == wants.__name__
    }
    for info in pkgutil.walk_packages(builtin.__path__, "builtin."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and value.__module__ == module.__name__
                and getattr(value, "_is_protocol", False)
                and wanted & set(value.__mro__)
            ):
                yield value


def members(protocol: type) -> set[str]:
    """The attributes, properties and methods a Protocol names, its bases' included."""
    found: set[str] = set()
    for cls in protocol.__mro__:
        if cls in (Protocol, object) or not getattr(cls, "_is_protocol", False):
            continue
        found |= set(getattr(cls, "__annotations__", {}))
        found |= {
            name
            for name, value in vars(cls).items()
            if (not name.startswith("__") and name not in _NOT_MEMBERS and callable(value))
            or isinstance(value, property)
        }
    return found


def test_the_config_has_all_that_any_part_wants() -> None:
    protocols = list(builtin_protocols())
    assert {wants.WantsAuthorizer, wants.WantsStores, wants.WantsParts} <= set(protocols)
    assert [p for p in protocols if p.__module__ != wants.__name__]  # the combining ones too
    config = ServerConfig(MemoryStorage())
    missing = sorted(
        f"{p.__module__}.{p.__qualname__}.{name}"
        for p in protocols
        for name in members(p)
        if not hasattr(config, name)
    )
    assert missing == []


def makers() -> Iterator[tuple[str, Callable[..., Any]]]:
    """Every maker the built-in definitions name that the server calls with its config."""
    apis = build_apis()
    for (group, plural), options in apis.rest.items():
        if options.strategy is not None:
            yield f"{group}/{plural} strategy", options.strategy
        for sub in options.create_subresources:
            yield f"{group}/{plural}/{sub.name}", sub.handler
    for (group, plural), parts in apis.parts.items():
        for maker in (*parts.admission, *parts.controllers, *parts.authenticators):
            yield f"{group}/{plural} part", maker


def wanted(maker: Callable[..., Any]) -> object:
    """The type of the one argument ``maker`` is called with (None when it takes none beyond a default)."""
    target = maker.__init__ if inspect.isclass(maker) else maker
    parameters = [p for p in inspect.signature(target).parameters.values() if p.name != "self"]
    if not parameters or parameters[0].default is not inspect.Parameter.empty:
        return None
    return get_type_hints(target)[parameters[0].name]


def test_every_maker_takes_a_narrow_protocol_or_nothing() -> None:
    """Not the whole config: a part that asks for all of it could reach anything."""
    protocols = set(builtin_protocols())
    seen = {name: wanted(maker) for name, maker in makers()}
    assert "/services strategy" in seen and "/serviceaccounts/token" in seen
    whole = sorted(
        name for name, kind in seen.items() if kind is not None and kind not in protocols
    )
    assert whole == []
    assert seen["/services strategy"] is not None  # the Service strategy does want something
