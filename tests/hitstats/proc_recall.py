"""A separate OS process that answers recalls, for the crash test of the hit statistics.

Run as `python -m tests.hitstats.proc_recall <command> ...` with DATABASE_URL and
MEMORYWEB_DATA_DIR set (the embedded index lives in the data dir). `recall` prints one
JSON line per answered call, as a client would receive it; the other commands print one
JSON line with their result.
"""

from __future__ import annotations

import json
import os
import sys
import time

MEMORIES = [
    "The staging cluster runs on four nodes in the Frankfurt region.",
    "Deploys to production need the release token from the team vault.",
    "The nightly backup of the billing database starts at 02:00 UTC.",
    "测试集群的监控告警发送到运维值班群。",
    "The search service reads its settings from /etc/search/main.toml.",
    "前端构建使用 Node 22，锁文件必须提交。",
]
QUERIES = ["how many nodes does staging have", "release token for deploys", "when does the billing backup run",
           "监控告警发到哪里", "where are the search service settings", "前端构建用哪个 Node 版本"]


def _setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
    import django

    django.setup()


def _profile():
    from apps.accounts.models import Profile

    return Profile.objects.get(slug="crash")


def cmd_setup() -> dict:
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    from apps.accounts.services import profile_create
    from apps.tools.dispatch import call_tool
    from apps.tools.registry import ToolContext

    profile = profile_create(slug="crash")
    profile.settings = {"recall.minRelevance": 0.0}  # every recall answers: each answer gives hits
    profile.save()
    ctx = ToolContext(profile=profile, role="agent", actor="proc", session_key="setup")
    result = call_tool("l1_commit", {"source": "main-agent", "records": [{"content": c, "type": "work_fact"} for c in MEMORIES]}, ctx)
    from apps.search import index

    index.close_clients()
    return {"stored": result["stored"]}


def cmd_recall(count: str, then: str) -> None:
    """Answer `count` recalls, printing each answer; then hold still ("hold", until killed)
    or keep answering ("stream"), so the kill lands after or during a recall."""
    from apps.tools.dispatch import call_tool
    from apps.tools.registry import ToolContext

    profile = _profile()
    n = 0
    while True:
        ctx = ToolContext(profile=profile, role="agent", actor="proc", session_key="s", turn=f"t{n}")
        body = call_tool("recall_l1_records", {"query": QUERIES[n % len(QUERIES)], "topK": 3}, ctx)
        print(json.dumps({"call": n, "ids": [r["recordId"] for r in body["records"]]}), flush=True)
        n += 1
        if n == int(count) and then == "hold":
            print(json.dumps({"done": True}), flush=True)
            while True:
                time.sleep(60)


def cmd_count() -> dict:
    from apps.hitstats.models import RecallEvent, RecallHit, RecordHits
    from apps.hitstats.services import hit_stats_path

    profile = _profile()
    path = hit_stats_path(profile)
    file = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    events = list(RecallEvent.objects.filter(profile=profile).order_by("id").values_list("results", flat=True))
    return {
        "events": [[r["recordId"] for r in results] for results in events],
        "hits": dict(RecordHits.objects.filter(profile=profile).values_list("record_id", "hits")),
        "recallHits": RecallHit.objects.filter(profile=profile).count(),
        "file": {rid: stats["hits"] for rid, stats in file["records"].items()} if file else None,
    }


def main(argv: list[str]) -> None:
    _setup_django()
    command, args = argv[0], argv[1:]
    result = globals()[f"cmd_{command}"](*args)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
