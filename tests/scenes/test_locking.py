"""A write that cannot get the profile's write lock answers `locked` and writes nothing
(PostgreSQL: a second connection holds the lock)."""

import threading

import pytest
from django.db import connection, connections

from apps.accounts.locks import profile_write_lock
from apps.accounts.models import Profile
from apps.scenes.models import SceneBlock

from .conftest import create

pytestmark = pytest.mark.integration


@pytest.mark.django_db(transaction=True)
def test_l2_commit_and_l3_edit_answer_locked_while_another_writer_holds_the_lock(make_profile, make_api, monkeypatch):
    monkeypatch.setattr("apps.pipeline.triggers.l2_committed", lambda **kw: None)
    if connection.vendor != "postgresql":
        pytest.skip("row lock timeouts are a PostgreSQL behaviour; SQLite waits on the database lock")
    alice = make_profile("alice")
    alice.settings = {"l1.writeLockTimeoutSeconds": 1}
    alice.save()
    api = make_api(alice, "worker")
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with profile_write_lock(Profile.objects.get(pk=alice.pk)):
                holding.set()
                release.wait(10)
        finally:
            connections.close_all()

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert holding.wait(5)
        status, body = api.call("l2_commit", sceneWrites=[create("a.md")], cursor=0)
        assert status == 423 and body["error"]["code"] == "locked"
        status, body = api.call("l3_edit", action="add", content="Likes tea")
        assert status == 423
    finally:
        release.set()
        thread.join()
    assert not SceneBlock.objects.filter(profile=alice).exists()
    assert api.call("l2_commit", sceneWrites=[create("a.md")], cursor=0)[0] == 200
