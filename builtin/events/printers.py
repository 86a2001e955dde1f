"""events.k8s.io/v1 Event's table cells: kube prints the internal core Event whichever group is asked
(pkg/registry/events serves core's storage and its TableConvertor, pkg/printers/internalversion printEvent),
so these are core's cells (builtin.core.printers) read through core's field names (regarding is
involvedObject, note is message, deprecatedSource is source...)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from builtin.core import printers
from builtin.events.conversion import core_view

Cell = TypeVar("Cell", str, int)


def _through_core(
    cell: Callable[[dict[str, Any], datetime], Cell],
) -> Callable[[dict[str, Any], datetime], Cell]:
    """Core's cell, given the events.k8s.io object under core's names."""

    def through_core(obj: dict[str, Any], now: datetime) -> Cell:
        return cell(core_view(obj), now)

    through_core.__doc__ = cell.__doc__
    return through_core


event_last_seen = _through_core(printers.event_last_seen)
event_first_seen = _through_core(printers.event_first_seen)
event_count = _through_core(printers.event_count)
event_object = _through_core(printers.event_object)
event_subobject = _through_core(printers.event_subobject)
event_source = _through_core(printers.event_source)
event_message = _through_core(printers.event_message)
