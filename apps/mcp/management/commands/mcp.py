"""`manage.py mcp --token T`: an MCP server on stdin/stdout for clients that start one
(Claude Code, Cursor, Claude Desktop)."""

from __future__ import annotations

import os
import sys
from typing import ClassVar

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Serve MCP over stdio with a token of a profile (MEMORYWEB_TOKEN or --token)."
    # A client starts this process on demand: start fast, and keep stdout for the protocol.
    requires_system_checks: ClassVar[list[str]] = []

    def add_arguments(self, parser):
        parser.add_argument("--token", default="", help="an API token (default: the MEMORYWEB_TOKEN variable)")
        parser.add_argument("--url", default="", help="the running service (default: MEMORYWEB_SERVICE_URL)")
        parser.add_argument("--session", default="", help="sessionKey sent with every call (X-Memory-Session)")
        parser.add_argument("--cwd", default="", help="working directory sent with every call (default: the current one)")
        parser.add_argument("--transport", choices=("auto", "http", "inprocess"), default="auto",
                            help="auto: over HTTP to the running service when Qdrant is embedded, in process otherwise")

    def handle(self, *args, token: str, url: str, session: str, cwd: str, transport: str, **options):
        from apps.mcp.stdio import serve_stdio

        plain = (token or os.environ.get("MEMORYWEB_TOKEN", "")).strip()
        if not plain:
            raise CommandError("a token is needed: --token T or the MEMORYWEB_TOKEN environment variable")
        # The protocol owns stdout: anything else printed goes to stderr.
        out = sys.stdout.buffer
        sys.stdout = sys.stderr
        backend = self._backend(plain, url or settings.SERVICE_URL, session, cwd or os.getcwd(), transport)
        serve_stdio(backend, stdin=sys.stdin.buffer, stdout=out)

    def _backend(self, plain: str, url: str, session: str, cwd: str, transport: str):
        from apps.mcp.backends import LocalBackend, RemoteBackend
        from apps.pipeline.executor import choose_transport, service_reachable
        from apps.tools.errors import ToolError

        # Same rule as a job run from a shell: never open embedded Qdrant beside the web process.
        os.environ.setdefault("MEMORYWEB_PROCESS_ROLE", "cli")
        if transport == "auto":
            transport = choose_transport()
            if transport == "http" and not service_reachable(url):
                transport = "inprocess"  # no web process holds embedded Qdrant: this one may
        if transport == "http":
            try:
                return RemoteBackend(url, plain, session_key=session, cwd=cwd)
            except ToolError as exc:
                raise CommandError(exc.message) from None
        from apps.accounts.services import token_authenticate
        from apps.tools.http import token_context

        token = token_authenticate(plain=plain)
        if token is None:
            raise CommandError("unknown or revoked token")
        return LocalBackend(token_context(token, session_key=session, cwd=cwd))
