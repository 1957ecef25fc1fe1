"""Export → import into a new profile → export again gives the same files, and the
imported profile answers recall as the original does (SPEC §7)."""

from __future__ import annotations

import json

from apps.accounts.models import Profile
from apps.records.models import L1Change, L1Record
from apps.search.outbox import drain_outbox
from apps.search.services import recall_records
from tests.transfer.conftest import read_tree, run


def _comparable(files: dict[str, bytes]) -> dict[str, bytes]:
    """The documented differences between two exports of equal data: the profile's slug and name."""
    out = dict(files)
    for name in ("memoryDB/profile.json", "memoryDB/l1/hit-stats.json"):
        data = json.loads(out[name])
        data.pop("profile", None)
        data.pop("name", None)
        out[name] = json.dumps(data, sort_keys=True).encode()
    return out


def test_export_import_export_is_identical_and_recall_agrees(rich_profile, tmp_path):
    profile, ids = rich_profile
    first = tmp_path / "first"
    out = run("export", "lin", str(first))
    assert "records 7" in out and "tombstones 2" in out
    files = read_tree(first)
    assert "memoryDB/l2/scenes/测试与构建.md" in files and "memoryDB/l2/archive/staging-env.md" in files
    assert "skills/devops/git-release/references/发布清单.md" in files

    out = run("import", "lin-copy", str(first))
    assert "created profile lin-copy (code mode)" in out
    copy = Profile.objects.get(slug="lin-copy")
    second = tmp_path / "second"
    run("export", "lin-copy", str(second))
    again = read_tree(second)
    assert sorted(again) == sorted(files)
    assert _comparable(again) == _comparable(files)

    # History, versions, tombstones and replacements survive.
    old = L1Record.objects.get(profile=copy, record_id=ids["pg15"])
    assert old.deleted and old.replaced_by == ids["pg16"]
    assert L1Record.objects.get(profile=copy, record_id=ids["pg16"]).version == 2
    assert L1Record.objects.get(profile=copy, record_id=ids["rotate"]).task_state == "done"
    assert L1Record.objects.get(profile=copy, record_id=ids["wifi"]).deleted
    assert [c.action for c in L1Change.objects.filter(profile=copy, record__record_id=ids["rotate"])] == \
        [c.action for c in L1Change.objects.filter(profile=profile, record__record_id=ids["rotate"])]

    for record in L1Record.objects.filter(profile=copy):
        assert record.last_change == max(c.pk for c in L1Change.objects.filter(record=record))

    drain_outbox(copy.pk)
    answered = 0
    for query in ("how do I run the tests", "staging postgres version", "release tasks"):
        a = recall_records(profile=profile, query=query, session_key="q", turn=query)
        b = recall_records(profile=copy, query=query, session_key="q", turn=query)
        assert [(r["recordId"], r["content"]) for r in a["records"]] == [(r["recordId"], r["content"]) for r in b["records"]]
        assert not a.get("degraded") and not b.get("degraded")
        answered += bool(a["records"])
    assert answered >= 2


def test_a_second_import_skips_every_present_id(rich_profile, tmp_path):
    run("export", "lin", str(tmp_path / "x"))
    run("import", "copy", str(tmp_path / "x"))
    copy = Profile.objects.get(slug="copy")
    before = (L1Record.objects.filter(profile=copy).count(), L1Change.objects.filter(profile=copy).count())
    out = run("import", "copy", str(tmp_path / "x"))
    assert "records 0" in out and "skipped 7" in out
    assert (L1Record.objects.filter(profile=copy).count(), L1Change.objects.filter(profile=copy).count()) == before
