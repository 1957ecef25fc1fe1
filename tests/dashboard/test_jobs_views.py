"""Jobs: the run list, a run's page, live progress polling that stops when the run ends
(HTTP 286), and manual triggers that respect the one-run-per-job guard."""

from __future__ import annotations

from django.utils import timezone

from apps.accounts.models import AuditEvent
from apps.pipeline.models import JobRun


def _run(profile, **fields):
    defaults = {"kind": "l1_extract", "driver": "rules", "trigger_reason": "test", "status": "running", "started_at": timezone.now()}
    defaults.update(fields)
    return JobRun.objects.create(profile=profile, **defaults)


def test_list_shows_runs_with_counts_and_duration(login, alice):
    start = timezone.now()
    _run(alice, status="succeeded", counts={"recordsStored": 4}, finished_at=start + timezone.timedelta(seconds=3), started_at=start)
    body = login("alice").get("/p/alice/jobs/").content.decode()
    # Counts in words, not key=value.
    assert "records stored <strong>4</strong>" in body and "recordsStored=4" not in body
    assert "3.0 s" in body and "succeeded" in body


def test_running_job_polls_and_finished_job_stops_polling(login, alice):
    run = _run(alice, progress={"step": "reading", "done": 2, "total": 5})
    client = login("alice")
    page = client.get(f"/p/alice/jobs/{run.pk}/").content.decode()
    assert 'hx-trigger="every 1s"' in page and f"/p/alice/jobs/{run.pk}/progress/" in page
    partial = client.get(f"/p/alice/jobs/{run.pk}/progress/", HTTP_HX_REQUEST="true")
    assert partial.status_code == 200 and "reading" in partial.content.decode() and "(2/5)" in partial.content.decode()
    JobRun.objects.filter(pk=run.pk).update(status="succeeded", finished_at=timezone.now())
    done = client.get(f"/p/alice/jobs/{run.pk}/progress/", HTTP_HX_REQUEST="true")
    assert done.status_code == 286 and "succeeded" in done.content.decode()
    assert 'hx-trigger="every 1s"' not in client.get(f"/p/alice/jobs/{run.pk}/").content.decode()


def test_progress_without_htmx_is_a_plain_page(login, alice):
    run = _run(alice, status="failed", error="boom", finished_at=timezone.now())
    response = login("alice").get(f"/p/alice/jobs/{run.pk}/progress/")
    assert response.status_code == 200 and "<html" in response.content.decode()


def test_trigger_queues_a_run_and_audits_it(login, alice, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    response = login("alice").post("/p/alice/jobs/trigger/", {"kind": "l2_organize"})
    run = JobRun.objects.get(profile=alice, kind="l2_organize")
    assert response["Location"] == f"/p/alice/jobs/{run.pk}/"
    assert run.requested_by == "user:alice" and "manual" in run.trigger_reason
    assert AuditEvent.objects.filter(profile=alice, action="job_trigger", target_id=str(run.pk)).exists()


def test_trigger_while_active_goes_to_the_active_run(login, alice):
    active = _run(alice, kind="l3_persona")
    response = login("alice").post("/p/alice/jobs/trigger/", {"kind": "l3_persona"})
    assert response["Location"] == f"/p/alice/jobs/{active.pk}/"
    assert JobRun.objects.filter(profile=alice, kind="l3_persona").count() == 1


def test_trigger_rejects_unknown_kind(login, alice):
    body = login("alice").post("/p/alice/jobs/trigger/", {"kind": "rm_rf"}, follow=True).content.decode()
    assert "Unknown job" in body and not JobRun.objects.exists()


def test_run_of_another_profile_is_404(login, bob):
    run = _run(bob)
    assert login("alice").get(f"/p/alice/jobs/{run.pk}/").status_code == 404
    assert login("alice").get(f"/p/alice/jobs/{run.pk}/progress/").status_code == 404
    assert login("charlie").post("/p/alice/jobs/trigger/", {"kind": "l1_extract"}).status_code == 404
