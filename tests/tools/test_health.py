"""`GET /api/v1/health`: the status for anyone, the checks only for an admin token."""

from __future__ import annotations

from django.test import Client


def test_anonymous_health_is_the_status_alone(db, monkeypatch):
    from memoryweb.celery import app

    # A broker that is down has an error string naming its host: it must not leak.
    monkeypatch.setattr(app.conf, "broker_url", "redis://127.0.0.1:9/0")
    response = Client().get("/api/v1/health")
    assert response.status_code == 200
    assert response.json() == {"status": "degraded"}
    assert b"127.0.0.1" not in response.content


def test_agent_and_worker_tokens_see_the_status_alone(agent_api, worker_api):
    for api in (agent_api, worker_api):
        status, body = api.get("/api/v1/health")
        assert status == 200 and set(body) == {"status"}


def test_admin_token_sees_every_check(admin_api):
    status, body = admin_api.get("/api/v1/health")
    assert status == 200
    assert {"database", "broker", "jobs", "index", "embedding_model"} <= set(body["checks"])


def test_a_bad_token_on_health_is_refused_not_ignored(db):
    response = Client().get("/api/v1/health", HTTP_AUTHORIZATION="Bearer mw_not-a-token")
    assert response.status_code == 401 and response.json()["error"]["code"] == "unauthorized"


def test_health_says_down_with_503_when_the_database_is_gone(db, monkeypatch):
    from apps.tools import views

    class Gone:
        vendor = "sqlite"

        def cursor(self):
            raise RuntimeError("database file /secret/path is gone")

    monkeypatch.setattr(views, "connection", Gone())
    response = Client().get("/api/v1/health")
    assert response.status_code == 503
    assert response.json() == {"status": "down"}
