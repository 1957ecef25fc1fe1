"""The records list's scope filter (docs/dashboard.md): the stored `scope_key` column
(records 0007) follows `metadata.scope` on every write, and the filtered page and its
count are a range of the (profile, scope_key, created_at, id, deleted) index."""

from __future__ import annotations

from django.db import connection

from apps.records.models import L1Record
from apps.records.selectors import RecordFilters, filter_records
from tests.factories import make_record


def _ids(profile, **query) -> set[str]:
    return set(filter_records(profile, RecordFilters.from_query(query)).values_list("record_id", flat=True))


def test_scope_filter_follows_metadata_on_create_save_and_update(alice, bob):
    mine = make_record(alice, "Project memoryweb uses Django 5.2", metadata={"scope": "self", "project": "/srv/mw"})
    shared = make_record(alice, "The user writes commit messages in English", metadata={"scope": "global", "project": ""})
    unsure = make_record(alice, "The staging host is called blue", metadata={"scope": "unknown"})
    bare = make_record(alice, "A record stored without any scope", metadata={})
    gone = make_record(alice, "An old project fact", metadata={"scope": "self", "project": "/srv/mw"}, deleted=True)
    make_record(bob, "Bob's own project fact", metadata={"scope": "self", "project": "/srv/bob"})
    assert _ids(alice, scope="self") == {mine.record_id}
    assert _ids(alice, scope="global") == {shared.record_id}
    # No scope in the metadata reads as "unknown", as the record's `scope` says.
    assert bare.scope == "unknown"
    assert _ids(alice, scope="unknown") == {unsure.record_id, bare.record_id}
    assert _ids(alice, scope="self", status="tombstoned") == {gone.record_id}
    # A change of metadata through save() and through a queryset update: the database
    # recomputes the column itself.
    shared.metadata = {"scope": "self", "project": "/srv/mw"}
    shared.save()
    L1Record.objects.filter(pk=mine.pk).update(metadata={"scope": "global", "project": ""})
    assert _ids(alice, scope="self") == {shared.record_id}
    assert _ids(alice, scope="global") == {mine.record_id}
    assert L1Record.objects.get(pk=mine.pk).scope_key == "global"


def test_the_scope_page_and_its_count_use_the_scope_index(alice):
    """SQLite plans by rule here (no statistics): the plan is a fact of the schema.
    PostgreSQL plans by statistics, which a test's few rows do not give; its plans at
    100,000 records are in docs/dashboard.md."""
    for i in range(30):
        make_record(alice, f"fact number {i}", metadata={"scope": ("self", "global", "unknown")[i % 3], "project": "/srv/mw"})
    qs = filter_records(alice, RecordFilters.from_query({"scope": "self"}))
    assert qs.count() == 10
    if connection.vendor != "sqlite":
        return
    page_plan = qs[:50].explain()
    sql, params = qs.order_by().values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN SELECT COUNT(*) FROM ({sql})", params)
        count_plan = " ".join(str(row) for row in cursor.fetchall())
    assert "l1_scope_created" in page_plan and "TEMP B-TREE" not in page_plan, page_plan  # no sort
    # A range of the scope's entries, not a scan of the profile (SQLite does not treat an
    # index holding a generated column as covering, so it reads those rows' pages).
    assert "USING INDEX l1_scope_created (profile_id=? AND scope_key=?)" in count_plan, count_plan
