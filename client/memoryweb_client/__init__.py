"""Python client of the memoryweb tool API (see the project README for an example)."""

from memoryweb_client.client import MemoryWebClient
from memoryweb_client.errors import (
    ERROR_CLASSES,
    Conflict,
    Forbidden,
    InvalidParams,
    Locked,
    MemoryWebError,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    Unauthorized,
    Unavailable,
    error_from_body,
)

__all__ = [
    "ERROR_CLASSES", "Conflict", "Forbidden", "InvalidParams", "Locked", "MemoryWebClient", "MemoryWebError",
    "NotFound", "PayloadTooLarge", "RateLimited", "Unauthorized", "Unavailable", "error_from_body",
]
