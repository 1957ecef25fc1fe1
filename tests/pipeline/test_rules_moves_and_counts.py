"""Changes said as a move, a new day of the month or a new count supersede the live record
that holds the old value (SPEC §5 [2026-12]): "moved the marketing site from Vercel to
Render" (the words before "from" name what moved, so a record saying Vercel of something
else stays), "the dinner moved to the 17th" / "聚会改到 19 号了" (a day alone changes the day
of a stored date), "the pool got a fifth runner" / "我们加了第三个副本" (an ordinal added to a
stored count)."""

from __future__ import annotations

import pytest

from apps.pipeline.models import KIND_L1
from apps.pipeline.rules.corrections import corrected_content, parse_correction, supersedes
from tests.pipeline.conftest import code_profile, msg, ok
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
    correction = parse_correction(said)
    assert correction is not None
    assert supersedes(record, correction) > 0
    assert corrected_content(record, correction) == expected


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
