"""Semantic (hybrid) search from the records page, the Markdown filter, and the
createuser command."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from apps.accounts.models import AuditEvent, ProfileAccess
from apps.hitstats.models import RecallEvent, RecordHits


def test_semantic_search_lists_recalled_records_without_counting_hits(login, alice, make_record):
    target = make_record(alice, "Deploy the service with docker compose on staging")
    make_record(alice, "The user prefers tea over coffee")
    body = login("alice").get("/p/alice/records/?mode=semantic&q=docker+compose+deploy").content.decode()
    assert "Hybrid recall for" in body
    results = body.split("Hybrid recall for")[1]
    assert target.record_id in results
    assert "Dashboard searches do not count as hits" in body
    assert not RecordHits.objects.filter(profile=alice).exists()
    assert not RecallEvent.objects.filter(profile=alice).exists()


def test_semantic_search_stays_inside_the_profile(login, alice, bob, make_record):
    make_record(bob, "Bob deploys with docker compose on staging")
    body = login("alice").get("/p/alice/records/?mode=semantic&q=docker+compose").content.decode()
    assert "Bob deploys" not in body


def test_createuser_creates_person_and_grants_access(alice, monkeypatch, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    monkeypatch.setenv("MEMORYWEB_PASSWORD", "a-good-password")
    call_command("createuser", "dana", "--profile", "alice", "--admin")
    access = ProfileAccess.objects.get(user__username="dana", profile=alice)
    assert access.is_admin is True
    assert access.user.check_password("a-good-password")
    assert AuditEvent.objects.filter(profile=alice, action="access_grant", target_id="dana").exists()


def test_createuser_refuses_unknown_profile_short_password_and_duplicates(alice, monkeypatch, settings):
    from django.contrib.auth import get_user_model

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    monkeypatch.setenv("MEMORYWEB_PASSWORD", "a-good-password")
    with pytest.raises(CommandError, match="no profile 'ghost'"):
        call_command("createuser", "erin", "--profile", "ghost")
    assert not get_user_model().objects.filter(username="erin").exists()
    monkeypatch.setenv("MEMORYWEB_PASSWORD", "short")
    with pytest.raises(CommandError, match="at least 10 characters"):
        call_command("createuser", "erin", "--profile", "alice")
    monkeypatch.setenv("MEMORYWEB_PASSWORD", "a-good-password")
    call_command("createuser", "erin")
    with pytest.raises(CommandError, match="already exists"):
        call_command("createuser", "erin", "--profile", "alice")
    call_command("createuser", "erin", "--profile", "alice", "--if-exists-grant")
    assert ProfileAccess.objects.filter(user__username="erin", profile=alice, is_admin=False).exists()


def test_semantic_search_uses_the_hybrid_index_and_shows_the_trace(login, alice, make_record, private_index):
    from apps.search.outbox import drain_outbox, enqueue_index_op

    target = make_record(alice, "部署服务时使用 docker compose 并在 staging 主机上验证")
    other = make_record(alice, "The user likes green tea in the afternoon")
    for record in (target, other):
        enqueue_index_op(profile=alice, record_id=record.record_id, op="upsert")
    drain_outbox(alice.pk)
    body = login("alice").get("/p/alice/records/?mode=semantic&q=how+do+we+deploy+with+docker").content.decode()
    results = body.split("Hybrid recall for")[1]
    assert "degraded" not in results
    assert target.record_id in results
    assert other.record_id not in results  # unrelated: below recall.minRelevance, as for an agent
    trace = results.split("<h3>Trace</h3>")[1]
    assert target.record_id in trace
    assert not RecordHits.objects.filter(profile=alice).exists()
