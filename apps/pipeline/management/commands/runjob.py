"""`manage.py runjob <kind> <profile> [--sync]`: start one job run by hand."""

from __future__ import annotations

import json
import os

from django.core.management.base import BaseCommand, CommandError

from apps.accounts.models import Profile
from apps.pipeline.models import KINDS


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
            raise CommandError(f"{kind} for {profile} is already {active.status if active else 'active'} (run #{active.pk if active else '?'})")
        if not sync:
            run.refresh_from_db()
            note = f" (not sent: {run.enqueue_error}; the sweep re-sends it)" if run.enqueue_error else ""
            self.stdout.write(f"queued {kind} run #{run.pk} for {profile}{note}")
            return
        finished = jobs.execute_run(run_id=run.pk)
        if finished is None:
            raise CommandError(f"run #{run.pk} was taken by a worker before this process could start it")
        self.stdout.write(json.dumps(finished.as_dict(), indent=2, ensure_ascii=False))
        if finished.status != "succeeded":
            raise CommandError(f"run #{run.pk} failed: {finished.error}")
