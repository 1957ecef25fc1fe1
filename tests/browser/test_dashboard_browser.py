"""The dashboard in a real browser: log in, filter and search records, fix a record,
merge a persona entry, archive and restore a scene, trigger a job and watch it finish."""

from __future__ import annotations

import time

import pytest

from apps.conversations.services import l0_append
from apps.records.models import L1Record
from tests import factories
from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser

EVIDENCE = "The user corrected this on 2026-11-20: the port is 8080."


def _fill_demo(profile):
    records = [
        factories.make_record(profile, "项目使用 Django 5.2 和 htmx 构建仪表盘", type="work_fact", priority=80),
        factories.make_record(profile, "The service listens on port 8000", type="work_fact"),
        factories.make_record(profile, "写一份 v2 升级指南", type="work_task"),
        factories.make_record(profile, "Ship the release notes for v1", type="work_task", task_state="done"),
        factories.make_record(profile, "Run ruff and pytest before every commit", type="work_method", priority=90),
        factories.make_record(profile, "Dashboard screenshots live in test-output/screenshots", type="work_artifact"),
    ]
    return records


def test_login_overview_and_pages_render(browser_page, live_server, staff, screenshot):
    page = browser_page
    _fill_demo(staff["profile"])
    factories.make_block(staff["profile"], "仪表盘-构建.md", "# 仪表盘\n\n- 使用 **htmx**\n- 服务器端 SVG 图表")
    log_in(page, live_server, staff)
    assert page.locator("h1").first.inner_text().startswith("Overview")
    page.wait_for_selector("#health table")  # loaded by htmx after the page
    screenshot(page, "overview")
    for path, name in [("records/", "records"), ("scenes/", "scenes"), ("persona/", "persona"), ("hits/", "hits"),
                       ("jobs/", "jobs"), ("skills/", "skills"), ("conversations/", "conversations"), ("admin/", "admin")]:
        page.goto(f"{live_server.url}/p/demo/{path}")
        assert page.locator("h1").first.is_visible()
        screenshot(page, name)
    assert page.js_errors == []


def test_filter_search_and_fix_a_record(browser_page, live_server, staff, screenshot):
    page = browser_page
    records = _fill_demo(staff["profile"])
    log_in(page, live_server, staff)
    page.click("nav.nav >> text=Records")
    assert page.locator("#total").inner_text().startswith("6 records")
    page.select_option("select[name=type]", "work_task")  # htmx swaps the results in place
    page.wait_for_function("document.querySelector('#total').innerText.startsWith('2 records')")
    assert "type=work_task" in page.url  # the filter is in the address (hx-push-url)
    page.select_option("select[name=type]", "")
    page.wait_for_function("document.querySelector('#total').innerText.startsWith('6 records')")
    page.fill("input[name=q]", "升级")
    page.press("input[name=q]", "Enter")
    page.wait_for_function("document.querySelector('#total').innerText.startsWith('1 record')")
    assert "写一份 v2 升级指南" in page.locator("#results").inner_text()
    screenshot(page, "records-search")

    target = records[1]
    page.goto(f"{live_server.url}/p/demo/records/{target.record_id}/")
    page.fill("textarea[name=newContent]", "The service listens on port 8080")
    page.fill("textarea[name=evidence]", "short")
    page.click("button[value=rewrite]")
    page.wait_for_selector(".refusal")  # the guard's refusal shown in place
    assert page.locator(".refusal").inner_text().startswith("Please check the form: Evidence: at least")
    screenshot(page, "record-refusal")
    page.fill("textarea[name=newContent]", "The service listens on port 8080")
    page.fill("textarea[name=evidence]", EVIDENCE)
    page.click("button[value=rewrite]")
    page.wait_for_selector("text=Rewrote")
    target.refresh_from_db()
    assert target.deleted and target.replaced_by
    assert page.url.endswith(f"/records/{target.replaced_by}/")
    assert L1Record.objects.get(record_id=target.replaced_by).content == "The service listens on port 8080"
    screenshot(page, "record")
    assert page.js_errors == []


