"""`/metrics`: who may scrape, and that each family moves when its event happens."""

from __future__ import annotations

import re

from django.test import Client

from apps.accounts.services import profile_create, token_create


def _value(text: str, name: str, **labels: str) -> float:
    """The sample `name{labels}` in the exposition text (0 when absent)."""
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        m = re.match(r"^([a-zA-Z_:][\w:]*)(\{(.*)\})? (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        if all(got.get(k) == v for k, v in labels.items()):
            return float(m.group(4))
    return 0.0


def _scrape(token: str) -> str:
    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    return response.content.decode()


def test_metrics_need_an_admin_token_or_the_scrape_token(agent_api, admin_api, settings):
    anonymous = Client().get("/metrics")
    assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "unauthorized"
    agent = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {agent_api.token}")
    assert agent.status_code == 403 and agent.json()["error"]["code"] == "forbidden"
    assert "memoryweb_http_requests_total" in _scrape(admin_api.token)
    settings.METRICS_TOKEN = "scrape-secret-0123456789"
    assert "memoryweb_jobs_queued" in _scrape("scrape-secret-0123456789")
    wrong = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret-wrong")
    assert wrong.status_code == 401


def test_requests_are_counted_by_tool_and_status(agent_api, admin_api):
    before = _scrape(admin_api.token)
    agent_api.ok("whoami")
    agent_api.ok("whoami")
    status, _ = agent_api.call("no_such_tool")
    assert status == 404
    agent_api.call("l1_fix", recordId="l1_missing")  # invalid params: 400
    Client().get("/static/vendor/htmx.min.js")
    Client().get("/no/such/path")
    after = _scrape(admin_api.token)
    delta = lambda name, **lb: _value(after, name, **lb) - _value(before, name, **lb)
    assert delta("memoryweb_http_requests_total", endpoint="whoami", status="200") == 2
    assert delta("memoryweb_http_request_duration_seconds_count", endpoint="whoami", status="200") == 2
    assert delta("memoryweb_http_requests_total", endpoint="(unknown tool)", status="404") == 1
    assert delta("memoryweb_http_requests_total", endpoint="l1_fix", status="400") == 1
    assert delta("memoryweb_http_requests_total", endpoint="static", status="200") == 1
    assert delta("memoryweb_http_requests_total", endpoint="(unmatched)", status="404") == 1


def test_recall_latency_and_outcome_and_embedding_time(agent_api, admin_api):
    before = _scrape(admin_api.token)
    agent_api.ok("l1_commit", source="main-agent", records=[
        {"content": "Deployments of the billing service go through the blue-green script.", "type": "work_method"}])
    body = agent_api.ok("recall_l1_records", query="how do we deploy billing?", session="s1", turn="t1")
    after = _scrape(admin_api.token)
    delta = lambda name, **lb: _value(after, name, **lb) - _value(before, name, **lb)
    outcome = "answered" if body["records"] else ("abstained" if body.get("noRelevantMemory") else "empty")
    assert delta("memoryweb_recalls_total", outcome=outcome) == 1
    assert delta("memoryweb_recall_duration_seconds_count") == 1
    assert delta("memoryweb_embedding_duration_seconds_count", kind="query") >= 1
    assert delta("memoryweb_embedded_texts_total", kind="passage") >= 1


def test_abstention_is_counted_when_recall_says_no_relevant_memory(agent_api, admin_api, monkeypatch):
    from apps.search import services

    monkeypatch.setattr(services, "recall_records", lambda **kw: {"records": [], "noRelevantMemory": True})
    before = _value(_scrape(admin_api.token), "memoryweb_recalls_total", outcome="abstained")
    agent_api.ok("recall_l1_records", query="what is my cat called?")
    assert _value(_scrape(admin_api.token), "memoryweb_recalls_total", outcome="abstained") == before + 1


def test_outbox_and_queue_state_come_from_the_database(alice, admin_api):
    from datetime import timedelta

    from django.utils import timezone

    from apps.pipeline.models import JobRun
    from apps.search.models import IndexOp

    IndexOp.objects.create(profile=alice, record_id="l1_a", op="upsert", attempts=2, last_error="index down")
    IndexOp.objects.create(profile=alice, record_id="l1_b", op="upsert")
    run = JobRun.objects.create(profile=alice, kind="l1_extract", driver="rules", trigger_reason="test")
    JobRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(seconds=120))
    text = _scrape(admin_api.token)
    assert _value(text, "memoryweb_index_outbox_pending") == 2
    assert _value(text, "memoryweb_index_outbox_failing") == 1
    assert _value(text, "memoryweb_jobs_queued") == 1
    assert 119 <= _value(text, "memoryweb_jobs_oldest_queued_seconds") < 200
    assert _value(text, "memoryweb_state_up") == 1


def test_job_runs_are_counted_by_kind_and_status_with_durations(alice, admin_api):
    from apps.pipeline.jobs import execute_run
    from apps.pipeline.models import JobRun

    before = _scrape(admin_api.token)
    run = JobRun.objects.create(profile=alice, kind="l2_organize", driver="rules", trigger_reason="test")
    done = execute_run(run_id=run.pk)
    after = _scrape(admin_api.token)
    labels = {"kind": "l2_organize", "status": done.status}
    assert _value(after, "memoryweb_job_runs_total", **labels) - _value(before, "memoryweb_job_runs_total", **labels) == 1
    assert (_value(after, "memoryweb_job_duration_seconds_count", **labels)
            - _value(before, "memoryweb_job_duration_seconds_count", **labels)) == 1


def test_a_token_of_another_profile_with_admin_role_may_scrape(db):
    # Metrics carry no profile label: nothing of one profile's data is in them.
    _, plain = token_create(profile=profile_create(slug="ops"), role="admin")
    text = _scrape(plain)
    assert "profile=" not in text


def test_metrics_answer_get_only(admin_api):
    response = Client().post("/metrics", HTTP_AUTHORIZATION=f"Bearer {admin_api.token}")
    assert response.status_code == 405
