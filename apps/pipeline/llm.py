"""The LLM driver: an OpenAI-compatible chat-completions loop with function calling.

The model gets the job's system prompt (apps/pipeline/prompts/), the task message in the
prompt's "任务输入" form, and exactly that job's tools (their JSON schemas from the tool
registry) plus the read-only `read`. Its tool calls run through the tool executor with a
worker identity. The loop ends at the model's summary line, the iteration bound or the
job timeout. Bad tool arguments, unknown tools and replies without a tool call or text
are answered with an error, never a crash. Only the job's commit tool moves a cursor.
"""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Any

from django.conf import settings

from apps.pipeline.errors import JobFailed
from apps.pipeline.models import KIND_L1, KIND_L2, KIND_L3, KIND_SKILL
from apps.pipeline.readtool import (
    PROMPTS_DIR,
    READ_TOOL_DEFINITION,
    cursor_path,
    read_path,
    records_dir,
)
from apps.tools.errors import ToolError
from apps.tools.registry import get_tool

logger = logging.getLogger(__name__)

PROMPT_FILES = {
    KIND_L1: "l1-extractor.md",
    KIND_L2: "l2-scene-organizer.md",
    KIND_L3: "l3-persona-generator.md",
    KIND_SKILL: "skill-reviewer.md",
}
JOB_TOOLS = {
    KIND_L1: ("read_l0_increment", "embed_and_search", "l1_project_get", "list_l1_scenes", "l1_commit"),
    KIND_L2: ("read_l1_increment", "read_scene_blocks", "l2_archive_guide", "l2_commit"),
    KIND_L3: ("read_scene_blocks", "l3_edit", "l3_commit"),
    KIND_SKILL: ("read_skill_feed_increment", "skill_view", "skill_manage"),
}
COMMIT_TOOLS = {KIND_L1: "l1_commit", KIND_L2: "l2_commit", KIND_L3: "l3_commit", KIND_SKILL: None}
MAX_ITERATIONS = {KIND_L1: 30, KIND_L2: 40, KIND_L3: 40, KIND_SKILL: 30}
RESULT_PREVIEW_CHARS = 4000
NO_POOL = "(无)"


def system_prompt(kind: str) -> str:
    text = (PROMPTS_DIR / PROMPT_FILES[kind]).read_text(encoding="utf-8")
    # The front matter configures an agent runtime; the model needs only the body.
    return re.sub(r"\A---\n.*?\n---\n+", "", text, count=1, flags=re.DOTALL)


