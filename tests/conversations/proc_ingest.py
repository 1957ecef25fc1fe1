"""A separate OS process sending L0 batches, for the concurrent-ingest test.

Run as `python -m tests.conversations.proc_ingest <command> ...` with DATABASE_URL and
MEMORYWEB_DATA_DIR set; prints one JSON line with its result.
"""

from __future__ import annotations

import json
import os
import sys
import time


def _setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
    import django

    django.setup()


def batch(size: int) -> list[dict]:
    return [
        {"id": f"msg-{i}", "role": "user" if i % 2 else "assistant", "content": f"line {i} of the deploy checklist we went through",
         "timestamp": 1_767_000_000_000 + i, "sessionKey": "deploy-review", "cwd": "/srv/app"}
        for i in range(size)
    ]


def cmd_setup() -> dict:
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    from apps.accounts.services import profile_create

    profile_create(slug="conc")
    return {"ok": True}


def cmd_send(size: str, rounds: str, start_at: str) -> dict:
    from apps.accounts.models import Profile
    from apps.conversations.ingest import l0_ingest

    profile = Profile.objects.get(slug="conc")
    rows = batch(int(size))
    while time.time() < float(start_at):  # both senders start together
        time.sleep(0.001)
    appended = duplicates = 0
    for _ in range(int(rounds)):
        answer = l0_ingest(profile=profile, actor=f"proc:{os.getpid()}", body={"messages": rows})
        appended += answer["appended"]
        duplicates += len(answer["duplicates"])
    return {"appended": appended, "duplicates": duplicates}


if __name__ == "__main__":
    _setup_django()
    command, *args = sys.argv[1:]
    print(json.dumps(globals()[f"cmd_{command}"](*args)))
