"""Token names, listtokens / revoketoken, the audit actor and coalesced last-used."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.accounts.models import ApiToken, AuditEvent
from apps.accounts.services import TokenNameError, profile_create, token_create


def _create(slug: str, role: str, name: str) -> str:
    out = StringIO()
    call_command("createtoken", slug, "--role", role, "--name", name, stdout=out)
    return out.getvalue().strip().splitlines()[-1]


def _whoami(plain: str) -> int:
    return Client().post("/api/v1/tools/whoami", data="{}", content_type="application/json",
                         HTTP_AUTHORIZATION=f"Bearer {plain}").status_code


def test_createtoken_requires_a_name(db):
    profile_create(slug="carol")
    with pytest.raises(CommandError, match="--name"):
        call_command("createtoken", "carol", "--role", "agent", stdout=StringIO())


@pytest.mark.parametrize("bad", ["a:b", ".dot-first", "x" * 65, "tab\there", "new\nline"])
def test_token_names_are_validated(db, bad):
    profile = profile_create(slug="carol")
    with pytest.raises(TokenNameError):
        token_create(profile=profile, role="agent", name=bad)
    with pytest.raises(CommandError, match="not valid"):
        _create("carol", "agent", bad)
    assert not ApiToken.objects.exists()


def test_a_name_is_unique_in_its_profile_even_after_revocation(db):
    profile_create(slug="carol")
    profile_create(slug="dave")
    _create("carol", "agent", "laptop-claude")
    _create("dave", "agent", "laptop-claude")  # another profile may use it
    call_command("revoketoken", "laptop-claude", "--profile", "carol", stdout=StringIO())
    with pytest.raises(CommandError, match="already has a token named 'laptop-claude'"):
        _create("carol", "agent", "laptop-claude")


def test_programmatic_tokens_get_a_name(db):
    token, _ = token_create(profile=profile_create(slug="carol"), role="worker")
    assert token.name == f"worker-{token.prefix}"


def test_listtokens_shows_name_role_dates_and_never_the_secret(db):
    profile_create(slug="carol")
    profile_create(slug="dave")
    plain = _create("carol", "admin", "laptop-claude")
    _create("dave", "agent", "ci-runner")
    assert _whoami(plain) == 200
    out = StringIO()
    call_command("listtokens", "carol", stdout=out)
    text = out.getvalue()
    lines = text.splitlines()
    assert lines[0].split() [:4] == ["profile", "name", "prefix", "role"]
    assert "laptop-claude" in text and "admin" in text and "active" in text and "ci-runner" not in text
    row = next(line for line in lines if "laptop-claude" in line)
    assert "never" not in row  # last used is shown once the token was used
    assert plain not in text and plain[10:20] not in text
    everything = StringIO()
    call_command("listtokens", stdout=everything)
    assert "ci-runner" in everything.getvalue()
    with pytest.raises(CommandError, match="no profile"):
        call_command("listtokens", "ghost", stdout=StringIO())


def test_revoketoken_by_name_or_prefix_and_audited(db):
    profile_create(slug="carol")
    first = _create("carol", "agent", "laptop-claude")
    second = _create("carol", "agent", "desktop")
    call_command("revoketoken", "laptop-claude", stdout=StringIO())
    assert _whoami(first) == 401 and _whoami(second) == 200
    call_command("revoketoken", second[:8], stdout=StringIO())
    assert _whoami(second) == 401
    events = AuditEvent.objects.filter(action="token_revoke").order_by("id")
    assert [e.before["name"] for e in events] == ["laptop-claude", "desktop"]
    assert {e.actor for e in events} == {"manage.py revoketoken"}
    with pytest.raises(CommandError, match="no active token"):
        call_command("revoketoken", "laptop-claude", stdout=StringIO())


def test_revoketoken_refuses_an_ambiguous_name(db):
    profile_create(slug="carol")
    profile_create(slug="dave")
    a = _create("carol", "agent", "phone")
    b = _create("dave", "agent", "phone")
    with pytest.raises(CommandError, match="matches 2 tokens"):
        call_command("revoketoken", "phone", stdout=StringIO())
    assert _whoami(a) == 200 and _whoami(b) == 200
    call_command("revoketoken", "phone", "--profile", "dave", stdout=StringIO())
    assert _whoami(a) == 200 and _whoami(b) == 401
    with pytest.raises(CommandError, match="no active token"):
        call_command("revoketoken", "mw_", stdout=StringIO())  # too short to be a prefix


def test_audit_actor_of_a_token_call_carries_the_token_name(db, private_index):
    profile_create(slug="carol")
    plain = _create("carol", "agent", "laptop-claude")
    response = Client().post(
        "/api/v1/tools/l1_commit", content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {plain}",
        HTTP_X_MEMORY_SESSION="s1",
        data={"records": [{"content": "The user prefers tabs over spaces in Go code.", "type": "work_method",
                           "priority": 70}], "source": "main-agent"},
    )
    assert response.status_code == 200, response.content
    actors = set(AuditEvent.objects.filter(profile__slug="carol").values_list("actor", flat=True))
    assert actors == {"token:laptop-claude:agent"}


def test_last_used_is_written_at_most_once_a_minute(db):
    profile_create(slug="carol")
    plain = _create("carol", "agent", "busy")
    with CaptureQueriesContext(connection) as queries:
        for _ in range(20):
            assert _whoami(plain) == 200
    updates = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE") and "last_used_at" in q["sql"]]
    assert len(updates) == 1
    first = ApiToken.objects.get(name="busy").last_used_at
    assert first is not None
    # A minute later the next call records the time again.
    ApiToken.objects.filter(name="busy").update(last_used_at=timezone.now() - timedelta(seconds=61))
    assert _whoami(plain) == 200
    assert ApiToken.objects.get(name="busy").last_used_at > first
