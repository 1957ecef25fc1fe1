"""The LLM driver end to end against a scripted OpenAI-compatible server on loopback:
what the job sends (system prompt, task message, exactly the job's tools), how it runs
the model's tool calls (update, merge with tombstones, a new scene, evidence-backed
project scope), and how it survives malformed, garbage and slow replies."""

from __future__ import annotations

import json

import pytest

from apps.conversations.cursors import cursor_get
from apps.pipeline import llm, scheduling
from apps.pipeline.models import (
    KIND_L1,
    KIND_L2,
    KIND_L3,
    STATUS_FAILED,
    STATUS_SUCCEEDED,
    JobRun,
    JobSignal,
)
from apps.pipeline.readtool import PROMPTS_DIR, cursor_path
from apps.records.models import L1Record
from apps.scenes.models import SceneEntry
from tests.pipeline.conftest import msg
from tests.pipeline.fake_llm import (
    FakeLLM,
    last_result_of,
    raw,
    sleep,
    text,
    tool_calls,
)

PROJ = "/home/dev/shop"
L1_TOOLS = {"read_l0_increment", "embed_and_search", "l1_project_get", "list_l1_scenes", "l1_commit", "read"}


@pytest.fixture
def llm_on(settings):
    def configure(fake: FakeLLM):
        settings.LLM_BASE_URL = fake.base_url
        settings.LLM_API_KEY = "sk-test-key"
        settings.LLM_MODEL = "fake-model"

    return configure


@pytest.fixture
def shop(make_profile):
    profile = make_profile("shop", "code")
    profile.known_projects = [PROJ]
    profile.save()
    return profile


def existing(api, contents):
    body = api.ok("l1_commit", records=[{"content": c, "type": "work_fact", "priority": 70} for c in contents], source="main-agent", session="s0")
    return dict(zip(contents, body["stored"]))


def state(profile):
    return (
        sorted(L1Record.objects.filter(profile=profile).values_list("record_id", "deleted", "version")),
        cursor_get(profile=profile, kind="l1"),
    )


