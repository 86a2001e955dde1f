"""A webhook's ``url`` judged as kube judges admission and CRD conversion webhooks alike
(``ValidateWebhookURL`` in staging/src/k8s.io/apiserver/pkg/util/webhook/validation.go, called with
forceHttps): an https URL with a host, and no user information, fragment or query. Every problem is reported,
each with the part of the URL Go's ``url.Parse`` found, as kube's messages quote it."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from apiserver.schema import causes
from apiserver.schema.causes import Cause

__all__ = ["webhook_url_causes"]

_FORM = "; desired format: https://host[/path]"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _parse_error(url: str) -> str:
    """Go's url.Parse error for what it refuses and urlsplit takes (control characters, a bad port)."""
    if _CONTROL.search(url):
        return f'parse "{url}": net/url: invalid control character in URL'
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        port = urlsplit(url).netloc.rpartition("@")[2].rpartition(":")[2]
        return f'parse "{url}": invalid port ":{port}" after host'
    return ""


def webhook_url_causes(field: str, url: str) -> list[Cause]:
    """Why ``url`` cannot be a webhook's URL, at ``field`` (``...clientConfig.url``); [] when it can."""
    problem = _parse_error(url)
    if problem:
        return [causes.required(field, f"url must be a valid URL: {problem}{_FORM}")]
    parts = urlsplit(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    found = []
    if parts.scheme != "https":
        found.append(
            causes.invalid(field, parts.scheme, f"'https' is the only allowed URL scheme{_FORM}")
        )
    if not host:
        found.append(causes.invalid(field, host, f"host must be specified{_FORM}"))
    if at:
        found.append(
            causes.invalid(field, userinfo, "user information is not permitted in the URL")
        )
    if parts.fragment:
        found.append(
            causes.invalid(field, parts.fragment, "fragments are not permitted in the URL")
        )
    if parts.query:
        found.append(
            causes.invalid(field, parts.query, "query parameters are not permitted in the URL")
        )
    return found
