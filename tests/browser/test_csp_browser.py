"""The dashboard under its Content-Security-Policy in a real browser: htmx swaps, the
lazy health panel, job polling and the select-all box work, and no page triggers a CSP
violation — while an injected inline handler is blocked (the policy is enforced)."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from tests import factories
from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser

WATCH_VIOLATIONS = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', function (e) {
  window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline'));
});
"""


def _wait_for_violation(page, timeout: float = 10.0) -> list[str]:
    # page.evaluate goes through the DevTools protocol, which the page's CSP does not govern.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = page.evaluate("window.__csp")
        if found:
            return found
        time.sleep(0.1)
    return []


def test_dashboard_works_under_the_csp(csp_page, live_server, staff, screenshot):
    page = csp_page
    console: list[str] = []
    page.on("console", lambda msg: console.append(msg.text) if "Content Security Policy" in msg.text else None)
    page.add_init_script(WATCH_VIOLATIONS)
    for i in range(3):
        factories.make_record(staff["profile"], f"Deploy step {i}: run the migrations before the web server", type="work_method")
    factories.make_record(staff["profile"], "写一份 v2 升级指南", type="work_task")
    log_in(page, live_server, staff)
    page.wait_for_selector("#health table")  # htmx hx-trigger=load under script-src 'self'
    for path in ("records/", "scenes/", "persona/", "hits/", "jobs/", "skills/", "conversations/", "admin/", "admin/audit/"):
        page.goto(f"{live_server.url}/p/demo/{path}")
        assert page.locator("h1").first.is_visible()
        assert page.evaluate("window.__csp") == [], path

    page.goto(f"{live_server.url}/p/demo/records/")
    page.select_option("select[name=type]", "work_task")  # an htmx swap
    expect(page.locator("#total")).to_have_text(re.compile(r"^1 record"))
    page.select_option("select[name=type]", "")
    expect(page.locator("#total")).to_have_text(re.compile(r"^4 records"))
    # The select-all box (static/dashboard/app.js, delegated: it works after the swap).
    page.check("input[data-select-all]")
    boxes = page.locator("#bulk input[name=ids]")
    assert boxes.count() == 4 and all(boxes.nth(i).is_checked() for i in range(4))
    page.uncheck("input[data-select-all]")
    assert not any(boxes.nth(i).is_checked() for i in range(4))
    screenshot(page, "records-under-csp")

    # Job polling (hx-trigger="every 1s") until the run has finished.
    page.goto(f"{live_server.url}/p/demo/jobs/")
    page.click("form:has(input[value=l2_organize]) button")
    page.wait_for_url("**/jobs/*/")
    assert page.evaluate("window.__csp") == [] and console == []
    assert page.js_errors == []

    # The policy is enforced: an inline handler that markup smuggled in does not run.
    page.evaluate("document.body.insertAdjacentHTML('beforeend', '<img src=\"/static/none.png\" onerror=\"window.__ran = 1\">')")
    violations = _wait_for_violation(page)
    assert page.evaluate("window.__ran") is None
    assert any(v.startswith("script-src") for v in violations), violations


def test_the_django_admin_works_under_the_csp(csp_page, live_server, transactional_db, settings):
    from django.contrib.auth import get_user_model

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    get_user_model().objects.create_superuser(username="root", password="admin-pass-1")
    page = csp_page
    page.add_init_script(WATCH_VIOLATIONS)
    page.goto(f"{live_server.url}/django-admin/login/")
    page.fill("input[name=username]", "root")
    page.fill("input[name=password]", "admin-pass-1")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/django-admin/")
    page.goto(f"{live_server.url}/django-admin/auth/user/add/")
    assert page.locator("input[name=username]").is_visible()
    assert page.evaluate("window.__csp") == []