def test_l1_llm_run_end_to_end(shop, make_api, l0, run_now, llm_on):
    api = make_api(shop, "agent")
    old = existing(api, ["We use PostgreSQL for production.", "The API listens on port 8000.", "The API runs behind nginx."])
    l0(shop, [
        msg("m1", "We moved production to PostgreSQL 16 last week.", cwd=PROJ, ts=1764400000000),
        msg("m2", "The API listens on port 8000 behind nginx, as before.", cwd=PROJ, ts=1764400001000),
        msg("m3", f"Payments retry three times; see {PROJ}/src/payments/client.py", cwd=PROJ, ts=1764400002000),
    ])

    def commit(body):
        inc = last_result_of(body, "read_l0_increment")
        assert [m["id"] for m in inc["messages"]] == ["m1", "m2", "m3"]
        return tool_calls(("l1_commit", {
            "cursor": json.dumps(inc["nextCursor"]),
            "records": [
                {"id": old["We use PostgreSQL for production."], "deleted": True},
                {"content": "Production runs PostgreSQL 16.", "type": "work_fact", "priority": 80,
                 "source_message_ids": ["m1"], "replaces": [old["We use PostgreSQL for production."]],
                 "new_scene_name": "shop｜数据库", "new_scene_reason": "no scene covers the database yet",
                 "metadata": {"scope": "unknown", "project": ""}, "sessionKey": "s1", "cwd": PROJ},
                {"id": old["The API listens on port 8000."], "deleted": True},
                {"id": old["The API runs behind nginx."], "deleted": True},
                {"content": "The API listens on port 8000 behind nginx.", "type": "work_fact", "priority": 70,
                 "source_message_ids": ["m2"], "replaces": [old["The API listens on port 8000."], old["The API runs behind nginx."]],
                 "new_scene_name": "shop｜部署", "new_scene_reason": "deployment topology is a topic of its own",
                 "metadata": {"scope": "unknown", "project": ""}, "sessionKey": "s1", "cwd": PROJ},
                {"content": "The payment client retries three times.", "type": "work_fact", "priority": 75,
                 "source_message_ids": ["m3"], "new_scene_name": "shop｜支付", "new_scene_reason": "payments are a new topic",
                 "metadata": {"scope": "self", "project": PROJ,
                              "projectEvidence": [{"message_id": "m3", "path": f"{PROJ}/src/payments/client.py"}]},
                 "sessionKey": "s1", "cwd": PROJ},
            ],
        }))

    script = [
        lambda body: tool_calls(("read", {"path": str(PROMPTS_DIR / "extract-code-personal.md")}),
                                ("read", {"path": str(PROMPTS_DIR / "dedup.md")}),
                                ("read", {"path": str(cursor_path(shop))})),
        lambda body: tool_calls(("read_l0_increment", {"l0Files": body["messages"][1]["content"].split("L0Files: ")[1].split("\n")[0], "cursor": ""})),
        lambda body: tool_calls(("l1_project_get", {"sessionKey": "s1"}),
                                ("embed_and_search", {"queries": ["Production runs PostgreSQL 16.", "The payment client retries three times."], "topK": 5})),
        text('[{"message_ids": ["m1", "m2", "m3"], "memories": ["Production runs PostgreSQL 16."]}]'),  # the seed's intermediate JSON
        commit,
        text("L1 done: 提取 3 条（store 1 / update 1 / merge 1 / skip 0），已提交本批分片游标"),
    ]
    with FakeLLM(script) as fake:
        llm_on(fake)
        run = run_now(shop, KIND_L1)

    assert run.status == STATUS_SUCCEEDED, run.error
    assert run.driver == "llm"
    # What the job sent.
    first = fake.requests[0]
    assert first["path"] == "/v1/chat/completions" and first["auth"] == "Bearer sk-test-key"
    body = first["body"]
    assert body["model"] == "fake-model"
    assert {t["function"]["name"] for t in body["tools"]} == L1_TOOLS
    commit_schema = next(t for t in body["tools"] if t["function"]["name"] == "l1_commit")["function"]["parameters"]
    assert "records" in commit_schema["properties"]
    system, task = body["messages"][0], body["messages"][1]
    assert system["role"] == "system" and "你是后台原子记忆提取子代理" in system["content"]
    assert not system["content"].startswith("---")
    lines = task["content"].split("\n")
    assert lines[0] == "L1 extraction task"
    assert lines[1].startswith("L0Files: /") and lines[1].endswith(".jsonl")
    assert f"CursorPath: {cursor_path(shop)}" in lines and f"PromptDir: {PROMPTS_DIR}" in lines
    assert "Mode: code" in lines and f"KnownProjects: {PROJ}" in lines
    assert any(line.startswith("ScenePool") for line in lines)
    # The read tool served the prompt files and refused nothing it should serve.
    second = fake.requests[1]["body"]["messages"]
    results = [json.loads(m["content"]) for m in second if m["role"] == "tool"]
    assert "## 记忆类型" in results[0]["content"] and "## 四种裁决" in results[1]["content"]
    assert results[2]["error"]["code"] == "not_found"  # no cursor committed yet
    # What was stored: update, merge with tombstones, new scenes, evidence-backed scope.
    assert run.counts["recordsStored"] == 3 and run.counts["tombstoned"] == 3 and run.counts["recordsUpdated"] == 2
    pg_old = L1Record.objects.get(profile=shop, record_id=old["We use PostgreSQL for production."])
    pg_new = L1Record.objects.get(profile=shop, record_id=pg_old.replaced_by)
    assert pg_old.deleted and pg_new.version == pg_old.version + 1 and pg_new.content == "Production runs PostgreSQL 16."
    merged_ids = [old["The API listens on port 8000."], old["The API runs behind nginx."]]
    merged_from = L1Record.objects.filter(profile=shop, record_id__in=merged_ids)
    assert all(r.deleted for r in merged_from) and len({r.replaced_by for r in merged_from}) == 1
    merged = L1Record.objects.get(profile=shop, record_id=merged_from[0].replaced_by)
    assert merged.content == "The API listens on port 8000 behind nginx."
    pay = L1Record.objects.get(profile=shop, content="The payment client retries three times.")
    assert pay.metadata["projectSource"] == "l0-evidence" and pay.metadata["project"] == PROJ
    assert pay.scene_name == "shop｜支付"
    assert SceneEntry.objects.filter(profile=shop, name="shop｜支付").exists()
    # The cursor moved exactly to the increment's nextCursor.
    assert json.loads(fake.requests[4]["body"]["messages"][-1]["content"])["error"]["code"] == "not_committed"
    commit_result = json.loads(fake.requests[5]["body"]["messages"][-1]["content"])
    assert commit_result["success"] is True and commit_result["cursorCommitted"] is True
    assert cursor_get(profile=shop, kind="l1") == last_result_of(fake.requests[5]["body"], "read_l0_increment")["nextCursor"]
    # The transcript: model turns with token usage, tool calls with timings.
    model_turns = [e for e in run.transcript if e["type"] == "model"]
    assert len(model_turns) == 6 and all(e["usage"]["promptTokens"] > 100 for e in model_turns)
    tool_entries = [e for e in run.transcript if e["type"] == "tool"]
    assert [e["name"] for e in tool_entries] == ["read", "read", "read", "read_l0_increment", "l1_project_get", "embed_and_search", "l1_commit"]
    assert all("durationMs" in e for e in tool_entries)
    assert run.counts["promptTokens"] == sum(e["usage"]["promptTokens"] for e in model_turns)
    assert run.counts["summary"].startswith("L1 done:")


