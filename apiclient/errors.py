"""kube's errors as exceptions: every refusal carries the Status the server answered (its reason, message and
causes), and its class says which of apimachinery's ``errors.Is*`` it is (IsNotFound, IsAlreadyExists,
IsConflict, IsInvalid, IsForbidden, IsTooManyRequests, IsGone...), chosen by the Status's reason as client-go
does, by the HTTP code when the body is not a Status (a 429 from the in-flight limits is plain text)."""

from __future__ import annotations

from typing import Any

import orjson


class APIStatusError(Exception):
    """A request the server refused (client-go's StatusError)."""

    def __init__(self, code: int, status: dict[str, Any], retry_after: float | None = None) -> None:
        self.code = code
        self.status = status
        self.retry_after = retry_after
        super().__init__(f"{code} {self.reason}: {self.message}")

    @property
    def reason(self) -> str:
        return str(self.status.get("reason") or "")

    @property
    def message(self) -> str:
        return str(self.status.get("message") or "")

    @property
    def causes(self) -> list[dict[str, Any]]:
        """The Status's details.causes: for an Invalid, one per field (field, reason, message)."""
        details = self.status.get("details") or {}
        return list(details.get("causes") or ()) if isinstance(details, dict) else []


class BadRequest(APIStatusError):
    """400."""


class Unauthorized(APIStatusError):
    """401."""


class Forbidden(APIStatusError):
    """403."""


class NotFound(APIStatusError):
    """404."""


class MethodNotAllowed(APIStatusError):
    """405."""


class AlreadyExists(APIStatusError):
    """409 AlreadyExists: a create of a name that exists."""


class Conflict(APIStatusError):
    """409 Conflict: the object changed since the resourceVersion the write was conditioned on."""


class Gone(APIStatusError):
    """410 Expired (or Gone): a watch or list from a resourceVersion that was compacted away."""


class UnsupportedMediaType(APIStatusError):
    """415."""


class Invalid(APIStatusError):
    """422: the object failed validation; ``causes`` name the fields."""


class TooManyRequests(APIStatusError):
    """429: retry after ``retry_after`` seconds."""


class InternalError(APIStatusError):
    """500."""


class ServiceUnavailable(APIStatusError):
    """503."""


class ServerTimeout(APIStatusError):
    """504 Timeout: the server gave up waiting; the write may still be applied."""


_BY_REASON: dict[str, type[APIStatusError]] = {
    "BadRequest": BadRequest,
    "Unauthorized": Unauthorized,
    "Forbidden": Forbidden,
    "NotFound": NotFound,
    "MethodNotAllowed": MethodNotAllowed,
    "AlreadyExists": AlreadyExists,
    "Conflict": Conflict,
    "Gone": Gone,
    "Expired": Gone,
    "UnsupportedMediaType": UnsupportedMediaType,
    "Invalid": Invalid,
    "TooManyRequests": TooManyRequests,
    "InternalError": InternalError,
    "ServiceUnavailable": ServiceUnavailable,
    "Timeout": ServerTimeout,
    "ServerTimeout": ServerTimeout,
}
_BY_CODE: dict[int, type[APIStatusError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    410: Gone,
    415: UnsupportedMediaType,
    422: Invalid,
    429: TooManyRequests,
    500: InternalError,
    503: ServiceUnavailable,
    504: ServerTimeout,
}


def status_error(code: int, body: bytes, retry_after: str | None = None) -> APIStatusError:
    """The exception for a refusal: its Status from the body (or one made from the text of a body that
    is not a Status), its class by the Status's reason, else by ``code``."""
    try:
        parsed = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict) and parsed.get("kind") == "Status":
        status = parsed
    else:
        status = {
            "kind": "Status",
            "status": "Failure",
            "code": code,
            "message": body.decode(errors="replace").strip(),
        }
    kind = _BY_REASON.get(str(status.get("reason") or ""), _BY_CODE.get(code, APIStatusError))
    seconds = None
    if retry_after is not None:
        try:
            seconds = float(retry_after)
        except ValueError:
            seconds = None
    return kind(code, status, seconds)
