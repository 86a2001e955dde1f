"""The keys each well-known Secret type requires (kube's ValidateSecret, pkg/apis/core/validation/
validation.go, with the type and key names of pkg/apis/core/types.go): a controller or kubelet that reads a
``kubernetes.io/tls`` Secret counts on ``tls.crt`` and ``tls.key`` being there. Other types need nothing."""

from __future__ import annotations

import base64
import binascii

import orjson

from apiserver.machinery.objects import Object
from apiserver.schema import Cause
from apiserver.schema.causes import invalid, required

SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"
REDACTED = "<secret contents redacted>"


def type_causes(obj: Object) -> list[Cause]:
    """What the Secret's ``type`` requires and ``obj`` lacks, worded as kube's field errors."""
    data = obj.get("data") or {}
    kind = obj.get("type") or ""
    if kind == "kubernetes.io/service-account-token":
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if not annotations.get(SERVICE_ACCOUNT_NAME_KEY):
            return [required(f"metadata.annotations[{SERVICE_ACCOUNT_NAME_KEY}]")]
    elif kind == "kubernetes.io/dockercfg":
        return _json_key(data, ".dockercfg")
    elif kind == "kubernetes.io/dockerconfigjson":
        return _json_key(data, ".dockerconfigjson")
    elif kind == "kubernetes.io/basic-auth":
        # either may be empty, but one of the two must be there
        if "username" not in data and "password" not in data:
            return [required("data[username]"), required("data[password]")]
    elif kind == "kubernetes.io/ssh-auth":
        if not _decoded(data.get("ssh-privatekey")):
            return [required("data[ssh-privatekey]")]
    elif kind == "kubernetes.io/tls":
        return [required(f"data[{key}]") for key in ("tls.crt", "tls.key") if key not in data]
    return []


def _json_key(data: dict[str, str], key: str) -> list[Cause]:
    """The key must be there and hold a JSON object (kube unmarshals it into a map)."""
    if key not in data:
        return [required(f"data[{key}]")]
    try:
        parsed = orjson.loads(_decoded(data[key]))
    except orjson.JSONDecodeError as error:
        return [invalid(f"data[{key}]", REDACTED, _go_json_error(error))]
    if parsed is not None and not isinstance(parsed, dict):  # Go reads null as an empty map
        return [invalid(f"data[{key}]", REDACTED, _go_json_type_error(parsed))]
    return []


def _decoded(value: object) -> bytes:
    if not isinstance(value, str):
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value.encode()


def _go_json_error(error: orjson.JSONDecodeError) -> str:
    """encoding/json's words for bytes that are not JSON (the offset differs: Go's scanner says where
    the first bad character was)."""
    if not error.doc.strip():
        return "unexpected end of JSON input"
    return (
        f"invalid character {error.doc[error.pos : error.pos + 1]!r} looking for beginning of value"
    )


def _go_json_type_error(value: object) -> str:
    names = {bool: "bool", str: "string", list: "array", int: "number", float: "number"}
    go_type = names.get(type(value), "value")
    return f"json: cannot unmarshal {go_type} into Go value of type map[string]interface {{}}"
