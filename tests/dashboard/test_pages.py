"""Overview, hit statistics, conversations and skills pages: what they count and list."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from apps.accounts.models import AuditEvent
from apps.hitstats.models import RecallEvent, RecordHits
from apps.skills.models import SkillPin

SKILL = """---
name: deploy-app
description: How to deploy the app <script>x</script>
---
# Deploy

Run `make deploy` then [check](javascript:alert(1)).
"""


def test_overview_counts_layers_types_and_tasks(login, alice, make_record, make_block):
    make_record(alice, "A fact about the build system")
    make_record(alice, "Write the upgrade guide soon", type="work_task")
    make_record(alice, "An old removed fact here", deleted=True)
    make_block(alice, "构建.md")
    body = login("alice").get("/p/alice/").content.decode()
    assert '>2</a> <span class="muted small">live' in body
    assert "1 tombstoned" in body
    assert "work_task</a></td><td class=\"right\">1" in body
    assert "Write the upgrade guide soon" in body  # open tasks
    assert "live of 20" in body
    assert "<svg" in body and "Records created per day" in body


def test_overview_chart_counts_records_per_day(login, alice, make_record):
    for _ in range(3):
        make_record(alice, "Created today for the chart", created_at=timezone.now())
    make_record(alice, "Created long ago for the chart", created_at=timezone.now() - timedelta(days=90))
    body = login("alice").get("/p/alice/").content.decode()
    assert "3 in total" in body
    assert "max 3/day" in body


def test_health_partial(login, alice):
    response = login("alice").get("/p/alice/health/", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200 and "<html" not in body and "database" in body


def test_hitstats_ranks_and_ratios(login, alice, make_record):
    good = make_record(alice, "Useful record recalled often")
    bad = make_record(alice, "Noisy record judged useless")
    make_record(alice, "Record that nobody recalled")
    RecordHits.objects.create(profile=alice, record_id=good.record_id, hits=8, invalid_hits=0)
    RecordHits.objects.create(profile=alice, record_id=bad.record_id, hits=4, invalid_hits=4)
    RecallEvent.objects.create(profile=alice, query="how to deploy", results=[{"recordId": good.record_id, "score": 0.9}])
    body = login("alice").get("/p/alice/hits/").content.decode()
    assert '<div class="stat">12</div>' in body and '<div class="stat">8</div>' in body
    assert "33%" in body  # 4 invalid of 12
    most = body.split("Most effective")[1].split("Least effective")[0]
    least = body.split("Least effective")[1].split("Never recalled")[0]
    assert most.index("Useful record") < most.index("Noisy record")
    # Least effective lists only records with invalid hits: one whose every recall helped is not there.
    assert "Noisy record" in least and "Useful record" not in least
    never_part = body.split("Never recalled")[1]
    assert "Record that nobody recalled" in never_part and "(1 live records)" in never_part
    assert "how to deploy" in body


def test_never_recalled_counts_only_live_records(login, alice, make_record):
    recalled_then_removed = make_record(alice, "Recalled once, then tombstoned", deleted=True)
    make_record(alice, "Live and never recalled")
    RecordHits.objects.create(profile=alice, record_id=recalled_then_removed.record_id, hits=2)
    RecordHits.objects.create(profile=alice, record_id="l1_gone_0000", hits=5)  # stats of an id with no record
    body = login("alice").get("/p/alice/hits/").content.decode()
    assert "(1 live records)" in body.split("Never recalled")[1]


def test_conversations_list_and_detail(login, alice, make_record):
    from apps.conversations.services import l0_append

    l0_append(profile=alice, rows=[
        {"id": "m1", "role": "user", "content": "请记住：部署用 make deploy", "timestamp": 1, "sessionKey": "s-1", "cwd": "/srv/app"},
        {"id": "m2", "role": "assistant", "content": "好的", "timestamp": 2, "sessionKey": "s-1", "cwd": "/srv/app"},
        {"id": "x1", "role": "user", "content": "other session", "timestamp": 3, "sessionKey": "s-2", "cwd": "/"},
    ])
    client = login("alice")
    body = client.get("/p/alice/conversations/").content.decode()
    assert "2 conversations" in body and "s-1" in body and "s-2" in body
    overview = client.get("/p/alice/").content.decode()
    assert ">3</a> <span class=\"muted small\">messages" in overview and "2 sessions · 1 daily shard" in overview
    body = client.get("/p/alice/conversations/session/?session=s-1").content.decode()
    assert "请记住：部署用 make deploy" in body and "other session" not in body
    assert client.get("/p/alice/conversations/session/?session=nope").status_code == 404
    record = make_record(alice, "Deploy with make deploy", source_message_ids=["m1", "missing-id"], session_key="s-1")
    page = client.get(f"/p/alice/records/{record.record_id}/").content.decode()
    assert "请记住：部署用 make deploy" in page
    assert "/p/alice/conversations/session/?session=s-1" in page
    assert "not found in the L0 shards" in page  # the missing reference is shown, not hidden


def test_conversations_are_per_profile(login, bob):
    from apps.conversations.services import l0_append

    l0_append(profile=bob, rows=[{"id": "b1", "role": "user", "content": "bob only", "timestamp": 1, "sessionKey": "bs", "cwd": "/"}])
    client = login("alice")
    assert "bs" not in client.get("/p/alice/conversations/").content.decode().split("<main")[1]
    assert client.get("/p/alice/conversations/session/?session=bs").status_code == 404


def test_skills_list_detail_pin_and_unpin(login, alice):
    from apps.skills.services import skill_create, skill_write_file

    skill_create(profile=alice, actor="test", name="deploy-app", category="devops", content=SKILL)
    skill_write_file(profile=alice, actor="test", name="deploy-app", file_path="references/notes.md", file_content="<b>notes</b>")
    client = login("alice")
    body = client.get("/p/alice/skills/").content.decode()
    assert "devops" in body and "deploy-app" in body and "<script>x</script>" not in body
    page = client.get("/p/alice/skills/deploy-app/").content.decode()
    assert "<h1>Deploy</h1>" in page and "javascript:" not in page.split('class="markdown"')[1]
    assert "references/notes.md" in page
    assert "&lt;b&gt;notes&lt;/b&gt;" in client.get("/p/alice/skills/deploy-app/?file=references/notes.md").content.decode()
    client.post("/p/alice/skills/deploy-app/pin/", {"pin": "1"})
    assert SkillPin.objects.filter(profile=alice, name="deploy-app").exists()
    client.post("/p/alice/skills/deploy-app/pin/", {"pin": "0"})
    assert not SkillPin.objects.filter(profile=alice, name="deploy-app").exists()
    assert AuditEvent.objects.filter(profile=alice, actor="user:alice").count() >= 2


def test_skill_trash_restore(login, alice):
    from apps.skills.services import skill_create, skill_delete

    skill_create(profile=alice, actor="test", name="deploy-app", category="devops", content=SKILL)
    skill_delete(profile=alice, actor="test", name="deploy-app")
    client = login("alice")
    assert client.get("/p/alice/skills/deploy-app/").status_code == 404
    body = client.get("/p/alice/skills/").content.decode()
    entry = body.split('name="entry" value="')[1].split('"')[0]
    response = client.post("/p/alice/skill-trash/restore/", {"entry": entry})
    assert response["Location"] == "/p/alice/skills/deploy-app/"
    assert client.get("/p/alice/skills/deploy-app/").status_code == 200
    body = client.post("/p/alice/skill-trash/restore/", {"entry": "../../etc"}, follow=True).content.decode()
    assert "Not allowed:" in body


def test_unknown_skill_is_404(login, alice):
    assert login("alice").get("/p/alice/skills/nope/").status_code == 404


def test_conversation_pages_read_only_their_rows(login, alice):
    from apps.conversations.services import l0_append

    l0_append(profile=alice, rows=[{"id": f"m{i}", "role": "user" if i % 2 else "assistant", "content": f"消息 number {i:03d}",
                                     "timestamp": i, "sessionKey": "long", "cwd": "/"} for i in range(1, 231)])
    client = login("alice")
    first = client.get("/p/alice/conversations/session/?session=long").content.decode()
    assert "消息 number 001" in first and "消息 number 100" in first and "消息 number 101" not in first
    assert "230 rows" in first
    last = client.get("/p/alice/conversations/session/?session=long&page=3").content.decode()
    assert "消息 number 201" in last and "消息 number 230" in last and "消息 number 200" not in last
