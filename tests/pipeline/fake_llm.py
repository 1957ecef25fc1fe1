"""A scripted OpenAI-compatible chat-completions server on loopback, for driver tests.

Each script step is a function of the request body (so a step can use what earlier tool
results said, e.g. the nextCursor of read_l0_increment) returning a reply: a list of
tool calls, a final text, or a raw HTTP answer. Every request body is recorded.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def tool_calls(*calls: tuple[str, Any]) -> dict[str, Any]:
    """A reply with tool calls; arguments given as a dict are JSON-encoded, a str is sent raw."""
    return {"tool_calls": [(name, args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)) for name, args in calls]}


def text(content: str, **extra: Any) -> dict[str, Any]:
    return {"text": content, **extra}


def raw(status: int, body: bytes, content_type: str = "application/json") -> dict[str, Any]:
    return {"raw": (status, body, content_type)}


def sleep(seconds: float) -> dict[str, Any]:
    return {"sleep": seconds}


def tool_results(body: dict[str, Any]) -> dict[str, Any]:
    """tool_call_id -> parsed content of every tool message in a request."""
    out = {}
    for m in body.get("messages", []):
        if m.get("role") == "tool":
            out[m["tool_call_id"]] = json.loads(m["content"])
    return out


def last_result_of(body: dict[str, Any], tool_name: str) -> Any:
    """The parsed result of the most recent call of `tool_name` in the conversation."""
    ids = {}
    for m in body.get("messages", []):
        for tc in m.get("tool_calls") or []:
            ids[tc["id"]] = tc["function"]["name"]
    found = None
    for m in body.get("messages", []):
        if m.get("role") == "tool" and ids.get(m["tool_call_id"]) == tool_name:
            found = json.loads(m["content"])
    return found


class FakeLLM:
    def __init__(self, script: list[Callable[[dict[str, Any]], dict[str, Any]] | dict[str, Any]]):
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._calls = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                    step = fake.script.pop(0) if fake.script else text("(script exhausted)")
                    fake._calls += 1
                    n = fake._calls
                reply = step(body) if callable(step) else step
                if "sleep" in reply:
                    time.sleep(reply["sleep"])
                    reply = text("too late")
                if "raw" in reply:
                    status, payload, ctype = reply["raw"]
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                message: dict[str, Any] = {"role": "assistant", "content": reply.get("text")}
                if reply.get("reasoning"):
                    message["reasoning_content"] = reply["reasoning"]
                finish = "stop"
                if reply.get("tool_calls"):
                    message["tool_calls"] = [
                        {"id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": args}}
                        for i, (name, args) in enumerate(reply["tool_calls"])
                    ]
                    finish = "tool_calls"
                payload = json.dumps({
                    "id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()), "model": body.get("model"),
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 100 + n, "completion_tokens": 10 + n, "total_tokens": 110 + 2 * n},
                }).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        class QuietServer(ThreadingHTTPServer):
            def handle_error(self, request, client_address):  # a client that gave up (timeout tests)
                pass

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeLLM:  # noqa: PYI034
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
