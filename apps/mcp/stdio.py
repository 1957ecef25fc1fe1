"""MCP over stdio: one JSON-RPC message per line in, one per line out (the transport's
framing), answered by the same `protocol.handle` as `/mcp`."""

from __future__ import annotations

import json
import logging
from typing import IO

from apps.mcp import protocol

logger = logging.getLogger(__name__)


def serve_stdio(backend: protocol.Backend, *, stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Answer messages until stdin closes."""
    for line in stdin:
        if not line.strip():
            continue
        try:
            raw = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            answer = protocol.parse_error(str(exc)[:200])
        else:
            try:
                # Progress notifications go out between the lines of the call's answer.
                answer = protocol.handle(raw, backend, notify=lambda message: _write(stdout, message)).message
            except Exception:  # one bad call must not end the server the client started
                logger.exception("MCP message failed")
                request_id = raw.get("id") if isinstance(raw, dict) else None
                answer = protocol.internal_error(request_id)
        if answer is not None:
            _write(stdout, answer)


def _write(stdout: IO[bytes], message: dict) -> None:
    stdout.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
    stdout.flush()
