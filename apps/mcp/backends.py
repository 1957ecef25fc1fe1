"""Where MCP tool calls go: this process's dispatch, or the running service over HTTP.

The rule is the job workers' (apps.pipeline.executor): embedded Qdrant has one owner, the
web process, so a separate process (the stdio server) reaches the tools over HTTP; with a
Qdrant server any process may call them in process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apps.tools.dispatch import call_tool
from apps.tools.errors import ERROR_CLASSES, Unauthorized, Unavailable
from apps.tools.registry import ToolContext


class LocalBackend:
    """`apps.tools.dispatch.call_tool` with the caller's context (one door for every tool)."""

    def __init__(self, ctx: ToolContext):
        self.ctx = ctx
        self.role = ctx.role

    def call(self, name: str, arguments: dict[str, Any], *, progress: Callable[[str], None] | None = None) -> Any:
        # Each call gets its own copy: `_context` in one call's arguments must not leak
        # into the next.
        ctx = ToolContext(**{**self.ctx.__dict__, "extra": dict(self.ctx.extra)})
        if progress is not None:
            ctx.extra["progress"] = progress
        return call_tool(name, arguments, ctx)


class RemoteBackend:
    """The tool API of the running service through `memoryweb_client`."""

    def __init__(self, base_url: str, token: str, *, session_key: str = "", cwd: str = ""):
        from memoryweb_client import MemoryWebClient

        self.client = MemoryWebClient(base_url, token, session_key=session_key, cwd=cwd)
        self.role = self.identity()["role"]

    def identity(self) -> dict[str, Any]:
        from memoryweb_client import MemoryWebError

        try:
            return self.client.whoami()
        except MemoryWebError as exc:
            raise Unauthorized(f"the service at {self.client.base_url} refused the token: {exc.message}") from None

    def call(self, name: str, arguments: dict[str, Any], *, progress: Callable[[str], None] | None = None) -> Any:
        """`progress` is not relayed: the tool API answers in one piece."""
        from memoryweb_client import MemoryWebError

        try:
            return self.client.call(name, arguments)
        except MemoryWebError as exc:
            raise ERROR_CLASSES.get(exc.code, Unavailable)(exc.message, details=exc.details) from None
