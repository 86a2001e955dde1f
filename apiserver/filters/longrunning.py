"""Which requests are long-running: watches, proxies and streaming subresources hold their connection
for minutes, so the in-flight limits do not count them and audit records when their response starts."""

from __future__ import annotations

from apiserver.endpoints.routing import RequestInfo

_VERBS = frozenset(("watch", "proxy"))
_SUBRESOURCES = frozenset(("attach", "exec", "proxy", "log", "portforward"))


def is_long_running(info: RequestInfo) -> bool:
    """kube-apiserver's check: BasicLongRunningRequestCheck({watch, proxy}, {attach, exec, proxy, log,
    portforward}) (k8s.io/apiserver pkg/server/filters/longrunning.go)."""
    if info.verb in _VERBS:
        return True
    if info.is_resource_request:
        return info.subresource in _SUBRESOURCES
    return info.path.startswith("/debug/pprof/")
