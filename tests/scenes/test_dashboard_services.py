import pytest

from apps.accounts.models import AuditEvent
from apps.scenes.mirror import block_file_text
from apps.scenes.models import SceneBlock
from apps.scenes.services import (
    scene_block_archive,
    scene_block_history,
    scene_block_import,
    scene_block_restore,
    scene_persona_requests,
)
from apps.tools.errors import Conflict, InvalidParams, NotFound

from .conftest import create, make_old, state, write_record


def test_dashboard_archive_and_restore_use_the_same_guards(worker_api, alice):
    worker_api.ok("l2_commit", sceneWrites=[create("a.md")], cursor=0)
    with pytest.raises(Conflict):
        scene_block_archive(profile=alice, actor="user:ann", filename="a.md", reason="finished")  # too young
    make_old(alice, "a.md")
    result = scene_block_archive(profile=alice, actor="user:ann", filename="a.md", reason="finished")
    assert result["liveCount"] == 0
    assert SceneBlock.objects.get(profile=alice, filename="a.md").archived
    before = state(alice)
    with pytest.raises(NotFound):
        scene_block_restore(profile=alice, actor="user:ann", filename="b.md")
    assert state(alice) == before
    scene_block_restore(profile=alice, actor="user:ann", filename="a.md")
    assert not SceneBlock.objects.get(profile=alice, filename="a.md").archived
    assert AuditEvent.objects.filter(profile=alice, tool="dashboard", actor="user:ann").count() == 2


def test_history_and_persona_requests(worker_api, alice):
    worker_api.ok("l2_commit", sceneWrites=[create("a.md", "v1")], cursor=0)
    worker_api.ok("l2_commit", sceneWrites=[{"action": "update", "filename": "a.md", "meta": create("a.md")["meta"], "content": "v2"}],
                  cursor=0, personaSignal=True, personaReason="new habit")
    assert [h["content"] for h in scene_block_history(profile=alice, filename="a.md")] == ["v1"]
    assert [r["reason"] for r in scene_persona_requests(profile=alice)] == ["new habit"]


def test_import_reads_the_meta_form_and_round_trips(alice, bob):
    rec = write_record(alice)
    text = (
        "-----META-START-----\ncreated: 2025-01-01T00:00:00Z\nupdated: 2025-02-01T00:00:00Z\n"
        f"summary: imported scene\nheat: 3\nmembers: {rec.record_id}\n-----META-END-----\n# Title\nbody ({rec.record_id})\n"
    )
    scene_block_import(profile=alice, actor="import", filename="imp.md", text=text)
    block = SceneBlock.objects.get(profile=alice, filename="imp.md")
    assert (block.summary, block.heat, block.members, block.content) == ("imported scene", 3, [rec.record_id], f"# Title\nbody ({rec.record_id})\n")
    assert block_file_text(block) == text
    scene_block_import(profile=alice, actor="import", filename="imp.md", text="no meta at all", archived=True)
    assert SceneBlock.objects.get(profile=alice, filename="imp.md", archived=True).content == "no meta at all"
    assert not SceneBlock.objects.filter(profile=bob).exists()
    with pytest.raises(InvalidParams):
        scene_block_import(profile=alice, actor="import", filename="../x.md", text="x")


def test_import_of_a_block_without_members_line_takes_the_cited_ids(alice):
    text = (
        "-----META-START-----\ncreated: 2025-01-01T00:00:00Z\nupdated: 2025-02-01T00:00:00Z\n"
        "summary: from another tool\nheat: 1\n-----META-END-----\n- uses Go (l1_1700000000000_aa11)\n"
        "- tests first（l1_1700000000001_bb22，l1_1700000000002_cc33）\n"
    )
    scene_block_import(profile=alice, actor="import", filename="tdb.md", text=text)
    block = SceneBlock.objects.get(profile=alice, filename="tdb.md")
    assert block.members == ["l1_1700000000000_aa11", "l1_1700000000001_bb22", "l1_1700000000002_cc33"]
    empty = text.replace("heat: 1\n", "heat: 1\nmembers: \n")
    scene_block_import(profile=alice, actor="import", filename="tdb.md", text=empty)
    assert SceneBlock.objects.get(profile=alice, filename="tdb.md", archived=False).members == []
