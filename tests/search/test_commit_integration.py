"""Records committed through l1_commit are recalled; an l1_fix tombstone hides them."""

from __future__ import annotations

from apps.search.models import IndexOp


def test_main_agent_commit_is_recalled_and_its_tombstone_hides_it(alice, agent_api, worker_api):
    body = agent_api.ok("l1_commit", source="main-agent", records=[
        {"content": "The user wants commit messages written in English.", "type": "work_fact"},
    ], session="s1")
    rid = body["stored"][0]
    found = agent_api.ok("recall_l1_records", query="commit message language", session="s1", turn="1")
    assert found["records"][0]["recordId"] == rid
    agent_api.ok("l1_fix", recordId=rid, action="tombstone", evidence="The user said this preference was recorded by mistake.")
    found = agent_api.ok("recall_l1_records", query="commit message language", session="s1", turn="2")
    assert rid not in [r["recordId"] for r in found["records"]]
    assert IndexOp.objects.filter(profile=alice).count() == 0


def test_commit_reuses_an_embed_and_search_vector_for_identical_content(alice, agent_api, worker_api):
    content = "Releases are tagged with calendar versions like 2026.11."
    vector = worker_api.ok("embed_and_search", queryText=content)["results"][0]["queryVector"]
    body = agent_api.ok("l1_commit", source="main-agent", records=[
        {"content": content, "type": "work_fact", "embedding": vector},
    ], session="s1")
    op = IndexOp.objects.get(record_id=body["stored"][0])
    assert op.vector is not None  # carried to the outbox, validated at drain
    found = agent_api.ok("recall_l1_records", query="release version tags", session="s1", turn="1")
    assert found["records"][0]["recordId"] == body["stored"][0]
