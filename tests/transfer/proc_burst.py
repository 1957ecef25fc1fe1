"""A separate OS process for the backup test: `python -m tests.transfer.proc_burst <cmd>`
with DATABASE_URL and MEMORYWEB_DATA_DIR set; prints one JSON line."""

from __future__ import annotations

import json
import os
import sys

NOTES = [
    "the deploy script lives in ops/deploy.sh and needs the VPN",
    "staging certificates renew on the first Monday of the month",
    "the mobile app reads feature flags from /api/flags",
    "payments retries are capped at five attempts",
    "search reindex runs nightly at 03:30 UTC",
]


def _ctx():
    from apps.accounts.models import Profile
    from apps.tools.registry import ToolContext

    return ToolContext(profile=Profile.objects.get(slug="burst"), role="agent", actor=f"proc:{os.getpid()}")


def cmd_setup() -> dict:
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    from apps.accounts.services import profile_create

    profile_create(slug="burst")
    return {"ok": True}


def cmd_burst(count: str, ack_file: str) -> dict:
    """Commit records one by one (main-agent l1_commit) and ingest one L0 row per commit;
    write each acknowledged id to `ack_file` only after the call returned."""
    from apps.conversations.services import l0_append
    from apps.tools.dispatch import call_tool

    with open(ack_file, "a", encoding="utf-8") as acks:
        for i in range(int(count)):
            note = f"{NOTES[i % len(NOTES)]} (note {i})"
            result = call_tool("l1_commit", {"source": "main-agent", "records": [{"content": note, "type": "work_fact"}]}, _ctx())
            row = l0_append(profile=_ctx().profile, rows=[{"id": f"b{i}", "role": "user", "content": note, "timestamp": 1764500000000 + i,
                                                          "sessionKey": "burst", "cwd": "/srv"}])
            acks.write(json.dumps({"record": result["stored"][0], "l0": row[0]["messageRef"]}) + "\n")
            acks.flush()
            os.fsync(acks.fileno())
    return {"ok": True}


def cmd_report() -> dict:
    from apps.accounts.models import Profile
    from apps.accounts.paths import profile_dir
    from apps.records.models import L1Change, L1Record

    profile = Profile.objects.get(slug="burst")
    records = sorted(L1Record.objects.filter(profile=profile).values_list("record_id", flat=True))
    without_history = L1Record.objects.filter(profile=profile, changes__isnull=True).count()
    l0_ids = []
    for shard in sorted((profile_dir(profile) / "l0").glob("*.jsonl")):
        l0_ids += [json.loads(line)["id"] for line in shard.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {"records": records, "withoutHistory": without_history, "changes": L1Change.objects.filter(profile=profile).count(),
            "l0": l0_ids}


def main(argv: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
    import django

    django.setup()
    print(json.dumps(globals()[f"cmd_{argv[0]}"](*argv[1:])), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
