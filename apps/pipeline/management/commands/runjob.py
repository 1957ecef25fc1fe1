"""`manage.py runjob <kind> <profile> [--sync]`: start one job run by hand.

With `--sync` a run that is already queued (say the ingest hook queued it while only the
web process runs, so no worker consumes it) is taken over and run here: claiming it is
the same conditional update a worker does, so it runs once whoever wins. A run that is
already running is left alone. Without `--sync` the answer names the queued run and how
to get it consumed.
"""

from __future__ import annotations

import json
import os

from django.core.management.base import BaseCommand, CommandError

from apps.accounts.models import Profile
from apps.pipeline.models import KINDS, STATUS_QUEUED

START_A_WORKER = (
    "start a worker (`manage.py serve` runs the web server, a worker and beat; or "
    "`celery -A memoryweb worker -Q quick,embed`), or run it here with --sync"
)


class Command(BaseCommand):
    help = "Queue (or with --sync, run here and wait for) one run of a job for a profile."

    def add_arguments(self, parser):
        parser.add_argument("kind", choices=KINDS)
        parser.add_argument("profile", help="profile slug")
        parser.add_argument("--sync", action="store_true", help="run in this process and print the finished run")
        parser.add_argument("--reason", default="", help="shown as the run's trigger reason")

    def handle(self, *args, kind: str, profile: str, sync: bool, reason: str, **options):
        from apps.pipeline import jobs, scheduling

        target = Profile.objects.filter(slug=profile).first()
        if target is None:
            raise CommandError(f"no profile {profile!r}")
        # A shell process must not open embedded Qdrant beside the web process.
        os.environ.setdefault("MEMORYWEB_PROCESS_ROLE", "cli")
        run = scheduling.request_run(
            profile=target, kind=kind, reason=reason or "manual: manage.py runjob", requested_by="cli", send=not sync
        )
        if run is None:
            active = scheduling.active_run(profile=target, kind=kind)
            if active is None:
                raise CommandError(f"{kind} for {profile} was active a moment ago and has just finished; run the command again")
            if active.status != STATUS_QUEUED:
                where = f" by {active.worker}" if active.worker else ""
                raise CommandError(f"{kind} for {profile} is already {active.status}{where} (run #{active.pk}); wait for it to finish")
            if not sync:
                raise CommandError(f"{kind} for {profile} is already queued (run #{active.pk}) and waits for a worker: {START_A_WORKER}")
            self.stderr.write(f"taking over queued run #{active.pk} ({active.trigger_reason})")
            run = active
        if not sync:
            run.refresh_from_db()
            note = f" (not sent: {run.enqueue_error}; the sweep re-sends it, or {START_A_WORKER})" if run.enqueue_error else ""
            self.stdout.write(f"queued {kind} run #{run.pk} for {profile}{note}")
            return
        finished = jobs.execute_run(run_id=run.pk)
        if finished is None:
            raise CommandError(f"run #{run.pk} was taken by a worker before this process could start it")
        self.stdout.write(json.dumps(finished.as_dict(), indent=2, ensure_ascii=False))
        if finished.status != "succeeded":
            raise CommandError(f"run #{run.pk} failed: {finished.error}")