def tool_definitions(kind: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Function definitions of the job's tools; also the names missing from the registry."""
    defs, missing = [], []
    for name in JOB_TOOLS[kind]:
        spec = get_tool(name)
        if spec is None:
            missing.append(name)
            continue
        defs.append({"type": "function", "function": {"name": name, "description": spec.description, "parameters": spec.json_schema()}})
    defs.append(READ_TOOL_DEFINITION)
    return defs, missing


# --------------------------------------------------------------------------- task messages


def task_message(ctx) -> str:
    return {KIND_L1: _task_l1, KIND_L2: _task_l2, KIND_L3: _task_l3, KIND_SKILL: _task_skill}[ctx.kind](ctx)


def _task_l1(ctx) -> str:
    from apps.accounts.paths import profile_subdir
    from apps.conversations.cursors import cursor_get
    from apps.pipeline.rules.l1 import list_shards

    profile = ctx.profile
    l0_dir = profile_subdir(profile, "l0", create=False)
    # Shards with unread rows only (all of them when none has: the model then finds nothing).
    names = list_shards(profile, cursor_get(profile=profile, kind="l1")) or list_shards(profile)
    shards = [str(l0_dir / name) for name in names]
    pool_lines = []
    try:
        pool = ctx.tool("list_l1_scenes", {"limit": 50}).get("scenes") or []
        pool_lines = [f"- {s.get('id')} | {s.get('name')}" for s in pool]
    except ToolError as exc:
        ctx.counts["scenePoolError"] = exc.message[:300]
    known = ", ".join(str(p) for p in (profile.known_projects or [])) or NO_POOL
    lines = [
        "L1 extraction task",
        f"L0Files: {','.join(shards)}",
        f"CursorPath: {cursor_path(profile)}",
        f"RecordsDir: {records_dir(profile)}",
        f"PromptDir: {PROMPTS_DIR}",
        f"Mode: {profile.mode}",
        f"KnownProjects: {known}",
    ]
    if pool_lines:
        lines.append(f"ScenePool (id | name; same-project first, recent first; max {50}):")
        lines.extend(pool_lines)
    else:
        lines.append(f"ScenePool: {NO_POOL}")
    return "\n".join(lines)


def _task_l2(ctx) -> str:
    from apps.accounts.config import profile_setting
    from apps.conversations.cursors import cursor_get
    from apps.scenes.models import SceneBlock

    profile = ctx.profile
    cap = int(profile_setting(profile, "l2.maxScenes"))
    blocks = list(SceneBlock.objects.filter(profile=profile, archived=False, removed=False).prefetch_related("member_rows").order_by("filename"))
    live = len(blocks)
    warning = "red" if live >= cap else "orange" if live >= cap - 1 else "yellow" if live >= cap - 3 else "green"
    lines = [
        "L2 scene organization task",
        f"RecordsDir: {records_dir(profile)}",
        f"Cursor: {cursor_get(profile=profile, kind='l2').get('lastRecordId', '') or '(无)'}",
        f"Mode: {profile.mode}",
        f"MaxScenes: {cap}",
        f"SceneCount: {live} ({warning})",
    ]
    if blocks:
        lines.append("Scenes (filename | updated | members | summary):")
        lines.extend(f"- {b.filename} | {_iso(b.meta_updated)} | {len(b.member_rows.all())} | {b.summary}" for b in blocks)
    else:
        lines.append(f"Scenes: {NO_POOL}")
    return "\n".join(lines)


def _task_l3(ctx) -> str:
    from apps.accounts.config import profile_setting
    from apps.conversations.cursors import cursor_get
    from apps.persona.models import PersonaProposal
    from apps.persona.services import persona_live_entries
    from apps.scenes.models import SceneBlock

    profile = ctx.profile
    cursor = str(cursor_get(profile=profile, kind="l3").get("updated") or "")
    blocks = SceneBlock.objects.filter(profile=profile, archived=False, removed=False).order_by("filename")
    from apps.pipeline.rules.l3 import _parse

    after = _parse(cursor)
    fresh = [b for b in blocks if after is None or b.meta_updated > after]
    live = persona_live_entries(profile=profile)
    proposal = PersonaProposal.objects.filter(profile=profile).first()
    proposed = [str(e.get("text", "")) for e in (proposal.entries if proposal else []) if isinstance(e, dict)]
    lines = [
        "L3 persona task",
        f"Cursor: {cursor or NO_POOL}",
        f"Mode: {profile.mode}",
        f"CharLimit: {profile_setting(profile, 'l3.charLimit')}",
        f"Reason: {ctx.run.trigger_reason}",
        "USER.md (live, entries separated by §):",
        *(live or [NO_POOL]),
        "USER-temp.md (proposal):",
        *(proposed or [NO_POOL]),
    ]
    if fresh:
        lines.append("Scenes updated after the cursor (filename | updated | summary):")
        lines.extend(f"- {b.filename} | {_iso(b.meta_updated)} | {b.summary}" for b in fresh)
    else:
        lines.append(f"Scenes updated after the cursor: {NO_POOL}")
    return "\n".join(lines)


def _task_skill(ctx) -> str:
    from apps.accounts.paths import profile_subdir
    from apps.conversations.cursors import cursor_get

    profile = ctx.profile
    feed_dir = profile_subdir(profile, "skill-feed", create=False)
    shards = sorted(str(p) for p in feed_dir.glob("*.jsonl")) if feed_dir.is_dir() else []
    cursor = cursor_get(profile=profile, kind="skill_feed")
    skill_lines = []
    try:
        listing = ctx.tool("skill_manage", {"action": "list"})
        for s in listing.get("skills") or []:
            skill_lines.append(f"- {s.get('category', '')}/{s.get('name')} | {str(s.get('description', ''))[:200]}")
    except ToolError as exc:
        ctx.counts["skillListError"] = exc.message[:300]
    return "\n".join(
        [
            "Skill review task",
            f"FeedFiles: {','.join(shards)}",
            f"Cursor: {json.dumps(cursor, ensure_ascii=False) if cursor else ''}",
            "Skills (category/name | description):",
            *(skill_lines or [NO_POOL]),
        ]
    )


def _iso(value) -> str:
    return value.isoformat().replace("+00:00", "Z") if value else ""


# --------------------------------------------------------------------------- the loop


class _State:
    def __init__(self) -> None:
        self.committed = False
        self.summary = ""
        self.feed_state: dict[str, Any] | None = None
        self.prompt_tokens = 0
        self.completion_tokens = 0


def run_llm_job(ctx) -> None:
    from openai import APIConnectionError, APIError, APITimeoutError, OpenAI

    kind = ctx.kind
    tools, missing = tool_definitions(kind)
    if missing:
        ctx.counts["toolsMissing"] = missing
    allowed = {d["function"]["name"] for d in tools}
    client = OpenAI(base_url=settings.LLM_BASE_URL, api_key=settings.LLM_API_KEY or "not-needed", max_retries=0)
    ctx.progress("prepare", "building the task message", force=True)
    system, task = system_prompt(kind), task_message(ctx)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": task}]
    ctx.transcript.append({"type": "prompt", "prompt": PROMPT_FILES[kind], "task": task, "tools": sorted(allowed), "model": settings.LLM_MODEL})
    state = _State()
    bound = MAX_ITERATIONS[kind]
    endpoint = f"{settings.LLM_BASE_URL.rstrip('/')}/chat/completions"
    try:
        for step in range(1, bound + 1):
            ctx.check_deadline()
            ctx.progress("model", f"model turn {step}", done=step, total=bound, force=True)
            started = time.monotonic()
            try:
                response = client.chat.completions.create(
                    model=settings.LLM_MODEL, messages=messages, tools=tools, tool_choice="auto",
                    timeout=max(1.0, min(ctx.remaining(), 120.0)),
                )
            except APITimeoutError as exc:
                _failed_call(ctx, step, messages, started, exc)
                raise JobFailed(f"the model endpoint {endpoint} did not answer in time (turn {step}; job limit {ctx.timeout:.0f} s)") from None
            except APIConnectionError as exc:
                _failed_call(ctx, step, messages, started, exc)
                raise JobFailed(f"the model endpoint {endpoint} is unreachable: {exc}") from None
            except APIError as exc:
                _failed_call(ctx, step, messages, started, exc)
                raise JobFailed(f"the model endpoint {endpoint} failed: {exc}") from None
            except ValueError as exc:  # a body that is not JSON (json.JSONDecodeError is a ValueError)
                _failed_call(ctx, step, messages, started, exc)
                raise JobFailed(f"the model endpoint {endpoint} answered with a body that is not JSON: {exc}") from None
            duration = round(time.monotonic() - started, 3)
            problem = _not_a_completion(response)
            if problem:
                # Asking again would only repeat it until the iteration bound: fail now.
                _failed_call(ctx, step, messages, started, problem, body=response)
                raise JobFailed(f"the model endpoint {endpoint} answered with something that is not a chat completion: {problem}")
            message, finish, usage = _first_choice(response)
            _tally(state, usage)
            tool_calls = list(getattr(message, "tool_calls", None) or []) if message is not None else []
            content = (getattr(message, "content", None) or "").strip() if message is not None else ""
            ctx.transcript.append({
                "type": "model", "step": step, "elapsed": ctx.elapsed(), "durationSeconds": duration, "finishReason": finish,
                "usage": usage, "content": content[:RESULT_PREVIEW_CHARS],
                "toolCalls": [{"id": tc.id, "name": tc.function.name, "arguments": tc.function.arguments} for tc in tool_calls],
            })
            if tool_calls:
                messages.append({
                    "role": "assistant", "content": content or None,
                    "tool_calls": [{"id": tc.id, "type": "function", "function": {"name": tc.function.name, "arguments": tc.function.arguments or ""}} for tc in tool_calls],
                })
                for tc in tool_calls:
                    result = _execute(ctx, state, allowed, tc.function.name, tc.function.arguments, step, tc.id)
                    messages.append({"role": "tool", "tool_call_id": tc.id, "content": json.dumps(result, ensure_ascii=False)})
                continue
            commit = COMMIT_TOOLS[kind]
            if content and commit and not state.committed:
                # Text before the commit (e.g. the seed's intermediate JSON) is not the end.
                ctx.add("textBeforeCommit")
                messages.append({"role": "assistant", "content": content})
                messages.append({"role": "user", "content": json.dumps({"error": {
                    "code": "not_committed",
                    "message": f"{commit} has not succeeded yet; this text is not the final reply. Continue the task, "
                               f"call {commit}, then end with the one-line summary.",
                }}, ensure_ascii=False)})
                continue
            if content:
                state.summary = content.splitlines()[-1].strip()
                break
            # No tool call and no text (e.g. only reasoning): ask again, once per turn.
            ctx.add("emptyReplies")
            messages.append({"role": "user", "content": json.dumps({"error": {
                "code": "invalid_reply",
                "message": "your reply had neither a tool call nor text; continue with a tool call, or end with the one-line summary",
            }}, ensure_ascii=False)})
        else:
            ctx.counts["iterationBoundReached"] = bound
    finally:
        ctx.counts["promptTokens"] = state.prompt_tokens
        ctx.counts["completionTokens"] = state.completion_tokens
        ctx.counts["summary"] = state.summary
    commit = COMMIT_TOOLS[kind]
    if commit and not state.committed:
        why = "the iteration bound was reached" if not state.summary else "the model ended"
        raise JobFailed(f"{why} without a successful {commit}; every cursor stays where it was")
    if kind == KIND_SKILL:
        if not state.summary:
            raise JobFailed(f"the iteration bound ({bound}) was reached before the summary; the feed cursor stays where it was")
        if state.feed_state:
            from apps.pipeline.rules.skills import _commit_cursor

            _commit_cursor(ctx, state.feed_state)


def _failed_call(ctx, step: int, messages: list[dict[str, Any]], started: float, error: Any, *, body: Any = None) -> None:
    """A model call that produced no usable reply goes into the transcript like any turn:
    what was asked, what went wrong, and how long it took."""
    entry: dict[str, Any] = {
        "type": "model", "step": step, "ok": False, "elapsed": ctx.elapsed(),
        "durationSeconds": round(time.monotonic() - started, 3),
        "request": {
            "endpoint": f"{settings.LLM_BASE_URL.rstrip('/')}/chat/completions", "model": settings.LLM_MODEL,
            "messages": len(messages), "lastRole": messages[-1]["role"] if messages else None,
        },
        "error": (f"{type(error).__name__}: {error}" if isinstance(error, Exception) else str(error))[:RESULT_PREVIEW_CHARS],
    }
    if body is not None:
        entry["body"] = repr(body)[:RESULT_PREVIEW_CHARS]
    ctx.add("modelCallsFailed")
    ctx.transcript.append(entry)


def _not_a_completion(response: Any) -> str | None:
    """Why a 200 reply is not a chat completion, or None when it is one. The client does
    not validate bodies, so `choices` can be anything the endpoint sent."""
    if isinstance(response, (str, bytes)):
        return f"a {type(response).__name__} body"
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        return "no 'choices' list" if not isinstance(choices, list) else "an empty 'choices' list"
    message = getattr(choices[0], "message", None)
    if message is None or not hasattr(message, "content"):
        return "the first choice has no 'message'"
    calls = getattr(message, "tool_calls", None)
    if calls is not None and (not isinstance(calls, list) or any(getattr(c, "function", None) is None or not getattr(c.function, "name", None) for c in calls)):
        return "malformed 'tool_calls' in the message"
    return None


def _first_choice(response) -> tuple[Any, str | None, dict[str, int]]:
    usage_obj = getattr(response, "usage", None)
    usage = {
        "promptTokens": int(getattr(usage_obj, "prompt_tokens", 0) or 0),
        "completionTokens": int(getattr(usage_obj, "completion_tokens", 0) or 0),
    }
    choices = getattr(response, "choices", None) or []
    if not choices:
        return None, None, usage
    return choices[0].message, choices[0].finish_reason, usage


def _tally(state: _State, usage: dict[str, int]) -> None:
    state.prompt_tokens += usage["promptTokens"]
    state.completion_tokens += usage["completionTokens"]


def _error(code: str, message: str, details: Any = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details}}


