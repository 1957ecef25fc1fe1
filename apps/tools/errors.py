"""The one error shape of the API (SPEC §2): {"error": {"code", "message", "details"}}."""

from __future__ import annotations

from typing import Any


class ToolError(Exception):
    code = "internal"
    status = 500

    def __init__(self, message: str, details: Any = None):
        super().__init__(message)
        self.message = message
        self.details = details

    def as_dict(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


class InvalidParams(ToolError):
    code, status = "invalid_params", 400


class Unauthorized(ToolError):
    code, status = "unauthorized", 401


class Forbidden(ToolError):
    code, status = "forbidden", 403


class NotFound(ToolError):
    code, status = "not_found", 404


class MethodNotAllowed(ToolError):
    """The endpoint exists but not for this HTTP method; the response carries `Allow`."""

    code, status = "method_not_allowed", 405

    def __init__(self, message: str, details: Any = None, *, allowed: tuple[str, ...] = ()):
        # Same signature as every error, so a transport can raise it again from its code.
        super().__init__(message, details)
        self.allowed = allowed

    @classmethod
    def of(cls, method: str, allowed: tuple[str, ...]) -> MethodNotAllowed:
        return cls(f"method {method} not allowed; use {', '.join(allowed)}", {"method": method, "allowed": list(allowed)}, allowed=allowed)


class Conflict(ToolError):
    code, status = "conflict", 409


class PayloadTooLarge(ToolError):
    code, status = "payload_too_large", 413


class Locked(ToolError):
    code, status = "locked", 423


class RateLimited(ToolError):
    code, status = "rate_limited", 429


class Unavailable(ToolError):
    code, status = "unavailable", 503


class Internal(ToolError):
    """An unexpected failure: still the error shape, never Django's HTML page."""

    code, status = "internal", 500


def invalid_field(field: str, message: str) -> InvalidParams:
    """An invalid_params error about one field, in the same details form as schema errors."""
    return InvalidParams(f"{field}: {message}", details=[{"field": field, "message": message}])


# Code -> class, for transports that receive the error shape and raise it again here.
ERROR_CLASSES: dict[str, type[ToolError]] = {cls.code: cls for cls in ToolError.__subclasses__()}
