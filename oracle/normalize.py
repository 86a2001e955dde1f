"""What varies between two runs of the same scenario, or between two servers for no client-visible reason, is
replaced by a placeholder before answers are compared or recorded: uids, timestamps, resourceVersions,
continue tokens, the random suffix of generated names, the server's address, certificate fingerprints, an ``Audit-Id``'s value (its
presence stays), kubectl's AGE cells. The rest is compared exactly."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import httpx

UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})")
LOOPBACK_ADDRESS = re.compile(r"(?:https://)?127\.0\.0\.1:\d+")
RESOURCE_VERSION_TEXT = re.compile(r'(resourceVersion"?: ?)"\d+"')
"""kubectl's YAML (``resourceVersion: "42"``) and a JSON stream read as text (``"resourceVersion":"42"``)."""
AGE_CELL = re.compile(r"(?<=  )(?:\d+[smhdy]){1,2}(?=  |$)", re.MULTILINE)
"""A HumanDuration in a table: at least two spaces before it, two or the line's end after it."""
HUMAN_DURATION = re.compile(r"(?:\d+[smhdy]){1,2}")
GENERATED_SUFFIX = re.compile(r"\b([a-z0-9][a-z0-9.-]*-)[bcdfghjklmnpqrstvwxz2456789]{5}\b")
"""A name kube generated in kubectl's text (no JSON says its generateName): utilrand's alphabet has no vowels."""
JWT = re.compile(r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
"""A signed token (a TokenRequest's): its claims hold times and uids, its signature the server's key."""
OPENAPI_HASH = re.compile(r"(?<=[?&]hash=)[0-9A-Fa-f]+")
"""The OpenAPI v3 index's hash of each document: a digest of bytes no two servers write alike."""
DIFF_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? [+-]\d{4}")
"""A timestamp in a unified diff's header (kubectl diff)."""
TEMP_DIR = re.compile(r"(/tmp/[A-Z]+-)\d+")
"""kubectl diff's temporary directories (LIVE-123, MERGED-456)."""
CERTIFICATE_FINGERPRINT = re.compile(r"(?<=X509SHA256=)[0-9a-f]{64}\b")
"""A client certificate's fingerprint in the credential-id extra: each server's PKI issues its own."""
COMPARED_HEADERS = ("content-type", "warning", "retry-after")
PLACEHOLDERS = {"resourceVersion": "<rv>", "continue": "<continue>"}


def normalize_headers(headers: httpx.Headers) -> dict[str, Any]:
    """The headers clients read, by lower-case name; Audit-Id as whether it is there."""
    kept: dict[str, Any] = {}
    for name in COMPARED_HEADERS:
        values = headers.get_list(name)
        if values:
            kept[name] = values if name == "warning" else values[0]
    kept["audit-id"] = "audit-id" in headers
    return kept


def normalize_text(text: str, generated: dict[str, str] | None = None) -> str:
    """``generated``: each generated name and its placeholder (the prefix, then ``<random>``)."""
    for name, placeholder in (generated or {}).items():
        text = re.sub(rf"\b{re.escape(name)}\b", placeholder, text)
    text = JWT.sub("<jwt>", text)
    text = OPENAPI_HASH.sub("<hash>", text)
    text = CERTIFICATE_FINGERPRINT.sub("<fingerprint>", text)
    text = UUID.sub("<uid>", text)
    text = TIMESTAMP.sub("<time>", text)
    text = DIFF_TIME.sub("<time>", text)
    text = TEMP_DIR.sub(r"\1<random>", text)
    text = LOOPBACK_ADDRESS.sub("<server>", text)
    text = RESOURCE_VERSION_TEXT.sub(r'\1"<rv>"', text)
    return AGE_CELL.sub("<age>", text)


COLUMN_GAP = re.compile(r"(?<=\S) {3,}")
"""The padding between a table's columns: its width follows the widest cell, an AGE or a generated name
among them, which differ between runs; the cells themselves are compared."""


def normalize_terminal(text: str) -> str:
    """kubectl's output: as ``normalize_text``, without the spaces that pad a table's last column (they
    show nothing, and would keep a golden from reading as the terminal did), and with the gaps between
    columns two spaces wide."""
    text = GENERATED_SUFFIX.sub(r"\1<random>", text)
    text = normalize_text("\n".join(line.rstrip() for line in text.split("\n")))
    return COLUMN_GAP.sub("  ", text)


def normalize_body(value: Any, keep: frozenset[str] | None = None) -> Any:
    """``value`` (decoded JSON) normalized; with ``keep``, list entries identified by a name outside it
    are dropped at every depth (see ``identity``). A generated name is replaced wherever it appears (the
    namespace's ``kubernetes.io/metadata.name`` label repeats it)."""
    return _normalize(value, keep, generated_names(value))


def generated_names(value: Any) -> dict[str, str]:
    """Every name made from a ``generateName`` in ``value``, mapped to its placeholder."""
    found: dict[str, str] = {}
    if isinstance(value, dict):
        prefix, name = value.get("generateName"), value.get("name")
        if isinstance(prefix, str) and isinstance(name, str) and prefix:
            base = name[
                :-5
            ]  # the prefix, or as much of it as the server kept (kube: 58 characters)
            if base and prefix.startswith(base):
                found[name] = base + "<random>"
        for item in value.values():
            found.update(generated_names(item))
    elif isinstance(value, list):
        for item in value:
            found.update(generated_names(item))
    return found


def _normalize(value: Any, keep: frozenset[str] | None, generated: dict[str, str]) -> Any:
    if isinstance(value, dict):
        if isinstance(value.get("cells"), list):  # a Table row: its age cells are HumanDurations
            value = {**value, "cells": [_age(cell) for cell in value["cells"]]}
        normalized = {
            normalize_text(key, generated): PLACEHOLDERS[key]
            if key in PLACEHOLDERS and isinstance(item, str) and item
            else _normalize(item, keep, generated)
            for key, item in value.items()
        }
        for key in ALLOCATED_IPS:
            if isinstance(normalized.get(key), str) and normalized[key] not in ("", "None"):
                normalized[key] = "<allocated-ip>"
            elif isinstance(normalized.get(key), list):
                normalized[key] = [
                    "<allocated-ip>" if ip != "None" else ip for ip in normalized[key]
                ]
        if isinstance(normalized.get("managedFields"), list):
            normalized["managedFields"] = sorted(normalized["managedFields"], key=_entry_order)
        return normalized
    if isinstance(value, list):
        return [_normalize(item, keep, generated) for item in _kept(value, keep)]
    if isinstance(value, str):
        return normalize_text(value, generated)
    return value


ALLOCATED_IPS = ("clusterIP", "clusterIPs")
"""A Service's cluster IPs: allocated at random when not asked for, by either server."""


def _entry_order(entry: Any) -> tuple[str, ...]:
    """managedFields entries in an order that does not depend on their times, which are normalized away
    (kube sorts by operation, then the time's second, then manager: entries of the same second swap)."""
    if not isinstance(entry, dict):
        return ("",)
    return tuple(
        str(entry.get(key, "")) for key in ("operation", "manager", "subresource", "apiVersion")
    )


def _age(cell: Any) -> Any:
    return "<age>" if isinstance(cell, str) and HUMAN_DURATION.fullmatch(cell) else cell


def identity(entry: Any) -> str | None:
    """The name a list entry is known by: an object's metadata.name (an aggregated discovery group's too),
    an APIGroup's or APIResource's name, an aggregated discovery resource's ``resource``."""
    if not isinstance(entry, dict):
        return None
    metadata = entry.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("name"), str):
        return str(metadata["name"])
    for key in ("name", "resource"):
        if isinstance(entry.get(key), str):
            return str(entry[key])
    return None


def _kept(entries: Iterable[Any], keep: frozenset[str] | None) -> list[Any]:
    if keep is None:
        return list(entries)
    return [entry for entry in entries if identity(entry) in (None, *keep)]
