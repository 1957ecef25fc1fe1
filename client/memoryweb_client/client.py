"""A small synchronous client of the memoryweb tool API.

* one typed method per tool (keyword arguments named as the SPEC names the fields;
  arguments left as None are not sent, so the server's defaults apply);
* `locked` (423) and `unavailable` (503, or the service not reachable) are retried with
  exponential backoff and jitter: `locked` means nothing was applied, and a refused
  connection means nothing was sent, so sending again is safe;
* the call context (sessionKey, turn, cwd) travels as the `X-Memory-*` headers; `turn()`
  returns a view of the client for one agent turn (per-turn budgets count per session+turn);
* every error answer raises the `MemoryWebError` subclass of its code.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Literal, Self

import httpx

from memoryweb_client.errors import MemoryWebError, Unavailable, error_from_body

Json = dict[str, Any]


def _drop_none(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if v is not None}


class MemoryWebClient:
    """`MemoryWebClient("http://127.0.0.1:8000", token="mw_…")`; use as a context manager
    (or call `close()`) to release the connection pool."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        session_key: str = "",
        session_id: str = "",
        turn: str = "",
        cwd: str = "",
        timeout: float = 120.0,
        retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        http: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if not token:
            raise ValueError("a token is required (Authorization: Bearer <token>)")
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.session_key = session_key
        self.session_id = session_id
        self.turn_id = turn
        self.cwd = cwd
        self.retries = max(0, int(retries))
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._sleep = sleep
        self._owns_http = http is None
        self._http = http or httpx.Client(timeout=timeout)

    # ------------------------------------------------------------------ plumbing
    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def with_context(self, *, session_key: str | None = None, session_id: str | None = None,
                     turn: str | None = None, cwd: str | None = None) -> MemoryWebClient:
        """A view of this client (same connection pool) with another call context."""
        view = object.__new__(MemoryWebClient)
        view.__dict__.update(self.__dict__)
        view._owns_http = False
        if session_key is not None:
            view.session_key = session_key
        if session_id is not None:
            view.session_id = session_id
        if turn is not None:
            view.turn_id = turn
        if cwd is not None:
            view.cwd = cwd
        return view

    def turn(self, turn_id: str | None = None) -> MemoryWebClient:
        """A view for one agent turn (a fresh turn id unless one is given)."""
        return self.with_context(turn=turn_id or uuid.uuid4().hex[:12])

    def headers(self) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        for name, value in (("X-Memory-Session", self.session_key), ("X-Memory-Session-Id", self.session_id),
                            ("X-Memory-Turn", self.turn_id), ("X-Memory-Cwd", self.cwd)):
            if value:
                headers[name] = value
        return headers

    def _delay(self, attempt: int) -> float:
        base = min(self.max_backoff, self.backoff * (2 ** attempt))
        return base * (0.5 + random.random() / 2)

    def request(self, method: str, path: str, *, json: Any = None) -> Any:
        """One HTTP exchange with retries on `locked` / `unavailable`; returns the JSON body."""
        url = f"{self.base_url}{path}"
        attempt = 0
        while True:
            body, error = self._once(method, url, json)
            if error is None:
                return body
            if not error.retryable or attempt >= self.retries:
                raise error
            self._sleep(self._delay(attempt))
            attempt += 1

    def _once(self, method: str, url: str, json: Any) -> tuple[Any, MemoryWebError | None]:
        try:
            response = self._http.request(method, url, json=json, headers=self.headers())
        except httpx.ConnectError as exc:  # nothing was sent: safe to retry
            return None, Unavailable(f"the service at {self.base_url} is unreachable: {exc}")
        except httpx.HTTPError as exc:  # it may have been processed: never resent automatically
            error = Unavailable(f"the request to {self.base_url} failed: {exc}")
            error.retryable = False
            return None, error
        try:
            body = response.json()
        except ValueError:
            error = Unavailable(f"the service answered {response.status_code} with a non-JSON body", status=response.status_code)
            error.retryable = response.status_code in (502, 503, 504)  # a proxy in front of a restarting service
            return None, error
        if response.status_code == 200:
            return body, None
        return None, error_from_body(body, response.status_code)

    # ------------------------------------------------------------------ endpoints
    def call(self, name: str, params: dict[str, Any] | None = None) -> Any:
        """Call any tool by name (`POST /api/v1/tools/<name>`)."""
        return self.request("POST", f"/api/v1/tools/{name}", json=params or {})

    def catalog(self) -> list[Json]:
        """`GET /api/v1/tools`: `[{name, description, parameters, roles}]`."""
        return self.request("GET", "/api/v1/tools")

    def health(self) -> Json:
        return self.request("GET", "/api/v1/health")

    def append_messages(self, messages: Sequence[Json]) -> Json:
        """`POST /api/v1/l0/messages`: append conversation rows (idempotent per sessionKey+id)."""
        return self.request("POST", "/api/v1/l0/messages", json={"messages": list(messages)})

    def append_feed_events(self, events: Sequence[Json]) -> Json:
        return self.request("POST", "/api/v1/skill-feed/events", json={"events": list(events)})

    def recall_context(self, query: str, *, session_key: str | None = None, cwd: str | None = None) -> Json:
        """`POST /api/v1/recall/context`: the per-turn injection block."""
        return self.request("POST", "/api/v1/recall/context", json={
            "query": query, "sessionKey": self.session_key if session_key is None else session_key,
            "cwd": self.cwd if cwd is None else cwd})

    # ------------------------------------------------------------------ tools (SPEC §3)
    def whoami(self) -> Json:
        return self.call("whoami")

    def memory_ingest(self, messages: Sequence[Json], *, sessionKey: str | None = None, cwd: str | None = None,
                      wait: bool | None = None) -> Json:
        return self.call("memory_ingest", _drop_none({"messages": list(messages), "sessionKey": sessionKey, "cwd": cwd, "wait": wait}))

    def memory_search(self, query: str, *, topK: int | None = None) -> Json:
        return self.call("memory_search", _drop_none({"query": query, "topK": topK}))

    def load_memory_rules(self, *, mode: Literal["once", "always"] | None = None) -> Json:
        return self.call("load_memory_rules", _drop_none({"mode": mode}))

    def l1_commit(self, records: Sequence[Json], *, cursor: str | Json | None = None,
                  source: Literal["subagent", "main-agent"] | None = None) -> Json:
        return self.call("l1_commit", _drop_none({"records": list(records), "cursor": cursor, "source": source}))

    def list_l1_scenes(self, *, limit: int | None = None) -> Json:
        return self.call("list_l1_scenes", _drop_none({"limit": limit}))

    def l1_project_get(self, sessionKey: str) -> Json:
        return self.call("l1_project_get", {"sessionKey": sessionKey})

    def l1_fix(self, recordId: str, *, evidence: str, action: Literal["rewrite", "tombstone"] | None = None,
               newContent: str | None = None, reason: str | None = None, priority: int | None = None,
               force: bool | None = None) -> Json:
        return self.call("l1_fix", _drop_none({"recordId": recordId, "action": action, "newContent": newContent,
                                               "evidence": evidence, "reason": reason, "priority": priority, "force": force}))

    def l1_task_state(self, ids: Sequence[str], state: Literal["open", "done", "dropped"], *, reason: str | None = None) -> Json:
        return self.call("l1_task_state", _drop_none({"ids": list(ids), "state": state, "reason": reason}))

    def read_l0_increment(self, l0Files: str, *, cursor: str | Json | None = None) -> Json:
        return self.call("read_l0_increment", _drop_none({"l0Files": l0Files, "cursor": cursor}))

    def read_l1_increment(self, *, cursor: str | int | Json | None = None, maxRecords: int | None = None) -> Json:
        return self.call("read_l1_increment", _drop_none({"cursor": cursor, "maxRecords": maxRecords}))

    def l2_commit(self, sceneWrites: Sequence[Json], *, cursor: str | int | Json, personaSignal: bool | None = None,
                  personaReason: str | None = None) -> Json:
        return self.call("l2_commit", _drop_none({"sceneWrites": list(sceneWrites), "cursor": cursor,
                                                  "personaSignal": personaSignal, "personaReason": personaReason}))

    def l2_archive_guide(self, *, filename: str | None = None) -> Json:
        return self.call("l2_archive_guide", _drop_none({"filename": filename}))

    def read_scene_blocks(self, filenames: Sequence[str]) -> Json:
        return self.call("read_scene_blocks", {"filenames": list(filenames)})

    def l3_edit(self, action: Literal["add", "update", "delete"], *, content: str | None = None, target: str | None = None) -> Json:
        return self.call("l3_edit", _drop_none({"action": action, "content": content, "target": target}))

    def l3_commit(self, cursor: str) -> Json:
        return self.call("l3_commit", {"cursor": cursor})

    def recall_l1_records(self, query: str, *, topK: int | None = None, types: Sequence[str] | None = None,
                          sceneId: str | None = None, includeClosedTasks: bool | None = None, trace: bool | None = None) -> Json:
        return self.call("recall_l1_records", _drop_none({"query": query, "topK": topK, "types": list(types) if types is not None else None,
                                                          "sceneId": sceneId, "includeClosedTasks": includeClosedTasks, "trace": trace}))

    def clear_invalid_l1_records(self, recordIds: Sequence[str]) -> Json:
        return self.call("clear_invalid_l1_records", {"recordIds": list(recordIds)})

    def embed_and_search(self, *, queries: Sequence[str] | None = None, queryText: str | None = None, topK: int | None = None) -> Json:
        return self.call("embed_and_search", _drop_none({"queries": list(queries) if queries is not None else None,
                                                         "queryText": queryText, "topK": topK}))

    def skill_manage(self, action: str, **fields: Any) -> Json:
        """`action` is one of list, create, edit, patch, delete, write_file, remove_file, pin, unpin;
        `fields` are that action's fields (name, category, content, old_string, new_string,
        file_path, file_content)."""
        return self.call("skill_manage", _drop_none({"action": action, **fields}))

    def skill_view(self, name: str, *, file: str | None = None) -> Json:
        return self.call("skill_view", _drop_none({"name": name, "file": file}))

    def read_skill_feed_increment(self, feedFiles: str, *, cursor: str | Json | None = None) -> Json:
        return self.call("read_skill_feed_increment", _drop_none({"feedFiles": feedFiles, "cursor": cursor}))
