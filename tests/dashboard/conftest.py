"""People and data for dashboard tests.

alice: may open profile alice (not admin); bob: admin of profile bob and reader of alice;
charlie: may open nothing; root: a superuser."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from apps.accounts.models import ProfileAccess
from apps.records.models import L1Change, L1Record

_seq = itertools.count(1)


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    # PBKDF2's deliberate slowness buys nothing in tests of views.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def person(db):
    def make(username: str, *, superuser: bool = False):
        User = get_user_model()
        if superuser:
            return User.objects.create_superuser(username=username, password="pw-" + username + "-123")
        return User.objects.create_user(username=username, password="pw-" + username + "-123")

    return make


@pytest.fixture
def people(person, alice, bob):
    alice_user = person("alice")
    bob_user = person("bob")
    charlie = person("charlie")
    ProfileAccess.objects.create(user=alice_user, profile=alice, is_admin=False)
    ProfileAccess.objects.create(user=bob_user, profile=bob, is_admin=True)
    ProfileAccess.objects.create(user=bob_user, profile=alice, is_admin=False)
    return {"alice": alice_user, "bob": bob_user, "charlie": charlie}


@pytest.fixture
def login(people):
    def make(username: str) -> Client:
        client = Client()
        client.force_login(people[username] if username in people else get_user_model().objects.get(username=username))
        return client

    return make


@pytest.fixture
def make_record(db):
    """A stored L1 record with its first history entry (test data, not a dashboard write)."""

    def make(profile, content: str = "The build uses make test for every change", **fields) -> L1Record:
        n = next(_seq)
        now = fields.pop("created_at", None) or timezone.now() - timedelta(minutes=n)
        record = L1Record.objects.create(
            profile=profile,
            record_id=fields.pop("record_id", f"l1_{1700000000000 + n}_t{n:03d}"[:40]),
            content=content,
            type=fields.pop("type", "work_fact"),
            priority=fields.pop("priority", 60),
            metadata=fields.pop("metadata", {"scope": "global", "project": ""}),
            created_at=now,
            updated_at=now,
            content_key=f"k{n}",
            **fields,
        )
        change = L1Change.objects.create(profile=profile, record=record, action="store", actor="test", state=record.as_dict())
        L1Record.objects.filter(pk=record.pk).update(last_change=change.pk)
        record.refresh_from_db()
        return record

    return make


@pytest.fixture
def make_block(db):
    """A scene block written through the scene service (as the L2 job would)."""
    from apps.scenes.services import scene_commit

    def make(profile, filename: str = "项目｜构建.md", content: str = "# Build\n\nUses `make test`.", *, members=None, days_old: int = 30):
        created = (timezone.now() - timedelta(days=days_old)).isoformat()
        write = {"action": "create", "filename": filename, "content": content,
                 "meta": {"created": created, "updated": created, "summary": "how the build works", "heat": 3}}
        if members is not None:
            write["members"] = members
        scene_commit(profile=profile, actor="test", scene_writes=[write], cursor=None)
        from apps.scenes.models import SceneBlock

        block = SceneBlock.objects.get(profile=profile, filename=filename, removed=False, archived=False)
        # The archive age guard counts from the block's first write here: age it as a test fixture.
        SceneBlock.objects.filter(pk=block.pk).update(created_at=timezone.now() - timedelta(days=days_old))
        block.refresh_from_db()
        return block

    return make
