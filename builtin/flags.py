"""The built-in kinds' own `apiforge serve` flags, which the runtime does not know (it offers the hook:
apiserver/server/options.py's KindFlags), and what the kinds tell the runtime with no flag; every served
project has the built-in kinds, so `apiforge serve` always adds them."""

from __future__ import annotations

from apiserver.server.options import KindFlags
from builtin.core.eventttl import event_ttl_flags
from builtin.core.serviceranges import service_range_flags
from builtin.kindfacts import kind_facts

KIND_FLAGS: tuple[KindFlags, ...] = (service_range_flags, event_ttl_flags, kind_facts)
"""kube-apiserver's --service-cluster-ip-range and --service-node-port-range (Services'), --event-ttl
(Events'); what the kinds tell the runtime (builtin/kindfacts.py)."""
