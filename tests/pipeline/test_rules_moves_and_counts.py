"""Changes said as a move, a new day of the month or a new count supersede the live record
that holds the old value (SPEC §5 [2026-12]): "moved the marketing site from Vercel to
Render" (the words before "from" name what moved, so a record saying Vercel of something
else stays), "the dinner moved to the 17th" / "聚会改到 19 号了" (a day alone changes the day
of a stored date), "the pool got a fifth runner" / "我们加了第三个副本" (an ordinal added to a
stored count)."""

from __future__ import annotations

import pytest

from apps.pipeline.models import KIND_L1
from apps.pipeline.rules.corrections import parse_correction, supersedes
from tests.pipeline.conftest import assert_rewrites, code_profile, msg, ok
from tests.pipeline.conftest import live_texts as texts

PROJ = "/home/dev/storefront"
T = 1764400000000  # 2025-11-29T07:06:40Z
DAY = 86_400_000


@pytest.fixture
def coder(make_profile):
    return code_profile(make_profile, "storefront", PROJ)


# --------------------------------------------------------------------------- "from X to Y"


@pytest.mark.parametrize(("record", "said", "expected"), [
    ("The marketing site is deployed on Vercel with preview builds for every branch.",
     "We moved the marketing site from Vercel to Render last month.",
     "The marketing site is deployed on Render with preview builds for every branch."),
    ("Our CI runs on Jenkins, with a nightly build of the mobile app.", "We switched CI from Jenkins to Buildkite.",
     "Our CI runs on Buildkite, with a nightly build of the mobile app."),
    # The slot named in another form of its word ("hosting" / "hosted").
    ("Static assets are hosted on S3 behind CloudFront.", "We moved the asset hosting from S3 to Cloudflare R2 in October.",
     "Static assets are hosted on Cloudflare R2 behind CloudFront."),
    # The old name's version is not the new one's.
    ("订单库用的是 MySQL 5.7，一主两从。", "订单库从 MySQL 迁到了 TiDB，分库分表的事不用管了。", "订单库用的是 TiDB，一主两从。"),
    ("日志都存在 Elasticsearch 里，保留三十天。", "我们把日志从 Elasticsearch 切到 Loki 了。", "日志都存在 Loki 里，保留三十天。"),
])
def test_a_move_from_one_name_to_another_rewrites_the_name(record, said, expected):
    assert_rewrites(record, said, expected)


@pytest.mark.parametrize(("record", "said"), [
    # The old name said of something else than what moved.
    ("The design-system docs preview also runs on Vercel.", "We moved the marketing site from Vercel to Render last month."),
    ("I used Jenkins a lot at my previous job.", "We switched CI from Jenkins to Buildkite."),
    ("搜索功能用的是 Elasticsearch，自己维护的集群。", "我们把日志从 Elasticsearch 切到 Loki 了。"),
])
def test_a_move_leaves_a_record_of_the_old_name_in_another_slot(record, said):
    assert supersedes(record, parse_correction(said)) == 0


@pytest.mark.parametrize("sentence", [
    "We want to move CI from Jenkins to Buildkite next quarter.",
    "下个月要把订单库从 MySQL 迁到 TiDB。",
])
def test_a_planned_move_is_not_a_correction(sentence):
    correction = parse_correction(sentence)
    assert correction is None or not correction.old


def test_a_move_supersedes_the_record_of_that_slot_in_a_later_batch(coder, l0, run_now):
    l0(coder, [
        msg("m1", "The marketing site is deployed on Vercel with preview builds for every branch.", ts=T, cwd=PROJ),
        msg("m2", "The design-system docs preview also runs on Vercel.", ts=T + 60_000, cwd=PROJ),
    ])
    ok(run_now(coder, KIND_L1))
    l0(coder, [msg("m3", "Heads-up: we moved the marketing site from Vercel to Render last month, the bills were too high.",
                   session="s2", ts=T + 9 * DAY, cwd=PROJ)])
    run = ok(run_now(coder, KIND_L1))
    live = texts(coder)
    assert any("Render" in t and "preview builds" in t for t in live), live
    assert not any("marketing site" in t and "Vercel" in t for t in live), live
    assert any("design-system" in t and "Vercel" in t for t in live), live  # Vercel of another slot stays
    assert run.counts["correctionsOfStored"] == 1


