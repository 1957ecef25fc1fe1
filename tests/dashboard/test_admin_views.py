"""Admin of a profile: tokens (plain token shown once, only the hash stored), revoke,
people's access, and the audit log with filters. Non-admins get 404 everywhere here."""

from __future__ import annotations

import hashlib

from apps.accounts.models import ApiToken, AuditEvent, ProfileAccess
from apps.accounts.services import token_authenticate


def test_create_token_shows_plain_token_once(login, bob):
    client = login("bob")
    response = client.post("/p/bob/admin/tokens/create/", {"role": "worker", "name": "ci"})
    body = response.content.decode()
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    plain = body.split('<pre id="plain-token">')[1].split("</pre>")[0]
    token = ApiToken.objects.get(profile=bob, name="ci")
    assert token.role == "worker" and token.token_hash == hashlib.sha256(plain.encode()).hexdigest()
    assert token_authenticate(plain=plain).pk == token.pk
    assert plain not in client.get("/p/bob/admin/").content.decode()
    event = AuditEvent.objects.get(profile=bob, action="token_create")
    assert event.actor == "user:bob" and plain not in str(event.after)


def test_create_token_rejects_unknown_role(login, bob):
    body = login("bob").post("/p/bob/admin/tokens/create/", {"role": "god"}, follow=True).content.decode()
    assert "role must be one of" in body
    assert not ApiToken.objects.filter(profile=bob).exists()


def test_create_token_needs_a_free_valid_name(login, bob):
    client = login("bob")
    assert "give the token a name" in client.post("/p/bob/admin/tokens/create/", {"role": "agent"}, follow=True).content.decode()
    assert "not valid" in client.post("/p/bob/admin/tokens/create/", {"role": "agent", "name": "a:b"}, follow=True).content.decode()
    client.post("/p/bob/admin/tokens/create/", {"role": "agent", "name": "laptop"})
    again = client.post("/p/bob/admin/tokens/create/", {"role": "admin", "name": "laptop"}, follow=True).content.decode()
    assert "already has a token named" in again
    assert list(ApiToken.objects.filter(profile=bob).values_list("name", "role")) == [("laptop", "agent")]


def test_revoke_token(login, bob):
    from apps.accounts.services import token_create

    token, plain = token_create(profile=bob, role="agent", name="old")
    login("bob").post(f"/p/bob/admin/tokens/{token.pk}/revoke/")
    token.refresh_from_db()
    assert token.revoked_at is not None and token_authenticate(plain=plain) is None
    assert AuditEvent.objects.filter(profile=bob, action="token_revoke", target_id=token.prefix).exists()


def test_token_of_another_profile_cannot_be_revoked(login, alice, bob):
    from apps.accounts.services import token_create

    token, _ = token_create(profile=alice, role="agent")
    assert login("bob").post(f"/p/bob/admin/tokens/{token.pk}/revoke/").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def test_non_admin_cannot_manage_tokens_or_people(login, alice):
    from apps.accounts.services import token_create

    token, _ = token_create(profile=alice, role="agent")
    client = login("alice")
    assert client.post("/p/alice/admin/tokens/create/", {"role": "admin"}).status_code == 404
    assert client.post(f"/p/alice/admin/tokens/{token.pk}/revoke/").status_code == 404
    assert client.post("/p/alice/admin/access/", {"username": "charlie"}).status_code == 404
    assert ApiToken.objects.filter(profile=alice).count() == 1
    token.refresh_from_db()
    assert token.revoked_at is None


def test_grant_and_remove_access(login, people, bob):
    client = login("bob")
    client.post("/p/bob/admin/access/", {"username": "charlie", "is_admin": "on"})
    access = ProfileAccess.objects.get(user=people["charlie"], profile=bob)
    assert access.is_admin is True
    assert login("charlie").get("/p/bob/admin/").status_code == 200
    client.post(f"/p/bob/admin/access/{access.pk}/revoke/")
    assert not ProfileAccess.objects.filter(user=people["charlie"], profile=bob).exists()
    assert login("charlie").get("/p/bob/").status_code == 404
    actions = list(AuditEvent.objects.filter(profile=bob, target_type="person").values_list("action", flat=True))
    assert sorted(actions) == ["access_grant", "access_revoke"]


def test_grant_to_unknown_person_and_self_removal_are_refused(login, people, bob):
    client = login("bob")
    assert "No person named" in client.post("/p/bob/admin/access/", {"username": "nobody"}, follow=True).content.decode()
    own = ProfileAccess.objects.get(user=people["bob"], profile=bob)
    assert "cannot remove your own access" in client.post(f"/p/bob/admin/access/{own.pk}/revoke/", follow=True).content.decode()
    assert ProfileAccess.objects.filter(pk=own.pk).exists()


def test_audit_log_filters(login, bob):
    client = login("bob")
    client.post("/p/bob/admin/tokens/create/", {"role": "agent", "name": "a"})
    client.post("/p/bob/admin/access/", {"username": "charlie"})
    body = client.get("/p/bob/admin/audit/").content.decode()
    assert "2 events" in body
    body = client.get("/p/bob/admin/audit/?action=access_grant").content.decode()
    assert "1 event" in body and "access_grant" in body
    assert "0 events" in client.get("/p/bob/admin/audit/?actor=someone-else").content.decode()
    partial = client.get("/p/bob/admin/audit/?action=token_create", HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in partial and "1 event" in partial


def test_audit_log_shows_only_this_profile(login, alice, bob, make_record):
    from apps.records.services import record_set_task_state

    task = make_record(alice, "A task of alice's profile", type="work_task")
    record_set_task_state(profile=alice, ids=[task.record_id], state="done", actor="x")
    assert "0 events" in login("bob").get("/p/bob/admin/audit/").content.decode()


def test_known_projects_editor(login, bob):
    client = login("bob")
    client.post("/p/bob/admin/projects/", {"roots": "/srv/app\n\n/home/bob/work/x\n"})
    bob.refresh_from_db()
    assert bob.known_projects == ["/srv/app", "/home/bob/work/x"]
    assert "/home/bob/work/x" in client.get("/p/bob/admin/").content.decode()
    assert AuditEvent.objects.filter(profile=bob, action="known_projects_set", actor="user:bob").exists()


def test_known_projects_editor_refuses_relative_paths_and_keeps_the_old_list(login, bob):
    client = login("bob")
    client.post("/p/bob/admin/projects/", {"roots": "/srv/app"})
    body = client.post("/p/bob/admin/projects/", {"roots": "/srv/app\nrelative/path"}).content.decode()
    assert "Please check the form:" in body and "relative/path" in body
    bob.refresh_from_db()
    assert bob.known_projects == ["/srv/app"]


def test_known_projects_editor_is_admin_only(login, alice):
    assert login("alice").post("/p/alice/admin/projects/", {"roots": "/srv/x"}).status_code == 404
    alice.refresh_from_db()
    assert alice.known_projects == []


def test_admin_page_title_is_plain_text(login, bob):
    body = login("bob").get("/p/bob/admin/").content.decode()
    assert "<title>Admin · bob · memoryweb</title>" in body