def _execute(ctx, state: _State, allowed: set[str], name: str, raw_args: str | None, step: int, call_id: str) -> dict[str, Any]:
    started = time.monotonic()
    entry: dict[str, Any] = {"type": "tool", "step": step, "id": call_id, "name": name, "arguments": raw_args}
    result: Any
    try:
        args = json.loads(raw_args) if raw_args and raw_args.strip() else {}
    except json.JSONDecodeError as exc:
        result = _error("invalid_params", f"the arguments of {name!r} are not valid JSON: {exc.msg} at column {exc.colno}")
        ctx.add("malformedToolCalls")
    else:
        if name not in allowed:
            result = _error("not_found", f"unknown tool {name!r}; this job's tools are: {', '.join(sorted(allowed))}")
            ctx.add("unknownToolCalls")
        elif not isinstance(args, dict):
            result = _error("invalid_params", f"the arguments of {name!r} must be a JSON object")
            ctx.add("malformedToolCalls")
        else:
            result = _run_tool(ctx, state, name, args)
    entry["durationMs"] = round((time.monotonic() - started) * 1000, 1)
    entry["ok"] = not (isinstance(result, dict) and "error" in result and len(result) == 1)
    preview = json.dumps(result, ensure_ascii=False)
    entry["result"] = preview[:RESULT_PREVIEW_CHARS] + ("…" if len(preview) > RESULT_PREVIEW_CHARS else "")
    ctx.transcript.append(entry)
    return result