def test_a_move_later_in_the_same_batch_rewrites_the_earlier_unit(coder, l0, run_now):
    l0(coder, [
        msg("c1", "Our CI runs on Jenkins, with a nightly build of the mobile app.", ts=T, cwd=PROJ),
        msg("c2", "Noted.", role="assistant", ts=T + 60_000, cwd=PROJ),
        msg("c3", "Update: we switched CI from Jenkins to Buildkite, the agents were always down.", ts=T + 120_000, cwd=PROJ),
    ])
    run = ok(run_now(coder, KIND_L1))
    live = texts(coder)
    assert any("Buildkite" in t and "nightly build" in t for t in live), live
    assert not any("Jenkins" in t for t in live), live
    assert run.counts["correctionsInBatch"] == 1


def test_a_chinese_move_supersedes_the_record_of_that_slot_in_a_later_batch(coder, l0, run_now):
    l0(coder, [
        msg("z1", "日志都存在 Elasticsearch 里，保留三十天。", ts=T, cwd=PROJ),
        msg("z2", "商品搜索用的是 Elasticsearch，自己维护的集群。", ts=T + 60_000, cwd=PROJ),
    ])
    ok(run_now(coder, KIND_L1))
    l0(coder, [msg("z3", "跟你说一下，我们上周把日志从 Elasticsearch 切到 Loki 了，成本低很多。", session="s2", ts=T + 6 * DAY, cwd=PROJ)])
    run = ok(run_now(coder, KIND_L1))
    live = texts(coder)
    assert any("Loki" in t and "三十天" in t for t in live), live
    assert not any("日志" in t and "Elasticsearch" in t for t in live), live
    assert any("搜索" in t and "Elasticsearch" in t for t in live), live
    assert run.counts["correctionsOfStored"] == 1


def test_a_chinese_move_in_the_same_batch_rewrites_the_earlier_unit(coder, l0, run_now):
    l0(coder, [
        msg("y1", "订单库用的是 MySQL 5.7，一主两从。", ts=T, cwd=PROJ),
        msg("y2", "好的。", role="assistant", ts=T + 60_000, cwd=PROJ),
        msg("y3", "更新一下：订单库从 MySQL 迁到了 TiDB，分库分表的事不用管了。", ts=T + 120_000, cwd=PROJ),
    ])
    run = ok(run_now(coder, KIND_L1))
    live = texts(coder)
    assert any("TiDB" in t and "一主两从" in t for t in live), live
    assert not any("MySQL" in t for t in live), live
    assert run.counts["correctionsInBatch"] == 1


# --------------------------------------------------------------------------- a new day of the month


@pytest.mark.parametrize(("record", "said", "expected"), [
    ("聚会定在 18 号，在图书馆三楼。", "读书会的聚会改到 25 号了，场地那天有活动。", "聚会定在 25 号，在图书馆三楼。"),
    # A day alone changes the day of a stored date; the month stays.
    ("表姐的婚礼定在 5 月 16 号，在苏州。", "表姐的婚礼改到 23 号了。", "表姐的婚礼定在 5 月 23 号，在苏州。"),
    ("The lease handover is on March 3rd at the agency.", "The lease handover got pushed to the 10th.", "The lease handover is on March 10th at the agency."),
    ("On the 15th we're doing a farewell dinner for my brother, near the station.", "The farewell dinner got pushed to the 17th.",
     "On the 17th we're doing a farewell dinner for my brother, near the station."),
])
def test_a_new_day_of_the_month_rewrites_the_stored_day(record, said, expected):
    assert_rewrites(record, said, expected)


def test_a_day_names_its_event_anywhere_in_the_sentence_of_the_date():
    from apps.pipeline.rules.corrections import names_the_slot

    said = parse_correction("The farewell dinner got pushed to the 17th.")
    assert names_the_slot("On the 15th we're doing a farewell dinner for my brother, near the station.", said)
    assert not names_the_slot("Lupa is our favourite place for dinner. The lease renewal is due on the 30th.", said)
    assert supersedes("The gym closes early on the 24th.", said) == 0  # no shared word: another date
    said_zh = parse_correction("聚会改到 29 号了。")
    assert names_the_slot("22 号那天，我们在家里搞个聚会。", said_zh)
    assert supersedes("3 号线周末停运，要绕路。", said_zh) == 0  # a metro line is not a day


def test_a_new_day_supersedes_the_event_of_an_earlier_batch(chat, l0, run_now):
    l0(chat, [
        msg("e1", "On the 15th we're doing a farewell dinner for my brother, near the station.", session="w1", ts=T),
        msg("e2", "The dinner budget is about 40 euros a head.", session="w1", ts=T + 60_000),
    ])
    ok(run_now(chat, KIND_L1))
    l0(chat, [msg("e3", "The farewell dinner got pushed to the 17th, his flight is later now.", session="w2", ts=T + 2 * DAY)])
    run = ok(run_now(chat, KIND_L1))
    live = texts(chat)
    assert any("17th" in t and "brother" in t for t in live), live
    assert not any("15th" in t for t in live), live
    assert any("40 euros" in t for t in live), live
    assert run.counts["correctionsOfStored"] == 1