def test_malformed_unknown_empty_and_forbidden_calls_get_error_results(shop, l0, run_now, llm_on):
    l0(shop, [msg("m1", "We decided to use Redis for the cache.")])
    before = state(shop)
    script = [
        tool_calls(("read_l0_increment", "{not json")),
        tool_calls(("delete_everything", {})),
        text(None, reasoning="thinking about what to do…"),
        tool_calls(("read", {"path": "/etc/passwd"}), ("read", {"path": str(PROMPTS_DIR / ".." / "llm.py")})),
        tool_calls(("l2_commit", {"sceneWrites": [], "cursor": "0"})),
        tool_calls(("l1_commit", ["not", "an", "object"])),
        text("L1 done: nothing"),
    ]
    with FakeLLM(script) as fake:
        llm_on(fake)
        run = run_now(shop, KIND_L1)

    def errors_in(i):
        return [json.loads(m["content"])["error"] for m in fake.requests[i]["body"]["messages"][-2:] if m["role"] == "tool"]

    assert errors_in(1)[0]["code"] == "invalid_params" and "not valid JSON" in errors_in(1)[0]["message"]
    assert errors_in(2)[0]["code"] == "not_found" and "delete_everything" in errors_in(2)[0]["message"]
    nudge = fake.requests[3]["body"]["messages"][-1]
    assert nudge["role"] == "user" and json.loads(nudge["content"])["error"]["code"] == "invalid_reply"
    assert [e["code"] for e in errors_in(4)] == ["forbidden", "forbidden"]
    assert errors_in(5)[0]["code"] == "not_found"  # l2_commit is not an L1 tool
    assert errors_in(6)[0]["code"] == "invalid_params"
    # Text before a commit is not the end: the model is told to go on; without a commit
    # the run fails at the iteration bound and changes nothing.
    told = fake.requests[7]["body"]["messages"][-1]
    assert json.loads(told["content"])["error"]["code"] == "not_committed"
    assert run.status == STATUS_FAILED and "without a successful l1_commit" in run.error
    assert len(fake.requests) == llm.MAX_ITERATIONS[KIND_L1]
    assert state(shop) == before
    assert run.counts["malformedToolCalls"] == 2 and run.counts["unknownToolCalls"] == 2 and run.counts["emptyReplies"] == 1
    assert run.counts["textBeforeCommit"] >= 1


