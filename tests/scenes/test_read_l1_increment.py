from apps.conversations.cursors import cursor_get, cursor_set

from .conftest import write_record


def test_returns_changed_records_in_change_order_with_tombstones(worker_api, alice):
    a = write_record(alice, content="first fact")
    b = write_record(alice, content="second fact")
    write_record(alice, record_id=a.record_id, content="first fact", deleted=True, action="tombstone")
    body = worker_api.ok("read_l1_increment")
    ids = [r["id"] for r in body["records"]]
    assert ids == [b.record_id, a.record_id]  # a's newest change is the latest
    assert body["records"][1]["deleted"] is True
    assert body["totalNew"] == 2 and body["returned"] == 2 and body["truncated"] is False
    assert body["nextCursor"] == str(body["records"][-1]["changeId"])


def test_each_record_appears_once_at_its_newest_state(worker_api, alice):
    rec = write_record(alice, content="version one")
    write_record(alice, record_id=rec.record_id, content="version two", action="fix")
    body = worker_api.ok("read_l1_increment")
    assert [r["content"] for r in body["records"]] == ["version two"]


def test_pages_with_max_records_and_next_cursor(worker_api, alice):
    made = [write_record(alice, content=f"fact number {i}") for i in range(5)]
    first = worker_api.ok("read_l1_increment", maxRecords=2)
    assert [r["id"] for r in first["records"]] == [m.record_id for m in made[:2]]
    assert first["totalNew"] == 5 and first["returned"] == 2 and first["truncated"] is True
    second = worker_api.ok("read_l1_increment", maxRecords=2, cursor=first["nextCursor"])
    assert [r["id"] for r in second["records"]] == [m.record_id for m in made[2:4]]
    assert second["totalNew"] == 3
    third = worker_api.ok("read_l1_increment", maxRecords=2, cursor=int(second["nextCursor"]))
    assert [r["id"] for r in third["records"]] == [made[4].record_id] and third["truncated"] is False
    empty = worker_api.ok("read_l1_increment", cursor=third["nextCursor"])
    assert empty["records"] == [] and empty["nextCursor"] == third["nextCursor"] and empty["totalNew"] == 0


def test_default_cursor_is_the_stored_l2_cursor(worker_api, alice):
    old = write_record(alice, content="already organised")
    cursor_set(profile=alice, kind="l2", value={"lastRecordId": old.last_change})
    new = write_record(alice, content="new since the cursor")
    body = worker_api.ok("read_l1_increment")
    assert [r["id"] for r in body["records"]] == [new.record_id]


def test_cursor_accepts_the_cursor_json_form(worker_api, alice):
    old = write_record(alice, content="already organised")
    new = write_record(alice, content="new since the cursor")
    body = worker_api.ok("read_l1_increment", cursor=f'{{"lastRecordId": {old.last_change}}}')
    assert [r["id"] for r in body["records"]] == [new.record_id]


def test_max_records_above_200_is_invalid(worker_api):
    status, body = worker_api.call("read_l1_increment", maxRecords=201)
    assert status == 400 and body["error"]["code"] == "invalid_params"
    assert worker_api.call("read_l1_increment", maxRecords=200)[0] == 200
    assert worker_api.call("read_l1_increment", maxRecords=0)[0] == 400


def test_bad_cursor_is_invalid(worker_api):
    for bad in ("abc", "-3", '{"other": 1}', "{broken"):
        status, body = worker_api.call("read_l1_increment", cursor=bad)
        assert status == 400 and body["error"]["code"] == "invalid_params", bad


def test_other_profiles_records_never_appear(worker_api, alice, bob):
    write_record(bob, content="bob's secret fact")
    mine = write_record(alice, content="alice's fact")
    body = worker_api.ok("read_l1_increment")
    assert [r["id"] for r in body["records"]] == [mine.record_id]
    assert body["totalNew"] == 1


def test_agent_role_may_not_read_the_increment(agent_api):
    status, body = agent_api.call("read_l1_increment")
    assert status == 403 and body["error"]["code"] == "forbidden"


def test_l1_dir_must_lie_inside_the_profile(worker_api, settings):
    inside = str(settings.DATA_DIR / "profiles" / "alice" / "l1" / "records")
    assert worker_api.call("read_l1_increment", l1Dir=inside)[0] == 200
    status, body = worker_api.call("read_l1_increment", l1Dir=str(settings.DATA_DIR / "profiles" / "bob" / "l1"))
    assert status == 403 and body["error"]["code"] == "forbidden"
    status, _ = worker_api.call("read_l1_increment", l1Dir="../bob/l1")
    assert status == 403


def test_cursor_may_be_the_id_of_the_last_record_read(worker_api, alice, bob):
    first = write_record(alice, content="first fact")
    second = write_record(alice, content="second fact")
    body = worker_api.ok("read_l1_increment", cursor=first.record_id)
    assert [r["id"] for r in body["records"]] == [second.record_id]
    theirs = write_record(bob, content="bob's fact")
    status, body = worker_api.call("read_l1_increment", cursor=theirs.record_id)
    assert status == 400 and theirs.record_id in body["error"]["message"]


def test_cursor_object_form_is_accepted_over_http_by_read_and_commit(worker_api, alice):
    first = write_record(alice)
    write_record(alice)
    body = worker_api.ok("read_l1_increment", cursor={"lastRecordId": first.last_change})
    assert body["returned"] == 1 and body["totalNew"] == 1
    done = worker_api.ok("l2_commit", sceneWrites=[], cursor={"lastRecordId": int(body["nextCursor"])})
    assert done["success"] is True
    assert cursor_get(profile=alice, kind="l2") == {"lastRecordId": int(body["nextCursor"])}
    status, err = worker_api.call("read_l1_increment", cursor={"lastRecordId": 1, "extra": 2})
    assert status == 400 and "lastRecordId" in err["error"]["message"]
