"""Who sees what: login required, profiles only through ProfileAccess, admin pages only
for admins — everything else is a 404 that does not reveal the profile exists."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.accounts.models import ProfileAccess

PROFILE_PAGES = ["", "records/", "conversations/", "scenes/", "persona/", "hits/", "jobs/", "skills/", "health/"]


@pytest.mark.parametrize("suffix", PROFILE_PAGES)
def test_anonymous_is_sent_to_login(people, suffix):
    response = Client().get(f"/p/alice/{suffix}")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


@pytest.mark.parametrize("suffix", PROFILE_PAGES)
def test_person_without_access_gets_404(login, suffix):
    assert login("charlie").get(f"/p/alice/{suffix}").status_code == 404


@pytest.mark.parametrize("suffix", PROFILE_PAGES)
def test_person_with_access_sees_every_page(login, suffix):
    response = login("alice").get(f"/p/alice/{suffix}")
    assert response.status_code == 200
    title = response.content.decode().split("<title>")[1].split("</title>")[0]
    assert "<" not in title and title.endswith("· memoryweb")


def test_unknown_profile_and_foreign_profile_answer_alike(login):
    client = login("alice")
    assert client.get("/p/bob/").status_code == 404
    assert client.get("/p/nobody/").status_code == 404


def test_record_of_another_profile_is_404_even_with_its_id(login, bob, make_record):
    foreign = make_record(bob, "bob's secret fact about the deploy")
    client = login("alice")
    assert client.get(f"/p/alice/records/{foreign.record_id}/").status_code == 404
    assert client.get(f"/p/bob/records/{foreign.record_id}/").status_code == 404


def test_switcher_lists_only_granted_profiles(login, make_profile):
    make_profile("carol-private")
    body = login("alice").get("/p/alice/").content.decode()
    assert "/p/alice/" in body
    assert "/p/bob/" not in body
    assert "carol-private" not in body


def test_superuser_sees_every_profile(person, alice, bob):
    root = person("root", superuser=True)
    client = Client()
    client.force_login(root)
    assert client.get("/p/bob/records/").status_code == 200
    body = client.get("/p/alice/").content.decode()
    assert "/p/bob/" in body and "Admin" in body


def test_home_redirects_to_first_profile_or_explains(login, people):
    assert login("alice").get("/")["Location"] == "/p/alice/"
    response = login("charlie").get("/")
    assert response.status_code == 200
    assert "No profile yet" in response.content.decode()


def test_admin_pages_are_404_for_non_admins(login):
    client = login("alice")
    for url in ["/p/alice/admin/", "/p/alice/admin/audit/"]:
        assert client.get(url).status_code == 404
    assert client.post("/p/alice/admin/tokens/create/", {"role": "admin"}).status_code == 404
    assert "Admin</a>" not in client.get("/p/alice/").content.decode()


def test_admin_of_one_profile_is_not_admin_of_another(login):
    client = login("bob")
    assert client.get("/p/bob/admin/").status_code == 200
    assert client.get("/p/alice/admin/").status_code == 404


def test_login_page_logs_in_and_out(people):
    client = Client(enforce_csrf_checks=True)
    page = client.get("/login/")
    assert page.status_code == 200
    token = page.cookies["csrftoken"].value
    response = client.post("/login/", {"username": "alice", "password": "pw-alice-123", "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert client.get("/p/alice/").status_code == 200
    token = client.cookies["csrftoken"].value
    assert client.post("/logout/", {"csrfmiddlewaretoken": token}).status_code == 302
    assert client.get("/p/alice/").status_code == 302


def test_wrong_password_is_refused(people):
    response = Client().post("/login/", {"username": "alice", "password": "wrong"})
    assert response.status_code == 200
    assert "did not match" in response.content.decode()


def test_changes_need_a_csrf_token(people, alice, make_record):
    record = make_record(alice, "a fact that needs a csrf protected fix")
    client = Client(enforce_csrf_checks=True)
    client.force_login(people["alice"])
    response = client.post(f"/p/alice/records/{record.record_id}/fix/", {"action": "tombstone", "evidence": "x" * 40})
    assert response.status_code == 403
    record.refresh_from_db()
    assert record.deleted is False


def test_body_carries_the_csrf_header_for_htmx(login):
    body = login("alice").get("/p/alice/").content.decode()
    assert "hx-headers='{\"X-CSRFToken\": \"" in body
    assert "/static/vendor/htmx.min.js" in body
    assert "https://" not in body.split("<main")[0]  # no CDN in the head


def test_revoked_access_takes_effect_immediately(login, people, alice):
    client = login("alice")
    assert client.get("/p/alice/").status_code == 200
    ProfileAccess.objects.filter(user=people["alice"], profile=alice).delete()
    assert client.get("/p/alice/").status_code == 404


def test_switcher_keeps_the_section(login):
    body = login("bob").get("/p/alice/records/").content.decode()
    assert 'href="/p/bob/records/"' in body
    body = login("bob").get("/p/bob/admin/").content.decode()
    assert 'href="/p/alice/"' in body  # admin of bob is not admin of alice: the switcher goes to the overview


def test_404_page_uses_the_dashboard_layout(login):
    response = login("charlie").get("/p/alice/records/")
    assert response.status_code == 404
    body = response.content.decode()
    assert "There is nothing here, or you have no access to it." in body and "alice" not in body.split("<main")[1]


def test_css_and_vendored_htmx_are_served_without_collectstatic():
    client = Client()
    for path in ("/static/dashboard/app.css", "/static/vendor/htmx.min.js"):
        response = client.get(path)
        assert response.status_code == 200, path
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert len(body) > 1000