@pytest.mark.parametrize("reply", [
    raw(500, b'{"error": {"message": "upstream exploded"}}'),
    raw(200, b"<html>not json at all</html>", "text/html"),
    raw(200, b'{"choices": "garbage"}'),
])
def test_garbage_replies_fail_the_run_and_leave_the_cursor(shop, l0, run_now, llm_on, reply):
    l0(shop, [msg("m1", "We decided to use Redis for the cache.")])
    before = state(shop)
    with FakeLLM([reply]) as fake:
        llm_on(fake)
        run = run_now(shop, KIND_L1)
    assert run.status == STATUS_FAILED and run.error
    assert state(shop) == before
    assert JobRun.objects.filter(profile=shop, status="running").count() == 0


def test_a_model_slower_than_the_job_timeout_fails_the_run(shop, l0, run_now, llm_on, monkeypatch):
    monkeypatch.setitem(scheduling.JOB_TIMEOUT_SECONDS, KIND_L1, 2)
    l0(shop, [msg("m1", "We decided to use Redis for the cache.")])
    before = state(shop)
    with FakeLLM([sleep(5)]) as fake:
        llm_on(fake)
        run = run_now(shop, KIND_L1)
    assert run.status == STATUS_FAILED and ("did not answer in time" in run.error or "timed out" in run.error)
    assert run.duration_seconds < 5
    assert state(shop) == before


def test_the_iteration_bound_ends_a_looping_model(shop, l0, run_now, llm_on, monkeypatch):
    monkeypatch.setitem(llm.MAX_ITERATIONS, KIND_L1, 3)
    with FakeLLM([tool_calls(("list_l1_scenes", {}))] * 5) as fake:
        llm_on(fake)
        run = run_now(shop, KIND_L1)
    assert len(fake.requests) == 3
    assert run.status == STATUS_FAILED and "iteration bound" in run.error


def test_l2_llm_run_commits_blocks_and_its_persona_signal_wakes_l3(
    shop, make_api, run_now, llm_on, sent, django_capture_on_commit_callbacks
):
    api = make_api(shop, "agent")
    ids = existing(api, ["The user prefers short answers."])
    rid = ids["The user prefers short answers."]

    def commit(body):
        inc = last_result_of(body, "read_l1_increment")
        assert [r["id"] for r in inc["records"]] == [rid]
        return tool_calls(("l2_commit", {
            "cursor": inc["nextCursor"],
            "sceneWrites": [{"action": "create", "filename": "用户-沟通.md",
                             "meta": {"created": "2026-11-29T00:00:00Z", "updated": "2026-11-29T00:00:00Z", "summary": "沟通偏好", "heat": 1},
                             "content": f"# 用户｜沟通\n\n- The user prefers short answers. ({rid})\n"}],
            "personaSignal": True, "personaReason": "a communication preference appeared",
        }))

    script = [tool_calls(("read_l1_increment", {"maxRecords": 50})), commit, text("L2 done: 写入 1 个场景块")]
    with FakeLLM(script) as fake:
        llm_on(fake)
        with django_capture_on_commit_callbacks(execute=True):
            run = run_now(shop, KIND_L2)
    assert run.status == STATUS_SUCCEEDED, run.error
    body = fake.requests[0]["body"]
    assert {t["function"]["name"] for t in body["tools"]} == {"read_l1_increment", "read_scene_blocks", "l2_archive_guide", "l2_commit", "read"}
    assert body["messages"][1]["content"].startswith("L2 scene organization task\n")
    assert "MaxScenes: 20" in body["messages"][1]["content"]
    assert run.counts["scenesWritten"] == 1
    assert JobSignal.objects.get(profile=shop).reason == "a communication preference appeared"
    l3 = JobRun.objects.get(profile=shop, kind=KIND_L3)
    assert "personaSignal" in l3.trigger_reason


