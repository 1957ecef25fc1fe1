"""A separate OS process for the concurrency and lock tests.

Run as `python -m tests.records.proc_worker <command> ...` with DATABASE_URL and
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


def _ctx(role: str = "worker"):
    from apps.accounts.models import Profile
    from apps.tools.registry import ToolContext

    return ToolContext(profile=Profile.objects.get(slug="conc"), role=role, actor=f"proc:{os.getpid()}")


def cmd_setup() -> dict:
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    from apps.accounts.services import profile_create
    from apps.conversations.services import l0_append

    profile = profile_create(slug="conc")
    rows = [{"id": f"m{i}", "role": "user", "content": f"message {i} about the shared project", "timestamp": 1_767_000_000_000 + i,
             "sessionKey": "s1", "cwd": "/w"} for i in range(1, 4)]
    l0_append(profile=profile, rows=rows)
    return {"ok": True}


def cmd_commit(worker: str, count: str) -> dict:
    from apps.tools.dispatch import call_tool
    from apps.tools.errors import Locked

    stored, locked_retries = [], 0
    for i in range(int(count)):
        payload = {
            "records": [{"content": f"worker {worker} memory number {i} about the project", "type": "work_fact",
                         "source_message_ids": ["m1"], "metadata": {"scope": "global", "project": ""},
                         "new_scene_name": f"proj｜topic {i % 3}", "new_scene_reason": "a topic"}],
            "cursor": json.dumps({"version": 2, "files": {f"w{worker}.jsonl": (i + 1) * 10, "shared.jsonl": int(worker) * 1000 + i}}),
        }
        while True:
            try:
                result = call_tool("l1_commit", payload, _ctx())
                break
            except Locked:
                locked_retries += 1
        stored.extend(result["stored"])
    return {"stored": stored, "lockedRetries": locked_retries}


def cmd_hold(seconds: str) -> dict:
    from apps.accounts.locks import profile_write_lock

    ctx = _ctx()
    with profile_write_lock(ctx.profile):
        print(json.dumps({"held": True}), flush=True)
        time.sleep(float(seconds))
    return {"released": True}


def cmd_add_task() -> dict:
    from apps.tools.dispatch import call_tool

    result = call_tool("l1_commit", {"source": "main-agent", "records": [{"content": "a task that will be closed", "type": "work_task"}]}, _ctx("agent"))
    return {"id": result["stored"][0]}


def cmd_set_lock_timeout(seconds: str) -> dict:
    from apps.accounts.models import Profile

    Profile.objects.filter(slug="conc").update(settings={"l1.writeLockTimeoutSeconds": int(seconds)})
    return {"ok": True}


def cmd_task_state(record_id: str) -> dict:
    from apps.tools.dispatch import call_tool
    from apps.tools.errors import ToolError

    started = time.monotonic()
    try:
        result = call_tool("l1_task_state", {"ids": [record_id], "state": "done"}, _ctx("agent"))
        return {"result": result, "seconds": time.monotonic() - started}
    except ToolError as exc:
        return {"error": exc.code, "status": exc.status, "seconds": time.monotonic() - started}


def cmd_report() -> dict:
    from apps.accounts.models import Profile
    from apps.conversations.cursors import cursor_get
    from apps.records.models import L1Change, L1Record
    from apps.scenes.models import SceneEntry

    profile = Profile.objects.get(slug="conc")
    return {
        "records": sorted(L1Record.objects.filter(profile=profile).values_list("record_id", flat=True)),
        "contents": sorted(L1Record.objects.filter(profile=profile).values_list("content", flat=True)),
        "changes": L1Change.objects.filter(profile=profile).count(),
        "cursor": cursor_get(profile=profile, kind="l1"),
        "scenes": {s.name: [s.scene_id, s.use_count] for s in SceneEntry.objects.filter(profile=profile)},
    }


def main(argv: list[str]) -> None:
    _setup_django()
    command, args = argv[0], argv[1:]
    result = globals()[f"cmd_{command}"](*args)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
