"""Finding live records by the words they use (the rules driver's lookups)."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.records.models import L1Record
from apps.records.selectors import live_record_ids_containing_any
from tests.factories import make_record


def test_records_using_any_of_the_words_are_found_in_one_query(alice, bob):
    budget = make_record(alice, "The kitchen budget is $18,000 at most.").record_id
    tiles = make_record(alice, "厨房的瓷砖选了灰色的。").record_id
    make_record(alice, "The kitchen BUDGET was $15,000 before the quotes.", deleted=True)
    make_record(alice, "We walk the dog every morning.")
    make_record(bob, "Bob's kitchen budget is small.")
    with CaptureQueriesContext(connection) as queries:
        found = live_record_ids_containing_any(profile=alice, texts=["Budget", "瓷砖", "  "], limit=10)
    assert found == {budget, tiles}  # any case, live only, this profile only
    assert len(queries.captured_queries) == 1
    assert live_record_ids_containing_any(profile=alice, texts=["", " "]) == set()


def test_the_newest_records_come_first_up_to_the_limit(alice):
    ids = [make_record(alice, f"Deploy note {i}: the kitchen app ships on Fridays.").record_id for i in range(5)]
    start = timezone.now()
    for i, rid in enumerate(ids):  # updated one minute apart, the last one newest
        L1Record.objects.filter(profile=alice, record_id=rid).update(updated_at=start + timedelta(minutes=i))
    assert live_record_ids_containing_any(profile=alice, texts=["kitchen"], limit=2) == set(ids[-2:])