def test_l3_llm_run_edits_the_proposal_and_commits_the_cursor(make_profile, run_now, llm_on):
    from django.utils import timezone

    from apps.persona.models import PersonaProposal
    from apps.scenes.models import SceneBlock

    chat = make_profile("talker", "chat")
    now = timezone.now()
    SceneBlock.objects.create(profile=chat, filename="用户-饮食.md", content="# 用户｜饮食\n- 用户不吃辣。", summary="饮食", meta_created=now, meta_updated=now)
    stamp = now.isoformat().replace("+00:00", "Z")
    script = [
        tool_calls(("read_scene_blocks", {"filenames": ["用户-饮食.md"]})),
        tool_calls(("l3_edit", {"action": "add", "content": "用户不吃辣。"})),
        tool_calls(("l3_commit", {"cursor": stamp})),
        text("L3 done: 提案 add 1 / update 0 / delete 0"),
    ]
    with FakeLLM(script) as fake:
        llm_on(fake)
        run = run_now(chat, KIND_L3)
    assert run.status == STATUS_SUCCEEDED, run.error
    task = fake.requests[0]["body"]["messages"][1]["content"]
    assert task.startswith("L3 persona task\n") and "CharLimit: 1375" in task and "用户-饮食.md" in task
    assert [e["text"] for e in PersonaProposal.objects.get(profile=chat).entries] == ["用户不吃辣。"]
    assert cursor_get(profile=chat, kind="l3") == {"updated": stamp}


def test_skill_review_llm_run_creates_a_skill_and_stores_the_feed_cursor(alice, run_now, llm_on):
    from apps.conversations.feed import skill_feed_append
    from apps.skills import services as skills

    skill_feed_append(profile=alice, rows=[
        {"role": "user", "content": "Rotate the staging TLS certificate", "sessionKey": "f1"},
        {"role": "tool_call", "content": "{}", "tool_name": "shell", "tool_call_id": "t1", "sessionKey": "f1"},
        {"role": "tool_result", "content": "ok", "tool_call_id": "t1", "sessionKey": "f1"},
    ])
    content = (
        "---\nname: rotate-tls-cert\ndescription: Rotate a staging TLS certificate with certbot and reload nginx.\n---\n"
        "# Rotate TLS\n\n## When to Use\nA certificate expires soon.\n\n## Steps\n1. `certbot renew`\n2. `nginx -s reload`\n"
    )

    def feed_files(body):
        return body["messages"][1]["content"].split("FeedFiles: ")[1].split("\n")[0]

    script = [
        lambda body: tool_calls(("read_skill_feed_increment", {"feedFiles": feed_files(body), "cursor": ""})),
        tool_calls(("skill_view", {"name": "rotate-tls-cert"})),
        tool_calls(("skill_manage", {"action": "create", "name": "rotate-tls-cert", "category": "ops", "content": content})),
        text("Skill review done: 新建 1 / 修补 0 / 跳过 0 (rotate-tls-cert)"),
    ]
    with FakeLLM(script) as fake:
        llm_on(fake)
        run = run_now(alice, "skill_review")
    assert run.status == STATUS_SUCCEEDED, run.error
    body = fake.requests[0]["body"]
    assert {t["function"]["name"] for t in body["tools"]} == {"read_skill_feed_increment", "skill_view", "skill_manage", "read"}
    assert body["messages"][1]["content"].startswith("Skill review task\nFeedFiles: /")
    assert json.loads(fake.requests[2]["body"]["messages"][-1]["content"])["error"]["code"] == "not_found"
    assert skills.skill_list(profile=alice, category="ops")["skills"][0]["name"] == "rotate-tls-cert"
    assert run.counts["skillsChanged"] == 1 and run.counts["feedRowsRead"] == 3
    assert cursor_get(profile=alice, kind="skill_feed")["recordedAt"]


