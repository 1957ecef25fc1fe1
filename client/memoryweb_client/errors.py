"""Typed errors: one class per error code of the tool API (`{"error": {code, message, details}}`)."""

from __future__ import annotations

from typing import Any


class MemoryWebError(Exception):
    """An error answer of the service. `code`, `message` and `details` are the server's."""

    code = "error"
    #: whether the same call may succeed when simply sent again later
    retryable = False

    def __init__(self, message: str, *, details: Any = None, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.details = details
        self.status = status
        if code is not None:
            self.code = code

    def as_dict(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, status={self.status})"


class InvalidParams(MemoryWebError):
    code = "invalid_params"


class Unauthorized(MemoryWebError):
    code = "unauthorized"


class Forbidden(MemoryWebError):
    code = "forbidden"


class NotFound(MemoryWebError):
    code = "not_found"


class Conflict(MemoryWebError):
    code = "conflict"


class PayloadTooLarge(MemoryWebError):
    code = "payload_too_large"


class Locked(MemoryWebError):
    """The profile's write lock stayed busy: nothing was applied, sending again is safe."""

    code = "locked"
    retryable = True


class RateLimited(MemoryWebError):
    """A per-turn budget is spent; retrying in the same turn cannot help."""

    code = "rate_limited"


class Unavailable(MemoryWebError):
    """A dependency is down, or the service could not be reached."""

    code = "unavailable"
    retryable = True


ERROR_CLASSES: dict[str, type[MemoryWebError]] = {
    cls.code: cls
    for cls in (InvalidParams, Unauthorized, Forbidden, NotFound, Conflict, PayloadTooLarge, Locked, RateLimited, Unavailable)
}


def error_from_body(body: Any, status: int) -> MemoryWebError:
    """The typed error of an error answer; a body without the error object is `Unavailable`."""
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict):
        return Unavailable(f"the service answered {status} without an error object", status=status)
    code = str(err.get("code") or "")
    cls = ERROR_CLASSES.get(code, MemoryWebError)
    message = str(err.get("message") or code or f"HTTP {status}")
    return cls(message, details=err.get("details"), status=status, code=code or None)
