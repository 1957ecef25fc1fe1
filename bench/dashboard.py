"""Dashboard latency benchmark.

Fills one profile with 100,000 L1 records (bulk_create; every record has its history
entry, a tenth have a second change, a third have hit statistics and recall log rows),
then times every list page and the record page with Django's test client and prints
p50/p95 per page. Target: p50 < 150 ms.

    .venv/bin/python bench/dashboard.py [--records 100000] [--runs 20]

It uses a fresh data dir (SQLite) unless DATABASE_URL is set; with PostgreSQL give it a
database of its own (it creates and drops profile `bench`).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
if "MEMORYWEB_DATA_DIR" not in os.environ:
    os.environ["MEMORYWEB_DATA_DIR"] = tempfile.mkdtemp(prefix="memoryweb-bench-")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")

import django

django.setup()

import logging

# One log line per request (and per login) would bury the figures this script prints.
for _name in ("memoryweb.request", "axes"):
    logging.getLogger(_name).setLevel(logging.WARNING)

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection, transaction
from django.test import Client
from django.test.utils import setup_test_environment
from django.utils import timezone

WORDS_EN = ["deploy", "build", "test", "port", "service", "docker", "compose", "release", "migration", "django", "index", "query", "cache", "python", "schema", "token", "profile", "scene", "record", "memory", "recall", "job", "worker", "queue", "server", "config"]
WORDS_ZH = ["部署", "构建", "测试", "端口", "服务", "发布", "迁移", "索引", "查询", "缓存", "用户", "偏好", "项目", "记忆", "任务"]
TYPES = ("work_fact", "work_task", "work_method", "work_artifact")


def _content(rng: random.Random, i: int) -> str:
    if i % 3 == 0:
        return "".join(rng.choice(WORDS_ZH) for _ in range(rng.randint(6, 14))) + f"（第{i}条）"
    return " ".join(rng.choice(WORDS_EN) for _ in range(rng.randint(6, 16))) + f" #{i}"


def fill(n: int) -> tuple[object, list[str]]:
    from apps.accounts.models import Profile, ProfileAccess
    from apps.accounts.services import profile_create
    from apps.hitstats.models import RecallEvent, RecallHit, RecordHits
    from apps.records.models import L1Change, L1Record
    from apps.scenes.models import SceneEntry

    Profile.objects.filter(slug="bench").delete()
    profile = profile_create(slug="bench", mode="code")
    User = get_user_model()
    user = User.objects.filter(username="bench").first() or User.objects.create_user(username="bench", password="bench-password")
    ProfileAccess.objects.create(user=user, profile=profile, is_admin=True)
    scenes = [SceneEntry.objects.create(profile=profile, scene_id=f"sc{k:04d}", name=f"bench｜topic {k}") for k in range(1, 41)]
    rng = random.Random(7)
    now = timezone.now()
    ids: list[str] = []
    started = time.perf_counter()
    batch = 5000
    for start in range(0, n, batch):
        rows = []
        for i in range(start, min(n, start + batch)):
            created = now - timedelta(minutes=i * 3)
            rtype = TYPES[i % 4]
            scene = scenes[i % len(scenes)]
            scope = ("global", "self", "unknown")[i % 3]
            rows.append(L1Record(
                profile=profile, record_id=f"l1_{1700000000000 + i}_b{i % 10000:04d}", content=_content(rng, i), type=rtype,
                priority=rng.randint(0, 100), scene=scene, scene_name=scene.name, source_message_ids=[f"m{i}"],
                metadata={"scope": scope, "project": "/srv/bench" if scope == "self" else ""}, timestamps=[created.isoformat()],
                created_at=created, updated_at=created, version=1, session_key=f"s{i % 500}", deleted=(i % 17 == 0),
                task_state=("open", "done", "dropped")[i % 3] if rtype == "work_task" else None, content_key=f"bench{i}",
            ))
        with transaction.atomic():
            made = L1Record.objects.bulk_create(rows)
            if connection.vendor != "postgresql":  # SQLite returns no pks from bulk_create on old versions
                made = list(L1Record.objects.filter(profile=profile, record_id__in=[r.record_id for r in rows]))
            changes = []
            for r in made:
                changes.append(L1Change(profile=profile, record=r, action="store", actor="bench", state=r.as_dict()))
                if int(r.record_id.rsplit("b", 1)[1]) % 10 == 0:
                    state = r.as_dict()
                    state["content"] = r.content + " (edited)"
                    changes.append(L1Change(profile=profile, record=r, action="fix", actor="bench", state=state, note={"reason": "bench"}))
            L1Change.objects.bulk_create(changes)
            hits = [RecordHits(profile=profile, record_id=r.record_id, hits=rng.randint(1, 40), invalid_hits=rng.randint(0, 3),
                               last_hit_at=now) for r in made if rng.random() < 0.33]
            RecordHits.objects.bulk_create(hits)
            ids.extend(r.record_id for r in made)
        print(f"  {min(n, start + batch):>7} records", end="\r", flush=True)
    events = [RecallEvent(profile=profile, query=f"bench query {k}", session_key=f"s{k}", results=[]) for k in range(2000)]
    RecallEvent.objects.bulk_create(events)
    events = list(RecallEvent.objects.filter(profile=profile).order_by("id"))
    RecallHit.objects.bulk_create([RecallHit(event=e, profile=profile, record_id=ids[(k * 37) % len(ids)], score=0.5)
                                   for k, e in enumerate(events) for _ in range(3)])
    print(f"filled {n} records in {time.perf_counter() - started:.1f} s ({L1Change.objects.filter(profile=profile).count()} changes)")
    if connection.vendor == "postgresql":
        # What autovacuum does for a long-lived table: statistics and the visibility map.
        with connection.cursor() as cursor:
            for model in (L1Record, L1Change, RecordHits, RecallEvent, RecallHit):
                cursor.execute(f"VACUUM ANALYZE {model._meta.db_table}")
    return user, ids


def time_pages(user, ids: list[str], runs: int) -> list[tuple[str, float, float, int]]:
    client = Client()
    client.force_login(user)
    record_id = ids[len(ids) // 2]
    pages = [
        ("overview", "/p/bench/"),
        ("records (default)", "/p/bench/records/"),
        ("records type=work_task&task_state=open", "/p/bench/records/?type=work_task&task_state=open"),
        ("records scope=self", "/p/bench/records/?scope=self"),
        ("records scene=sc0007", "/p/bench/records/?scene=sc0007"),
        ("records q=deploy docker", "/p/bench/records/?q=deploy+docker"),
        ("records q=部署", "/p/bench/records/?q=%E9%83%A8%E7%BD%B2"),
        ("records status=tombstoned", "/p/bench/records/?status=tombstoned"),
        ("records sort=-priority", "/p/bench/records/?sort=-priority"),
        ("records page 1000", "/p/bench/records/?page=1000"),
        ("records date range", f"/p/bench/records/?from={(timezone.now() - timedelta(days=30)).date()}&to={timezone.now().date()}"),
        ("record page", f"/p/bench/records/{record_id}/"),
        ("record lineage", f"/p/bench/records/{record_id}/lineage/"),
        ("download: export json (open tasks)", "/p/bench/records/export/?format=json&type=work_task&task_state=open"),
        ("hits", "/p/bench/hits/"),
        ("scenes", "/p/bench/scenes/"),
        ("conversations", "/p/bench/conversations/"),
        ("jobs", "/p/bench/jobs/"),
        ("persona", "/p/bench/persona/"),
        ("audit", "/p/bench/admin/audit/"),
    ]
    results = []
    for name, url in pages:
        response = client.get(url)  # warm-up
        assert response.status_code == 200, (url, response.status_code)
        timings = []
        for _ in range(runs):
            t0 = time.perf_counter()
            response = client.get(url)
            timings.append((time.perf_counter() - t0) * 1000)
            assert response.status_code == 200
        timings.sort()
        p50 = statistics.median(timings)
        p95 = timings[min(len(timings) - 1, round(0.95 * (len(timings) - 1)))]
        results.append((name, p50, p95, len(response.content)))
        print(f"{name:<42} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms", flush=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--reuse", action="store_true", help="time an already filled profile `bench` (MEMORYWEB_DATA_DIR of a previous run)")
    args = parser.parse_args()
    setup_test_environment()
    call_command("migrate", verbosity=0, interactive=False)
    print(f"database: {connection.vendor} ({connection.settings_dict['NAME']})")
    if args.reuse:
        from apps.records.models import L1Record

        user = get_user_model().objects.get(username="bench")
        ids = list(L1Record.objects.filter(profile__slug="bench").order_by("id").values_list("record_id", flat=True))
        print(f"reusing {len(ids)} records")
    else:
        user, ids = fill(args.records)
    print("load average before timing: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    results = time_pages(user, ids, args.runs)
    print("load average after timing: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    # A download (up to 10,000 rows) is no page a person waits on to read; it is timed, not held to the page target.
    slow = [name for name, p50, _, _ in results if p50 >= 150 and not name.startswith("download:")]
    print("target p50 < 150 ms:", "met on every page" if not slow else f"missed on {', '.join(slow)}")
    return 0 if not slow else 1


if __name__ == "__main__":
    raise SystemExit(main())
