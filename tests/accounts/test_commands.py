from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from apps.accounts.models import ApiToken, Profile


def test_createprofile_and_createtoken_give_a_working_token(db):
    call_command("createprofile", "carol", "--mode", "chat", stdout=StringIO())
    assert Profile.objects.get(slug="carol").mode == "chat"
    out = StringIO()
    call_command("createtoken", "carol", "--role", "agent", "--name", "laptop-claude", stdout=out)
    plain = out.getvalue().strip().splitlines()[-1]
    assert plain.startswith("mw_")
    assert not ApiToken.objects.filter(token_hash=plain).exists()
    response = Client().post("/api/v1/tools/whoami", data="{}", content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {plain}")
    assert response.json()["profile"] == "carol"


def test_createprofile_refuses_duplicates_unless_if_missing(db):
    call_command("createprofile", "dave", stdout=StringIO())
    with pytest.raises(CommandError):
        call_command("createprofile", "dave", stdout=StringIO())
    call_command("createprofile", "dave", "--if-missing", stdout=StringIO())


def test_createprofile_rejects_bad_slug(db):
    with pytest.raises(CommandError):
        call_command("createprofile", "not a slug!", stdout=StringIO())


def test_createtoken_unknown_profile(db):
    with pytest.raises(CommandError, match="no profile"):
        call_command("createtoken", "ghost", "--role", "agent", "--name", "x", stdout=StringIO())