def test_a_chinese_new_day_in_the_same_batch_rewrites_the_earlier_unit(chat, l0, run_now):
    l0(chat, [
        msg("r1", "读书会的聚会定在 18 号，在图书馆三楼。", session="w1", ts=T),
        msg("r2", "好呀，到时候提醒你。", role="assistant", session="w1", ts=T + 60_000),
        msg("r3", "哦对了，聚会改到 25 号了，场地那天有活动。", session="w1", ts=T + 120_000),
    ])
    run = ok(run_now(chat, KIND_L1))
    live = texts(chat)
    assert any("25 号" in t and "图书馆" in t for t in live), live
    assert not any("18 号" in t for t in live), live
    assert run.counts["correctionsInBatch"] == 1


def test_a_chinese_new_day_changes_the_stored_date_of_an_earlier_batch(chat, l0, run_now):
    l0(chat, [
        msg("w1", "表姐的婚礼定在 5 月 16 号，在苏州。", session="w1", ts=T),
        msg("w2", "我们单位 15 号发工资。", session="w1", ts=T + 60_000),
    ])
    ok(run_now(chat, KIND_L1))
    l0(chat, [msg("w3", "表姐的婚礼改到 23 号了，酒店那天订满了。", session="w2", ts=T + 4 * DAY)])
    run = ok(run_now(chat, KIND_L1))
    live = texts(chat)
    assert any("5 月 23 号" in t and "苏州" in t for t in live), live
    assert not any("16 号" in t for t in live), live
    assert any("15 号发工资" in t for t in live), live
    assert run.counts["correctionsOfStored"] == 1


def test_change_of_plans_opening_a_sentence_is_a_correction_not_a_request(chat, l0, run_now):
    # "Change …" at the start is mostly an order to the assistant; "Change of plans" is not one.
    l0(chat, [msg("b1", "We're hosting the book club at our flat on the 9th, six people are coming.", session="w1", ts=T)])
    ok(run_now(chat, KIND_L1))
    l0(chat, [msg("b2", "Change of plans, the book club moved to the 12th because Jo is away.", session="w2", ts=T + 3 * DAY)])
    ok(run_now(chat, KIND_L1))
    live = texts(chat)
    assert any("12th" in t and "six people" in t for t in live), live
    assert not any("9th" in t for t in live), live


# --------------------------------------------------------------------------- one more of something


@pytest.mark.parametrize(("record", "said", "expected"), [
    ("The search cluster has three nodes in eu-west.", "The search cluster got a fourth node on Monday.",
     "The search cluster has four nodes in eu-west."),
    ("Kafka runs as 5 brokers behind the internal load balancer.", "We added a sixth broker after the Black Friday lag.",
     "Kafka runs as 6 brokers behind the internal load balancer."),
    ("Postgres runs with replicas: 2 and a 30s failover.", "We added a third replica last week.",
     "Postgres runs with replicas: 3 and a 30s failover."),
    ("订单库有两个只读副本，放在杭州。", "我们上周加了第三个副本。", "订单库有三个只读副本，放在杭州。"),
    ("办公室有三台打印机，都在二楼。", "公司又买了第四台打印机。", "办公室有四台打印机，都在二楼。"),
])
def test_one_more_said_with_an_ordinal_rewrites_the_stored_count(record, said, expected):
    assert_rewrites(record, said, expected)


@pytest.mark.parametrize(("record", "said"), [
    ("The search cluster has three nodes in eu-west.", "We added a third replica to the search cluster."),  # another thing counted
    ("We have two cats, Miso and Tofu.", "I got a second opinion from another vet about the cats."),
    ("订单库有两个只读副本，放在杭州。", "我们加了第三个监控面板。"),
])
def test_an_ordinal_of_another_thing_leaves_the_count_alone(record, said):
    correction = parse_correction(said)
    assert correction is None or supersedes(record, correction) == 0


@pytest.mark.parametrize("sentence", ["We should add a fourth node before the sale.", "下个月要加第三个副本。"])
def test_one_more_planned_is_not_a_correction(sentence):
    correction = parse_correction(sentence)
    assert correction is None or correction.count is None


