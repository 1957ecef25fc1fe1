"""Browser tests: Debian's Chromium driven by Playwright against a live server.

Playwright's sync API runs an event loop in this thread, so Django's async-safety check
would refuse ORM calls made by the test itself (the test thread serves no requests).
DJANGO_ALLOW_ASYNC_UNSAFE is set only while the browser is open, so the rest of the suite
keeps the check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def chromium_browser():
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed (apt-get install chromium fonts-wqy-microhei)")
    from playwright.sync_api import sync_playwright

    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


def _page_fixture(chromium_browser, settings, *, enforce_csp: bool):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Playwright's wait_for_function polls by evaluating the predicate in the page, which
    # the dashboard's CSP (no eval) refuses; the flows here are checked under the
    # enforced policy by test_csp_browser.py (`csp_page`), which waits without eval.
    context = chromium_browser.new_context(viewport={"width": 1360, "height": 900}, locale="en-US",
                                           bypass_csp=not enforce_csp)
    page = context.new_page()
    page.set_default_timeout(15000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors  # type: ignore[attr-defined]
    yield page
    context.close()


@pytest.fixture
def browser_page(chromium_browser, live_server, settings):
    yield from _page_fixture(chromium_browser, settings, enforce_csp=False)


@pytest.fixture
def csp_page(chromium_browser, live_server, settings):
    yield from _page_fixture(chromium_browser, settings, enforce_csp=True)


@pytest.fixture
def screenshot():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page, name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


@pytest.fixture
def staff(transactional_db, settings):
    """A person with admin access to a code-mode profile `demo` full of Chinese and English memories."""
    from django.contrib.auth import get_user_model

    from apps.accounts.models import ProfileAccess
    from apps.accounts.services import profile_create

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    profile = profile_create(slug="demo", mode="code")
    user = get_user_model().objects.create_user(username="dana", password="browser-pass-1")
    ProfileAccess.objects.create(user=user, profile=profile, is_admin=True)
    return {"profile": profile, "username": "dana", "password": "browser-pass-1"}


def log_in(page, live_server, staff) -> None:
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", staff["username"])
    page.fill("input[name=password]", staff["password"])
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/p/demo/")
