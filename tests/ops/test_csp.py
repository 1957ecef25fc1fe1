"""The Content-Security-Policy, and that no template brings inline script back."""

from __future__ import annotations

import re
from pathlib import Path

from django.test import Client

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def test_pages_and_api_carry_the_policy(db):
    for path in ("/login/", "/api/v1/health"):
        policy = Client().get(path)["Content-Security-Policy"]
        directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
        assert directives["script-src"] == "'self'"
        assert directives["object-src"] == "'none'" and directives["frame-ancestors"] == "'none'"
        assert "unsafe-eval" not in policy and "'unsafe-inline'" not in directives["script-src"]


def test_no_template_has_inline_script_handlers_or_javascript_urls():
    offenders = []
    for path in TEMPLATES.rglob("*.html"):
        text = path.read_text()
        for m in re.finditer(r"<script\b[^>]*>", text):
            if "src=" not in m.group(0):
                offenders.append(f"{path}: inline <script>")
        if re.search(r"\son[a-z]+\s*=", text):
            offenders.append(f"{path}: on*= handler")
        if "javascript:" in text.lower():
            offenders.append(f"{path}: javascript: URL")
        if "hx-on" in text:
            offenders.append(f"{path}: hx-on needs eval")
    assert not offenders, offenders


def test_htmx_runs_without_eval(db):
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user(username="dana", password="correct horse battery staple")
    client = Client()
    client.force_login(user)
    page = client.get("/", follow=True).content.decode()
    assert '<meta name="htmx-config" content=\'{"allowEval": false}\'>' in page
    assert "/static/dashboard/app.js" in page
