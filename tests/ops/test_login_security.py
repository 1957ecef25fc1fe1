"""Dashboard login: throttling per username and per address, password validators,
secure cookies and HSTS behind TLS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
GOOD = "correct horse battery staple"


@pytest.fixture
def dana(db):
    return get_user_model().objects.create_user(username="dana", password=GOOD)


def _login(username: str, password: str, ip: str = "10.0.0.1") -> int:
    response = Client(REMOTE_ADDR=ip).post("/login/", {"username": username, "password": password})
    return response.status_code


def test_the_right_password_is_refused_after_five_failures_for_that_username(dana, settings):
    assert settings.AXES_FAILURE_LIMIT == 5
    for i in range(4):
        assert _login("dana", f"wrong-{i}", ip=f"10.0.1.{i}") == 200  # the form again, with an error
    assert _login("dana", "wrong-4", ip="10.0.1.4") == 429  # the fifth failure locks
    # From yet another address, with the right password: the username is locked.
    assert _login("dana", GOOD, ip="10.0.9.9") == 429
    get_user_model().objects.create_user(username="erin", password=GOOD)
    assert _login("erin", GOOD, ip="10.0.9.9") == 302  # another username is not


def test_one_address_guessing_many_usernames_is_locked(dana):
    for i in range(4):
        assert _login(f"nobody{i}", "guess", ip="10.0.2.2") == 200
    assert _login("nobody4", "guess", ip="10.0.2.2") == 429
    assert _login("dana", GOOD, ip="10.0.2.2") == 429
    assert _login("dana", GOOD, ip="10.0.2.3") == 302


def test_a_success_resets_the_count(dana):
    for i in range(4):
        _login("dana", f"wrong-{i}")
    assert _login("dana", GOOD) == 302
    for i in range(4):
        _login("dana", f"wrong-again-{i}")
    assert _login("dana", GOOD) == 302


def test_the_lockout_page_says_why(dana):
    for i in range(5):
        _login("dana", f"wrong-{i}")
    response = Client(REMOTE_ADDR="10.0.0.1").post("/login/", {"username": "dana", "password": GOOD})
    assert response.status_code == 429 and b"Too many failed logins" in response.content


@pytest.mark.parametrize("password", ["password", "12345678", "1234567890123", "dana-the-person", "short"])
def test_createuser_refuses_weak_passwords(db, monkeypatch, password):
    monkeypatch.setenv("MEMORYWEB_PASSWORD", password)
    with pytest.raises(CommandError, match="the password is refused"):
        call_command("createuser", "dana-the-person", stdout=StringIO())
    assert not get_user_model().objects.filter(username="dana-the-person").exists()


def test_createuser_accepts_a_strong_password(db, monkeypatch):
    monkeypatch.setenv("MEMORYWEB_PASSWORD", GOOD)
    call_command("createuser", "dana", stdout=StringIO())
    assert get_user_model().objects.get(username="dana").check_password(GOOD)


def test_the_django_admin_applies_the_validators(db):
    root = get_user_model().objects.create_superuser(username="root", password=GOOD)
    client = Client()
    client.force_login(root)
    response = client.post("/django-admin/auth/user/add/", {
        "username": "weak", "password1": "12345678", "password2": "12345678", "usable_password": "true"})
    assert response.status_code == 200 and not get_user_model().objects.filter(username="weak").exists()
    assert b"too common" in response.content or b"entirely numeric" in response.content


CHECK_HTTPS = """
import json
from django.contrib.auth import get_user_model
from django.test import Client
get_user_model().objects.create_user(username="dana", password="correct horse battery staple")
c = Client()
r = c.post("/login/", {"username": "dana", "password": "correct horse battery staple"}, HTTP_X_FORWARDED_PROTO="https")
page = c.get("/", HTTP_X_FORWARDED_PROTO="https")
print(json.dumps({"status": r.status_code, "cookies": {k: {"secure": bool(v["secure"]), "httponly": bool(v["httponly"])} for k, v in r.cookies.items()},
                  "hsts": page.get("Strict-Transport-Security", "")}))
"""


def _run_https(data: Path, https: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "MEMORYWEB_PROCESS"))}
    env.update({"MEMORYWEB_DATA_DIR": str(data), "MEMORYWEB_HTTPS": https})
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v", "0"], env=env, cwd=ROOT, check=True, timeout=300)
    out = subprocess.run([*manage, "shell", "-c", CHECK_HTTPS], env=env, cwd=ROOT, check=True, timeout=120,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_behind_tls_cookies_are_secure_and_hsts_is_sent(tmp_path):
    on = _run_https(tmp_path / "on", "1")
    assert on["status"] == 302
    assert on["cookies"]["sessionid"] == {"secure": True, "httponly": True}
    assert on["cookies"]["csrftoken"]["secure"] is True
    assert on["hsts"].startswith("max-age=31536000")
    off = _run_https(tmp_path / "off", "0")
    assert off["cookies"]["sessionid"]["secure"] is False and off["hsts"] == ""