def test_merge_a_persona_entry(browser_page, live_server, staff, screenshot):
    from apps.persona.services import persona_edit, persona_import, persona_live_entries

    profile = staff["profile"]
    persona_import(profile=profile, actor="test", user_md="用户偏好中文回答\n§\nUses vim keybindings\n")
    persona_edit(profile=profile, actor="job", action="add", content="在 memoryweb 项目上工作")
    persona_edit(profile=profile, actor="job", action="update", target="vim", content="Uses vim keybindings everywhere")
    page = browser_page
    log_in(page, live_server, staff)
    page.goto(f"{live_server.url}/p/demo/persona/")
    budget_before = page.locator("#budget").inner_text()
    screenshot(page, "persona-review")
    page.locator("[data-kind=added] button[value=accept]").click()
    page.wait_for_function("!document.querySelector('[data-kind=added]')")
    assert "在 memoryweb 项目上工作" in persona_live_entries(profile=profile)
    assert page.locator("#budget").inner_text() != budget_before
    assert "1 change" in page.locator("#review").inner_text()
    screenshot(page, "persona-merged")
    assert page.js_errors == []


def test_archive_and_restore_a_scene(browser_page, live_server, staff, screenshot):
    block = factories.make_block(staff["profile"], "旧项目.md", "# 旧项目\n\n已经结束。", days_old=30)
    page = browser_page
    log_in(page, live_server, staff)
    page.goto(f"{live_server.url}/p/demo/scenes/")
    page.click("text=旧项目.md")
    page.fill("input[name=reason]", "项目已在十月结束")
    page.once("dialog", lambda dialog: dialog.accept())  # archiving asks first
    page.click("button:has-text('Archive')")
    page.wait_for_selector("text=Archived 旧项目.md")
    block.refresh_from_db()
    assert block.archived
    screenshot(page, "scene-archived")
    page.click("button:has-text('Restore to live')")
    page.wait_for_selector("text=Restored 旧项目.md")
    block.refresh_from_db()
    assert not block.archived
    screenshot(page, "scene")


def test_trigger_a_job_and_watch_it_finish(browser_page, live_server, staff, screenshot):
    from apps.pipeline.jobs import execute_run
    from apps.pipeline.models import JobRun

    profile = staff["profile"]
    l0_append(profile=profile, rows=[
        {"id": "m1", "role": "user", "content": "请记住：这个项目的测试命令是 make test", "timestamp": 1_700_000_000_000, "sessionKey": "s-1", "cwd": "/srv/demo"},
        {"id": "m2", "role": "assistant", "content": "好的，我记住了。", "timestamp": 1_700_000_001_000, "sessionKey": "s-1", "cwd": "/srv/demo"},
    ])
    page = browser_page
    progress_requests: list[float] = []
    page.on("request", lambda req: progress_requests.append(time.monotonic()) if "/progress/" in req.url else None)
    log_in(page, live_server, staff)
    page.goto(f"{live_server.url}/p/demo/jobs/")
    page.click("button:has-text('Run l1_extract')")
    page.wait_for_selector("#run-status")
    assert page.locator("#run-status").inner_text() == "queued"
    run = JobRun.objects.get(profile=profile, kind="l1_extract")
    deadline = time.monotonic() + 10
    while not progress_requests and time.monotonic() < deadline:
        page.wait_for_timeout(200)
    assert progress_requests, "the page should poll while the run is queued"
    execute_run(run_id=run.pk)
    page.wait_for_function("['succeeded','failed'].includes(document.querySelector('#run-status').innerText)", timeout=20000)
    run.refresh_from_db()
    assert page.locator("#run-status").inner_text() == run.status
    screenshot(page, "job")
    polls_at_end = len(progress_requests)
    page.wait_for_timeout(2500)
    assert len(progress_requests) == polls_at_end, "polling must stop once the run has finished"


def test_admin_creates_a_token_shown_once(browser_page, live_server, staff, screenshot):
    from apps.accounts.models import ApiToken
    from apps.accounts.services import token_authenticate

    page = browser_page
    log_in(page, live_server, staff)
    page.goto(f"{live_server.url}/p/demo/admin/")
    page.select_option("select[name=role]", "worker")
    page.fill("input[name=name]", "pipeline host")
    page.click("button:has-text('Create token')")
    plain = page.locator("#plain-token").inner_text().strip()
    assert plain.startswith("mw_")
    assert token_authenticate(plain=plain).pk == ApiToken.objects.get(profile=staff["profile"], name="pipeline host").pk
    screenshot(page, "admin-token")
    page.goto(f"{live_server.url}/p/demo/admin/")
    assert plain not in page.content()
    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    page.click("button:has-text('Revoke')")
    page.wait_for_selector("text=Revoked token")
    assert asked and asked[0].startswith("Revoke token")
    assert token_authenticate(plain=plain) is None
