"""Every write leaves history: changes in order, last_change, audit before/after."""

from __future__ import annotations

from apps.records.models import L1Change
from apps.records.selectors import record_history
from tests.records.conftest import CURSOR, msg, rec, record


def test_a_commit_audits_every_write_it_makes(worker_api, alice, l0):
    l0(alice, msg(1, r"edit C:\dev\B\a.ts now"))
    first = worker_api.ok("l1_commit", records=[rec("an old fact about the project B")], cursor=CURSOR)["stored"][0]
    body = worker_api.ok("l1_commit", records=[
        {"id": first, "deleted": True},
        rec("a new fact about the project B", new_scene_name="B｜facts", new_scene_reason="new",
            metadata={"scope": "self", "project": "C:/dev/B", "projectEvidence": [{"message_id": "m1", "path": r"C:\dev\B\a.ts"}]}),
    ], cursor='{"version":2,"files":{"2026-11-29.jsonl":200}}')
    new = body["stored"][1]
    actions = list(alice.audit_events.order_by("id").values_list("action", "target_id"))[-5:]
    # The record writes of a batch go out together, in item order, after the scene they
    # need was registered.
    assert actions == [("scene_register", "sc0001"), ("l1_tombstone", first), ("l1_store", new), ("known_project_add", "alice"), ("cursor_commit", "l1")]
    cursor_event = alice.audit_events.get(action="cursor_commit", after__files__has_key="2026-11-29.jsonl", before__isnull=False)
    assert cursor_event.before["files"]["2026-11-29.jsonl"] == 100 and cursor_event.after["files"]["2026-11-29.jsonl"] == 200


def test_change_sequence_follows_commit_order_and_last_change_points_at_the_newest(worker_api, agent_api, alice, l0):
    l0(alice, msg(1, "a message"))
    rid = worker_api.ok("l1_commit", records=[rec("write the changelog for 2.0", type="work_task")], cursor=CURSOR)["stored"][0]
    agent_api.ok("l1_task_state", ids=[rid], state="done")
    agent_api.ok("l1_task_state", ids=[rid], state="open")
    history = record_history(profile=alice, record_id=rid)
    ids = [h["changeId"] for h in history]
    assert ids == sorted(ids) and [h["state"]["taskState"] for h in history] == ["open", "done", "open"]
    assert record(alice, rid).last_change == ids[-1] == L1Change.objects.filter(profile=alice).order_by("-id").first().pk
    events = list(alice.audit_events.filter(target_id=rid).order_by("id"))
    assert [(e.before or {}).get("taskState") for e in events] == [None, "open", "done"]
    assert [e.after["taskState"] for e in events] == ["open", "done", "open"]


def test_every_record_of_a_batch_points_at_its_own_newest_change(worker_api, alice, l0):
    l0(alice, msg(1, "a message"))
    old = worker_api.ok("l1_commit", records=[rec("the billing service listens on port 8080"),
                                              rec("the search service listens on port 9200")], cursor=CURSOR)["stored"]
    body = worker_api.ok("l1_commit", records=[
        {"id": old[0], "content": "the billing service listens on port 8443", "type": "work_fact"},
        rec("deploys of the billing service go out on Tuesdays"),
        rec("the nightly backup keeps 14 days of snapshots"),
        {"id": old[1], "deleted": True},
    ], cursor='{"version":2,"files":{"2026-11-29.jsonl":200}}')
    touched = (set(old) | set(body["stored"])) - {None}
    assert len(touched) >= 4
    for rid in touched:
        newest = L1Change.objects.filter(profile=alice, record__record_id=rid).order_by("-id").first()
        assert newest is not None and record(alice, rid).last_change == newest.pk, rid
    # and the batch's changes are distinct rows: no record took another one's change
    assert len({record(alice, rid).last_change for rid in touched}) == len(touched)