def test_one_more_supersedes_the_count_of_an_earlier_batch(coder, l0, run_now):
    l0(coder, [
        msg("n1", "Our search cluster runs on three nodes in eu-west, each with 64 GB of RAM.", ts=T, cwd=PROJ),
        msg("n2", "The payments database uses two replicas and daily snapshots.", ts=T + 60_000, cwd=PROJ),
    ])
    ok(run_now(coder, KIND_L1))
    l0(coder, [msg("n3", "The search cluster got a fourth node on Monday, indexing was falling behind.", session="s2", ts=T + 5 * DAY, cwd=PROJ)])
    run = ok(run_now(coder, KIND_L1))
    live = texts(coder)
    assert any("four nodes" in t and "64 GB" in t for t in live), live
    assert not any("three nodes" in t for t in live), live
    assert any("two replicas" in t for t in live), live
    assert run.counts["correctionsOfStored"] == 1


def test_a_chinese_one_more_in_the_same_batch_rewrites_the_earlier_unit(coder, l0, run_now):
    l0(coder, [
        msg("o1", "订单库用的是两个只读副本，放在杭州。", ts=T, cwd=PROJ),
        msg("o2", "明白。", role="assistant", ts=T + 60_000, cwd=PROJ),
        msg("o3", "对了，因为大促我们昨天加了第三个副本。", ts=T + 120_000, cwd=PROJ),
    ])
    run = ok(run_now(coder, KIND_L1))
    live = texts(coder)
    assert any("三个只读副本" in t and "杭州" in t for t in live), live
    assert not any("两个" in t for t in live), live
    assert run.counts["correctionsInBatch"] == 1


def test_a_chinese_one_more_supersedes_the_count_of_an_earlier_batch(chat, l0, run_now):
    l0(chat, [
        msg("p1", "我家养了两只猫，一只橘猫一只狸花。", session="w1", ts=T),
        msg("p2", "家里有三个孩子的房间在二楼。", session="w1", ts=T + 60_000),
    ])
    ok(run_now(chat, KIND_L1))
    l0(chat, [msg("p3", "上周末我们又养了第三只猫，是朋友家生的。", session="w2", ts=T + 8 * DAY)])
    run = ok(run_now(chat, KIND_L1))
    live = texts(chat)
    assert any("三只猫" in t and "橘猫" in t for t in live), live
    assert not any("两只猫" in t for t in live), live
    assert run.counts["correctionsOfStored"] == 1


# --------------------------------------------------------------------------- a setting changed twice


@pytest.mark.parametrize(("turns", "kept", "gone"), [
    # A change that says only its new value means the setting just said.
    (["We run the Celery workers with a concurrency of 40.", "OK.", "Actually, make it 30."], "concurrency of 30", "40"),
    # Or it says that setting's value again beside the new one.
    (["We run the Celery workers with a concurrency of 40.", "OK.", "Actually 30, 40 was too many for the database."], "concurrency of 30", "40"),
    (["我们的连接池上限是 40。", "好。", "不对，还是 30 吧。"], "连接池上限是 30", "40"),
    # Two changes of one setting, the first matching nothing stored: the last value is the one kept.
    (["把连接池上限调到 40。", "好的，已调到 40。", "数据库扛不住，还是调到 30 吧。"], "连接池上限调到 30", "40"),
])
def test_a_setting_changed_twice_in_one_conversation_keeps_the_last_value(coder, l0, run_now, turns, kept, gone):
    l0(coder, [msg(f"t{i}", t, role="assistant" if i % 2 else "user", ts=T + i * 60_000, cwd=PROJ) for i, t in enumerate(turns)])
    ok(run_now(coder, KIND_L1))
    live = texts(coder)
    assert any(kept in t for t in live), live
    assert not any(gone in t for t in live), live


@pytest.mark.parametrize(("turns", "kept"), [
    # A value of another subject said after a setting is a statement of its own.
    (["我们的连接池上限是 40。", "好。", "我女儿今年 7 岁了，现在读二年级。"], ["连接池上限是 40", "7 岁"]),
    (["We run the Celery workers with a concurrency of 40.", "OK.", "My flat is number 12 now, they renumbered the building."],
     ["concurrency of 40", "number 12"]),
])
def test_a_value_of_another_subject_does_not_change_the_setting_just_said(coder, l0, run_now, turns, kept):
    l0(coder, [msg(f"u{i}", t, role="assistant" if i % 2 else "user", ts=T + i * 60_000, cwd=PROJ) for i, t in enumerate(turns)])
    ok(run_now(coder, KIND_L1))
    live = texts(coder)
    assert all(any(k in t for t in live) for k in kept), live


def test_went_from_a_value_to_another_is_a_change_and_from_a_place_to_another_a_trip():
    assert_rewrites("The build timeout is 30s on the shared runners.", "The timeout went from 30s to 60s after the cache miss storm.",
                    "The build timeout is 60s on the shared runners.")
    trip = parse_correction("I went from Lisbon to Porto by train last weekend, lovely ride.")
    assert trip is None or supersedes("I live in Lisbon with my partner.", trip) == 0
