"""L1 → L2 → L3 through the HTTP API: records from l1_commit, paged by read_l1_increment,
organised into scene blocks up to the cap, consolidated, archived and restored, then a
persona proposal merged by a human — checking every cursor and history on the way."""

from datetime import timedelta

from django.utils import timezone

from apps.accounts.models import AuditEvent
from apps.conversations.cursors import cursor_get
from apps.persona.services import (
    persona_changes,
    persona_live_text,
    persona_merge_all,
    persona_restore_version,
    persona_versions,
)
from apps.scenes.models import SceneBlock, SceneBlockBackup

from .conftest import meta, state

FACTS = [
    "The api service is written in Go 1.22",
    "Deployments go through ArgoCD on the staging cluster",
    "Database migrations run with goose before each release",
    "The frontend uses pnpm workspaces and Vite",
    "Integration tests need a local Redis on port 6379",
    "Release notes are drafted in docs/CHANGELOG.md",
    "On-call rotation changes every Monday at 09:00",
    "Feature flags live in the flags service, not env vars",
]


def test_l1_to_l2_to_l3_end_to_end(agent_api, worker_api, alice, settings):
    alice.settings = {"l2.maxScenes": 4}
    alice.save()
    stored = agent_api.ok("l1_commit", source="main-agent", session="s1",
                          records=[{"content": c, "type": "work_fact", "priority": 70} for c in FACTS])["stored"]
    assert len(stored) == 8 and all(stored)

    # Page the increment: 5 then 3, each once, in change order.
    page1 = worker_api.ok("read_l1_increment", maxRecords=5)
    assert [r["id"] for r in page1["records"]] == stored[:5] and page1["totalNew"] == 8 and page1["truncated"]
    page2 = worker_api.ok("read_l1_increment", maxRecords=5, cursor=page1["nextCursor"])
    assert [r["id"] for r in page2["records"]] == stored[5:] and not page2["truncated"]
    assert cursor_get(profile=alice, kind="l2") == {}  # reading never moves the cursor

    # Build scenes to the cap, committing the cursor with them.
    writes = [
        {"action": "create", "filename": f"s{i}.md", "meta": meta(f"scene {i}", i),
         "content": f"# Scene {i}\n- {FACTS[2 * i]} ({stored[2 * i]})\n- {FACTS[2 * i + 1]} ({stored[2 * i + 1]})\n"}
        for i in range(4)
    ]
    body = worker_api.ok("l2_commit", sceneWrites=writes, cursor=page2["nextCursor"])
    assert (body["liveCount"], body["maxScenes"], body["sceneCountWarning"]) == (4, 4, "red")
    assert cursor_get(profile=alice, kind="l2") == {"lastRecordId": int(page2["nextCursor"])}
    assert SceneBlock.objects.get(profile=alice, filename="s1.md").members == sorted(stored[2:4])
    assert worker_api.ok("read_l1_increment")["records"] == []

    # One over the cap is refused and changes nothing.
    before = state(alice)
    status, refused = worker_api.call("l2_commit", sceneWrites=[{"action": "create", "filename": "s4.md", "meta": meta(), "content": "x"}],
                                      cursor=page2["nextCursor"])
    assert status == 409 and "consolidate" in refused["error"]["message"]
    assert state(alice) == before

    # New records after the commit are the next increment.
    fresh = agent_api.ok("l1_commit", source="main-agent", records=[{"content": "Staging uses a separate Vault namespace", "type": "work_fact"}])["stored"][0]
    increment = worker_api.ok("read_l1_increment")
    assert [r["id"] for r in increment["records"]] == [fresh] and increment["totalNew"] == 1

    # Consolidate s0 + s1 (keeping every entry), committing the new cursor; a slot frees.
    s0 = SceneBlock.objects.get(profile=alice, filename="s0.md").content
    s1 = SceneBlock.objects.get(profile=alice, filename="s1.md").content
    merged = "# Platform\n" + s0.split("\n", 1)[1] + s1.split("\n", 1)[1] + f"- Staging uses a separate Vault namespace ({fresh})\n"
    body = worker_api.ok("l2_commit", cursor=increment["nextCursor"], personaSignal=True, personaReason="deployment habits settled",
                         sceneWrites=[{"action": "consolidate", "filename": "platform.md", "sources": ["s0.md", "s1.md"],
                                       "meta": meta("platform", 5, updated="2026-03-01T00:00:00Z"), "content": merged}])
    assert body["liveCount"] == 3 and body["sceneCountWarning"] == "orange"
    platform = SceneBlock.objects.get(profile=alice, filename="platform.md", removed=False)
    assert platform.members == sorted([*stored[:4], fresh])
    assert SceneBlockBackup.objects.filter(block__profile=alice, action="consolidate").count() == 2
    assert cursor_get(profile=alice, kind="l2") == {"lastRecordId": int(increment["nextCursor"])}

    # Archive s2 once it is old enough, then fill the cap again and restore through a delete.
    status, _ = worker_api.call("l2_commit", cursor=increment["nextCursor"], sceneWrites=[{"action": "archive", "filename": "s2.md", "reason": "release tooling frozen"}])
    assert status == 409
    SceneBlock.objects.filter(profile=alice, filename="s2.md").update(created_at=timezone.now() - timedelta(days=30))
    guide = worker_api.ok("l2_archive_guide", filename="s2.md")
    assert guide["archivable"] is True and guide["liveCount"] == 3
    body = worker_api.ok("l2_commit", cursor=increment["nextCursor"], sceneWrites=[{"action": "archive", "filename": "s2.md", "reason": "release tooling frozen"}])
    assert body["liveCount"] == 2
    worker_api.ok("l2_commit", cursor=increment["nextCursor"], sceneWrites=[
        {"action": "create", "filename": "s4.md", "meta": meta(), "content": "four"},
        {"action": "create", "filename": "s5.md", "meta": meta(), "content": "five"}])
    assert worker_api.call("l2_commit", cursor=increment["nextCursor"], sceneWrites=[{"action": "restore", "filename": "s2.md"}])[0] == 409
    body = worker_api.ok("l2_commit", cursor=increment["nextCursor"], sceneWrites=[
        {"action": "delete", "filename": "s5.md", "reason": "empty"}, {"action": "restore", "filename": "s2.md"}])
    assert body["liveCount"] == 4
    restored = SceneBlock.objects.get(profile=alice, filename="s2.md", removed=False)
    assert not restored.archived and restored.members == sorted(stored[4:6])
    read = worker_api.ok("read_scene_blocks", filenames=["platform.md", "s2.md", "s5.md"])
    assert [b["ok"] for b in read["blocks"]] == [True, True, False]

    # L3: the persona job proposes, commits its cursor; only a human merge changes USER.md.
    worker_api.ok("l3_edit", action="add", content="Deploys through ArgoCD; prefers Go for services")
    worker_api.ok("l3_edit", action="add", content="Keeps release notes in docs/CHANGELOG.md")
    worker_api.ok("l3_edit", action="delete", target="release notes")
    worker_api.ok("l3_commit", cursor="2026-03-01T00:00:00Z")
    assert cursor_get(profile=alice, kind="l3") == {"updated": "2026-03-01T00:00:00Z"}
    assert persona_live_text(profile=alice) == ""
    assert [c["kind"] for c in persona_changes(profile=alice)["changes"]] == ["add"]
    persona_merge_all(profile=alice, actor="user:alice")
    response = agent_api.client.get("/api/v1/persona/USER.md", **agent_api.headers())
    assert response.content.decode() == "Deploys through ArgoCD; prefers Go for services\n"
    worker_api.ok("l3_edit", action="update", target="ArgoCD", content="Deploys through ArgoCD")
    persona_merge_all(profile=alice, actor="user:alice")
    persona_restore_version(profile=alice, actor="user:alice", number=1)
    assert [v["action"] for v in persona_versions(profile=alice)] == ["restore", "merge", "merge"]
    assert persona_live_text(profile=alice) == "Deploys through ArgoCD; prefers Go for services\n"

    # The audit log holds every write of the run.
    actions = set(AuditEvent.objects.filter(profile=alice).values_list("tool", "action"))
    for expected in [("l2_commit", "create"), ("l2_commit", "consolidate"), ("l2_commit", "consolidate_source"), ("l2_commit", "archive"),
                     ("l2_commit", "restore"), ("l2_commit", "delete"), ("l2_commit", "cursor"), ("l3_edit", "add"),
                     ("l3_edit", "delete"), ("l3_commit", "cursor"), ("dashboard", "persona_merge"), ("dashboard", "persona_restore")]:
        assert expected in actions, expected


def test_scene_members_are_protected_from_l1_fix_and_tombstones_reach_the_organizer(agent_api, worker_api, alice):
    stored = agent_api.ok("l1_commit", source="main-agent", records=[{"content": c, "type": "work_fact"} for c in FACTS[:2]])["stored"]
    cursor = worker_api.ok("read_l1_increment")["nextCursor"]
    worker_api.ok("l2_commit", cursor=cursor, sceneWrites=[{"action": "create", "filename": "a.md", "meta": meta(), "content": f"- ({stored[0]})"}])
    evidence = "the user said this fact was recorded by mistake"
    status, body = agent_api.call("l1_fix", recordId=stored[0], action="tombstone", evidence=evidence)
    assert status == 409, body
    agent_api.ok("l1_fix", recordId=stored[1], action="tombstone", evidence=evidence)
    increment = worker_api.ok("read_l1_increment")
    assert [(r["id"], r["deleted"]) for r in increment["records"]] == [(stored[1], True)]