def test_a_failed_model_call_is_in_the_transcript(shop, l0, run_now, llm_on):
    l0(shop, [msg("m1", "We decided to use Redis for the cache.")])
    with FakeLLM([raw(503, b'{"error": {"message": "model is loading"}}')]) as fake:
        llm_on(fake)
        run = run_now(shop, KIND_L1)
    assert run.status == STATUS_FAILED and f"{fake.base_url}/chat/completions" in run.error
    failed = [e for e in run.transcript if e.get("type") == "model" and e.get("ok") is False]
    assert len(failed) == 1
    entry = failed[0]
    assert "model is loading" in entry["error"] and entry["durationSeconds"] >= 0
    assert entry["request"]["endpoint"] == f"{fake.base_url}/chat/completions"
    assert entry["request"]["model"] == "fake-model" and entry["request"]["messages"] == 2
    assert run.counts["modelCallsFailed"] == 1


@pytest.mark.parametrize("body", [
    b'{"choices": "garbage"}',
    b'{"id": "x", "object": "list", "data": []}',
    b'{"choices": []}',
    b'{"choices": [{"index": 0, "finish_reason": "stop"}]}',
])
def test_a_200_reply_that_is_not_a_completion_fails_at_once_naming_the_endpoint(shop, l0, run_now, llm_on, body):
    l0(shop, [msg("m1", "We decided to use Redis for the cache.")])
    before = state(shop)
    with FakeLLM([raw(200, body)] * 5) as fake:
        llm_on(fake)
        run = run_now(shop, KIND_L1)
    assert len(fake.requests) == 1  # not retried up to the iteration bound
    assert run.status == STATUS_FAILED
    assert f"{fake.base_url}/chat/completions" in run.error and "not a chat completion" in run.error
    assert run.transcript[-1]["ok"] is False and run.transcript[-1]["body"]
    assert state(shop) == before


def test_a_garbage_body_names_the_endpoint(shop, l0, run_now, llm_on):
    l0(shop, [msg("m1", "We decided to use Redis for the cache.")])
    with FakeLLM([raw(200, b"{\"choices\": [tru", "application/json")]) as fake:
        llm_on(fake)
        run = run_now(shop, KIND_L1)
    assert run.status == STATUS_FAILED
    assert f"{fake.base_url}/chat/completions" in run.error
    assert not run.error.startswith("JSONDecodeError")
    assert run.transcript[-1]["ok"] is False


def test_the_rule_files_state_corrections_forget_requests_scope_and_sources():
    code = (PROMPTS_DIR / "extract-code-personal.md").read_text(encoding="utf-8")
    chat = (PROMPTS_DIR / "extract-chat.md").read_text(encoding="utf-8")
    dedup = (PROMPTS_DIR / "dedup.md").read_text(encoding="utf-8")
    l2 = (PROMPTS_DIR / "l2-scene-organizer.md").read_text(encoding="utf-8")
    l3 = (PROMPTS_DIR / "l3-persona-generator.md").read_text(encoding="utf-8")
    for prompt in (code, chat, dedup):
        assert 'reason: "user-forget"' in prompt and "replaces: [旧ID]" in prompt
    assert "not 5432" in code and "不是周二，是周四" in code and "in this repo" in code and "global" in code
    assert "forget what I said about my ex" in chat and "这条别记了" in chat
    assert "user-forget" in l2 and "综述" in l2
    assert "sources" in l3 and "don't forget to add the e2e tests" in l3
    # The task message of the L1 run points the model at these files.
    assert {"extract-code-personal.md", "extract-chat.md", "dedup.md"} <= {p.name for p in PROMPTS_DIR.glob("*.md")}
