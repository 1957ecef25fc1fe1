"""How a job calls tools: one interface, two transports.

* in process — `apps.tools.dispatch.call_tool` with a worker identity. Used when Qdrant is
  a server (`QDRANT_URL`: every process may open it), in the web process, and in tests.
* over HTTP — `POST {SERVICE_URL}/api/v1/tools/<name>` with a worker token of the profile,
  through the `memoryweb_client` package (the same client agents use).
  Used by Celery workers (and `runjob` from a shell) when Qdrant is embedded, because only
  the web process may open embedded Qdrant.

Both raise the same `ToolError` subclasses, so a driver never knows which one it has.
`MEMORYWEB_TOOL_TRANSPORT=inprocess|http` overrides the choice.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Protocol

from django.conf import settings

from apps.accounts.models import ROLE_WORKER, Profile
from apps.tools import errors
from apps.tools.errors import ERROR_CLASSES


class ToolExecutor(Protocol):
    transport: str

    def call(self, name: str, params: dict[str, Any], *, session_key: str = "", cwd: str = "", turn: str = "") -> Any: ...


class InProcessExecutor:
    transport = "inprocess"

    def __init__(self, profile: Profile, *, actor: str, role: str = ROLE_WORKER):
        self.profile = profile
        self.actor = actor
        self.role = role

    def call(self, name: str, params: dict[str, Any], *, session_key: str = "", cwd: str = "", turn: str = "") -> Any:
        from apps.tools.dispatch import call_tool
        from apps.tools.registry import ToolContext

        ctx = ToolContext(profile=self.profile, role=self.role, actor=self.actor, session_key=session_key, cwd=cwd, turn=turn)
        return call_tool(name, params, ctx)


class HttpExecutor:
    """Tool calls over the service's HTTP API through `memoryweb_client` (retries on
    `locked`/`unavailable` included); the client's typed errors become this app's."""

    transport = "http"

    def __init__(self, profile: Profile, *, actor: str, base_url: str | None = None, token: str | None = None, timeout: float = 120.0):
        self.profile = profile
        self.actor = actor
        self.base_url = (base_url or settings.SERVICE_URL).rstrip("/")
        self.token = token or worker_token(profile)
        self.timeout = timeout

    def call(self, name: str, params: dict[str, Any], *, session_key: str = "", cwd: str = "", turn: str = "") -> Any:
        from memoryweb_client import MemoryWebClient, MemoryWebError

        # One connection per call: an executor has no end of life to close a pool at.
        client = MemoryWebClient(self.base_url, self.token, session_key=session_key, cwd=cwd, turn=turn, timeout=self.timeout)
        try:
            with client:
                return client.call(name, params)
        except MemoryWebError as exc:
            cls = ERROR_CLASSES.get(exc.code, errors.Unavailable)
            raise cls(exc.message, details=exc.details) from None


def choose_transport() -> str:
    forced = os.environ.get("MEMORYWEB_TOOL_TRANSPORT", "").strip().lower()
    if forced in ("inprocess", "http"):
        return forced
    if settings.QDRANT_URL:
        return "inprocess"
    role = os.environ.get("MEMORYWEB_PROCESS_ROLE", "web")
    return "http" if role in ("worker", "cli") else "inprocess"


def executor_for(profile: Profile, *, actor: str, transport: str | None = None) -> ToolExecutor:
    transport = transport or choose_transport()
    if transport == "http":
        if os.environ.get("MEMORYWEB_PROCESS_ROLE") == "cli" and not service_reachable():
            # No web process holds embedded Qdrant: a shell run may open it itself.
            return InProcessExecutor(profile, actor=actor)
        return HttpExecutor(profile, actor=actor)
    return InProcessExecutor(profile, actor=actor)


def service_reachable(base_url: str | None = None) -> bool:
    """Whether the service answers at `base_url` (default MEMORYWEB_SERVICE_URL).

    Asks for the OpenAPI document, which needs neither the database nor the embedding
    model: the health check loads the model in a cold process and can take longer than
    this question should."""
    import httpx

    try:
        httpx.get(f"{(base_url or settings.SERVICE_URL).rstrip('/')}/api/v1/openapi.json", timeout=3)
    except httpx.HTTPError:
        return False
    return True


# --------------------------------------------------------------------------- worker tokens


def _token_file(profile: Profile) -> Path:
    return Path(settings.DATA_DIR) / "pipeline" / "tokens" / f"{profile.slug}.token"


def worker_token(profile: Profile) -> str:
    """The plain worker token of a profile, created on demand.

    The database keeps only its hash (accounts.ApiToken); the plain text lives in a 0600
    file in the data dir so every worker process of this install can use it.
    """
    from apps.accounts.services import TokenNameError, token_authenticate, token_create, token_name_free

    path = _token_file(profile)
    if path.exists():
        plain = path.read_text().strip()
        token = token_authenticate(plain=plain)
        if token is not None and token.profile_id == profile.pk and token.role == ROLE_WORKER:
            return plain
    for attempt in range(3):
        try:
            # A replaced worker token keeps its name in the audit log: the new one gets the next free one.
            _, plain = token_create(profile=profile, role=ROLE_WORKER, name=token_name_free(profile=profile, base="pipeline worker"))
            break
        except TokenNameError:
            if attempt == 2:
                raise  # another process took the same name three times in a row
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    tmp = path.with_suffix(f".{os.getpid()}.{time.monotonic_ns()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(plain)
    os.replace(tmp, path)
    return plain