def _run_tool(ctx, state: _State, name: str, args: dict[str, Any]) -> Any:
    try:
        if name == "read":
            ctx.add("toolCalls.read")
            return read_path(ctx.profile, args)
        if name == "l1_commit":
            args = {**args, "source": "subagent"} if "source" not in args else args
        result = ctx.tool(name, args)
    except ToolError as exc:
        ctx.add("toolErrors")
        return exc.as_dict()
    except Exception as exc:  # a tool bug must not end the run: the model sees the error
        if type(exc).__name__ == "SoftTimeLimitExceeded":
            raise
        logger.exception("tool %s failed inside job run %s", name, ctx.run.pk)
        ctx.add("toolErrors")
        return _error("internal", f"{type(exc).__name__}: {exc}")
    _count(ctx, state, name, args, result)
    return result


def _count(ctx, state: _State, name: str, args: dict[str, Any], result: Any) -> None:
    if not isinstance(result, dict):
        return
    if name == "read_l0_increment":
        ctx.add("messagesRead", len(result.get("messages") or []))
    elif name == "l1_commit":
        state.committed = True
        ctx.add("recordsStored", sum(1 for s in result.get("stored") or [] if s))
        ctx.add("tombstoned", len(result.get("tombstoned") or []))
        ctx.add("valueCheckDropped", len((result.get("valueCheck") or {}).get("dropped") or []))
        ctx.add("recordsUpdated", sum(1 for r in args.get("records") or [] if isinstance(r, dict) and r.get("replaces")))
    elif name == "read_l1_increment":
        ctx.add("recordsRead", len(result.get("records") or []))
    elif name == "l2_commit":
        state.committed = True
        ctx.add("scenesWritten", len(result.get("applied") or []))
    elif name == "l3_edit":
        ctx.add("entriesEdited")
    elif name == "l3_commit":
        state.committed = True
    elif name == "read_skill_feed_increment":
        ctx.add("feedRowsRead", len(result.get("messages") or []))
        if result.get("nextCursorState"):
            state.feed_state = dict(result["nextCursorState"])
    elif name == "skill_manage" and args.get("action") in ("create", "edit", "patch", "write_file"):
        ctx.add("skillsChanged")
