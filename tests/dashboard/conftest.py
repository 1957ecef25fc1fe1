"""People and data for dashboard tests.

alice: may open profile alice (not admin); bob: admin of profile bob and reader of alice;
charlie: may open nothing; root: a superuser."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from apps.accounts.models import ProfileAccess
from tests import factories


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
    return factories.make_record


@pytest.fixture
def make_block(db):
    return factories.make_block
