"""Changes said in everyday words supersede the live record that holds the old value
(SPEC §5 [2026-12]): values of more kinds (calendar dates, spans of time, amounts of money,
sizes in Gi), a verb of change with words before "to" ("upgraded the service to …",
"推迟到", "加到"), weak cues ("… now", "现在", "more like") that count only with a typed value
of a kind a record holds next to the same words, the old record found by those words when
the dense search does not bring it back, and the one value of the new one's shape rewritten."""

from __future__ import annotations

import pytest

from apps.pipeline.models import KIND_L1
from apps.pipeline.rules.corrections import corrected_content, parse_correction, supersedes
from apps.pipeline.rules.text import values
from tests.pipeline.conftest import assert_rewrites, code_profile, msg, ok
from tests.pipeline.conftest import live_texts as texts

PROJ = "/home/dev/payments-api"
T = 1764400000000  # 2025-11-29T07:06:40Z
DAY = 86_400_000


@pytest.fixture
def coder(make_profile):
    return code_profile(make_profile, "payments", PROJ)


@pytest.mark.parametrize(("text", "expected"), [
    ("The move-in date is March 14, the keys come a day before.", [("date", "March 14")]),
    ("她的婚礼定在 9 月 27 号，在杭州。", [("date", "9 月 27 号")]),
    ("Standup is capped at 15 minutes.", [("duration", "15 minutes")]),
    ("孩子每天看电视不超过一个半小时。", [("duration", "一个半小时")]),
    ("We can spend $2,500 on the new laptops.", [("amount", "$2,500")]),
    ("装修预算三万五，不能再多了。", [("amount", "三万五")]),
    ("The worker pods get 512Mi of memory.", [("number:bytes", "512Mi")]),
    # A big number of something else is not money; "may" the verb is not a month.
    ("那座山海拔三千多米。", []),
    ("You may 2x the timeout if the job is slow.", []),
])
def test_values_of_more_kinds_are_typed(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(("record", "said", "expected"), [
    # A verb of change with words before "to"; what follows the value ("last week") is not it.
    ("The billing service runs on Java 17 with Spring Boot.", "We upgraded the billing service to Java 21 last week.",
     "The billing service runs on Java 21 with Spring Boot."),
    ("The nightly export job has a 30 minutes timeout.", "Ops extended the export timeout to 45 minutes yesterday.",
     "The nightly export job has a 45 minutes timeout."),
    ("婚礼定在 9 月 27 号，在杭州。", "婚礼推迟到 10 月 18 号了，场地那天被订了。", "婚礼定在 10 月 18 号，在杭州。"),
    ("装修预算三万块，包括厨房。", "预算加到三万五了，厨房要换橱柜。", "装修预算三万五，包括厨房。"),
    # Weak cues: "now" inside the sentence, "more like", "现在".
    ("The move-in date is March 14, the keys come a day before.", "The landlord says the move-in is March 21 now, the painters are late.",
     "The move-in date is March 21, the keys come a day before."),
    ("The kitchen budget is $12,000 at most.", "Honestly the kitchen budget is more like 15 grand after the quotes.",
     "The kitchen budget is 15 grand at most."),
    ("孩子每天看电视不超过半小时。", "孩子现在每天看电视不超过一个小时，暑假放宽了。", "孩子每天看电视不超过一个小时。"),
    ("Worker pods get 512Mi of memory, two replicas.", "We bumped the worker pods to 1Gi after the OOMs.", "Worker pods get 1Gi of memory, two replicas."),
    # Several values of the kind in the record: the one written in the new value's shape.
    ("Redis listens on port 6379 on cache-2, with a 1 GB maxmemory.", "Actually the cache is on 6380 these days, behind the proxy now.",
     "Redis listens on port 6380 on cache-2, with a 1 GB maxmemory."),
])
def test_a_change_said_in_everyday_words_rewrites_the_old_value(record, said, expected):
    assert_rewrites(record, said, expected)


@pytest.mark.parametrize("sentence", [
    "Let's keep the 30 minutes timeout for now.",  # "for now" keeps, it does not change
    "I moved the helper to utils.py.",  # a verb of change without a value after "to"
    "From now on, write the tests first.",
    "我们现在在做支付模块。",  # "现在" with no value
    "目前还没定下来。",
    # A change planned or asked for has not happened: a task, not a correction.
    "下周要把 Redis 升级到 7.2。",
    "医生让我把体重减到 65 公斤。",
    "We want the standup moved back to 9:30 next month.",
    "We want the standup moved to 9:30 next month.",
    # The value is in another clause than the cue: nothing said to hold now.
    "三天前我去拔了一颗智齿，现在还肿着。",
])
def test_weak_cues_and_moves_without_a_value_are_not_corrections(sentence):
    assert parse_correction(sentence) is None


def test_a_weak_cue_needs_the_same_words_next_to_a_value_of_the_same_kind():
    correction = parse_correction("These days my commute is 40 minutes by bike.")
    assert correction is not None and correction.weak
    assert supersedes("The daily standup is 15 minutes long.", correction) == 0  # no shared word: another subject
    assert supersedes("My commute used to be 25 minutes by train.", correction) > 0


def test_a_change_with_a_verb_before_to_supersedes_the_live_record_in_a_later_batch(coder, l0, run_now):
    l0(coder, [msg("p1", "The payments API runs on Python 3.10, deployed with Gunicorn and four workers.", ts=T, cwd=PROJ)])
    ok(run_now(coder, KIND_L1))
    l0(coder, [msg("p2", "Heads-up: we upgraded the payments API to Python 3.12 last Friday.", session="s2", ts=T + 7 * DAY, cwd=PROJ)])
    run = ok(run_now(coder, KIND_L1))
    live = texts(coder)
    assert any("Python 3.12" in t and "Gunicorn" in t for t in live), live
    assert not any("3.10" in t for t in live), live
    assert run.counts["correctionsOfStored"] == 1


def test_a_chinese_change_with_a_weak_cue_supersedes_the_live_record(chat, l0, run_now):
    l0(chat, [msg("z1", "女儿每天练琴半小时，周末去上课。", session="w1", ts=T)])
    ok(run_now(chat, KIND_L1))
    l0(chat, [msg("z2", "女儿现在每天练琴一个小时了，老师说要多练。", session="w2", ts=T + 10 * DAY)])
    run = ok(run_now(chat, KIND_L1))
    live = texts(chat)
    assert any("一个小时" in t and "周末" in t for t in live), live
    assert not any("半小时" in t for t in live), live
    assert run.counts["correctionsOfStored"] == 1


def test_the_old_record_is_found_by_the_corrections_words_among_many_records(coder, l0, run_now):
    # The deployment record says many things; the change names only the replicas and the new number.
    l0(coder, [
        msg("d1", "We deploy to the payments-prod namespace on Kubernetes, replicas 3, with a readiness probe on /healthz and HPA disabled.",
            ts=T, cwd=PROJ),
        msg("d2", "The payments API stores card tokens in Vault, never in Postgres.", ts=T + 60_000, cwd=PROJ),
        msg("d3", "Refunds are processed by a Celery worker that polls every 5 minutes.", ts=T + 120_000, cwd=PROJ),
    ])
    ok(run_now(coder, KIND_L1))
    l0(coder, [msg("d4", "Traffic doubled after the launch, we're on 6 replicas now.", session="s2", ts=T + 3 * DAY, cwd=PROJ)])
    ok(run_now(coder, KIND_L1))
    live = texts(coder)
    assert any("replicas 6" in t and "readiness probe" in t for t in live), live
    assert not any("replicas 3" in t for t in live), live


def test_a_weak_cue_without_the_same_words_leaves_another_subjects_value_alone(chat, l0, run_now):
    l0(chat, [msg("q1", "My sister's flight lands at 18:30 on Friday, I'm picking her up.", session="w1", ts=T)])
    ok(run_now(chat, KIND_L1))
    l0(chat, [msg("q2", "The pharmacy on our street closes at 19:00 now, they cut the evening shift.", session="w2", ts=T + DAY)])
    run = ok(run_now(chat, KIND_L1))
    live = texts(chat)
    assert any("18:30" in t for t in live), live
    assert any("19:00" in t for t in live), live  # a plain statement of its own
    assert run.counts.get("correctionsOfStored", 0) == 0


def test_a_change_later_in_the_same_batch_rewrites_the_earlier_unit(coder, l0, run_now):
    l0(coder, [
        msg("b1", "The reconciliation job runs nightly with a 20 minutes timeout.", ts=T, cwd=PROJ),
        msg("b2", "OK.", role="assistant", ts=T + 60_000, cwd=PROJ),
        msg("b3", "对账任务的重试间隔是 5 分钟。", ts=T + 120_000, cwd=PROJ),
        msg("b4", "Ops extended the reconciliation timeout to 40 minutes after last night's failure.", ts=T + 180_000, cwd=PROJ),
        msg("b5", "对账任务的重试间隔现在是 10 分钟了，5 分钟太频繁。", ts=T + 240_000, cwd=PROJ),
    ])
    run = ok(run_now(coder, KIND_L1))
    live = texts(coder)
    assert any("40 minutes" in t and "reconciliation" in t for t in live), live
    assert not any("20 minutes" in t for t in live), live
    assert any("10 分钟" in t and "重试间隔" in t for t in live), live
    assert not any("间隔是 5 分钟" in t for t in live), live
    assert run.counts["correctionsInBatch"] == 2


def test_a_value_put_into_other_script_keeps_its_words_apart():
    correction = parse_correction("Mrs. Novak 的课改到 Thursday 6pm 了, 她周一排不开。")
    assert corrected_content("老师是 Mrs. Novak, lesson 每周一下午 5 点。", correction) == "老师是 Mrs. Novak, lesson 每 Thursday 6pm。"


def test_a_span_of_time_names_its_slot_like_a_unit():
    # No word shared but the unit: a strong cue and a span of time still find the record.
    correction = parse_correction("The sync interval is now 15 minutes.")
    assert supersedes("Let's keep 5 minutes for the first week.", correction) > 0
    # A weak cue needs the shared words all the same.
    assert supersedes("Let's keep 5 minutes for the first week.", parse_correction("These days lunch takes 15 minutes.")) == 0


def test_the_same_span_said_with_or_without_a_measure_word_is_one_value(chat, l0, run_now):
    l0(chat, [msg("h1", "我每天晚上练两个小时书法，周末每天四个小时。", session="w1", ts=T)])
    ok(run_now(chat, KIND_L1))
    l0(chat, [msg("h2", "还是练字的事，我每晚练两小时书法，周末一天四小时，这个节奏不变。", session="w2", ts=T + 5 * DAY)])
    ok(run_now(chat, KIND_L1))
    live = texts(chat)
    assert len([t for t in live if "书法" in t]) == 1, live


def test_the_old_record_found_by_words_needs_one_next_to_its_value(chat, l0, run_now):
    l0(chat, [
        msg("k1", "Our holiday budget for Portugal is $4,000 in total.", session="w1", ts=T),
        msg("k2", "Each of the kids gets $50 of pocket money for the trip.", session="w1", ts=T + 60_000),
    ])
    ok(run_now(chat, KIND_L1))
    l0(chat, [msg("k3", "Ugh, we went over once the airline changed the fares and the hotel wanted a deposit, so the holiday budget is more like $6,500 now.", session="w2", ts=T + 2 * DAY)])
    ok(run_now(chat, KIND_L1))
    live = texts(chat)
    assert any("$6,500" in t and "Portugal" in t for t in live), live
    assert not any("$4,000" in t for t in live), live
    assert any("$50 of pocket money" in t for t in live), live  # the other amount, next to none of the correction's words


def test_a_record_names_the_slot_when_a_shared_word_stands_next_to_its_value():
    from apps.pipeline.rules.corrections import names_the_slot

    said = parse_correction("Ugh, the roofer quoted twice and the scaffolding ran late, so the renovation budget is more like 30 grand.")
    assert names_the_slot("The renovation budget is £24,000 at most.", said)
    assert not names_the_slot("The renovation started in March; the scaffolding firm charges £900 a week.", said)
    said_zh = parse_correction("装修师傅又报了一次价，水电也要重做，预算现在得三万五。")
    assert names_the_slot("装修预算三万块，包括厨房。", said_zh)
    assert not names_the_slot("小区物业费每月五百块，车位另算。", said_zh)


@pytest.mark.parametrize(("record", "said", "expected"), [
    # Each new value goes to the clause that names the same thing, whatever the order said.
    ("出差安排：上海两天，杭州三天，最后一天回公司。", "行程有变：杭州改成两天，上海待三天。", "出差安排：上海三天，杭州两天，最后一天回公司。"),
    ("Timeouts: api 30s, worker 120s.", "Correction: worker 90s, api 45s.", "Timeouts: api 45s, worker 90s."),
])
def test_a_correction_of_several_keyed_values_sets_each_where_its_key_is(record, said, expected):
    assert_rewrites(record, said, expected)


def test_a_correction_of_several_keyed_values_leaves_a_record_without_those_keys():
    correction = parse_correction("Correction: worker 90s, api 45s.")
    assert corrected_content("Timeouts: api 30s, cron 120s.", correction) != "Timeouts: api 45s, cron 90s."


def test_an_old_value_said_twice_in_the_record_is_replaced_both_times():
    assert_rewrites("Set MAX_WORKERS to 4 (4 is what the box can take).", "My bad, MAX_WORKERS should be 6, not 4.",
                    "Set MAX_WORKERS to 6 (6 is what the box can take).")


# --------------------------------------------------------------------------- what is true now


@pytest.mark.parametrize(("said", "clause", "old", "new"), [
    ("发布窗口之前是周二，现在改到周四了。", "发布窗口，现在改到周四了。", "周二", "周四"),
    ("缓存 TTL 我从 300 秒调到 600 秒了。", "缓存 TTL 我调到 600 秒了。", "300 秒", "600 秒"),
    ("The standup moved from 9:30 to 10:00 for everyone.", "The standup moved to 10:00 for everyone.", "9:30", "10:00"),
])
def test_a_change_keeps_only_what_is_true_now_in_its_clause(said, clause, old, new):
    correction = parse_correction(said)
    assert (correction.clause, correction.old, correction.new) == (clause, old, new)


@pytest.mark.parametrize(("text", "expected"), [
    ("体重现在68公斤，目标是63公斤。", [("number:公斤", "68公斤"), ("number:公斤", "63公斤")]),
    ("打卡半径是300米了", [("number:米", "300米")]),
    ("推理跑在 T4 上", [("host", "T4")]),  # a name with a digit is not a number; it names where inference runs
    ("每周一三五练瑜伽", [("weekday", "一三五")]),
    ("周一周五都加班", [("weekday", "周一"), ("weekday", "周五")]),
    ("每周五次", [("count:次", "五")]),
])
def test_numbers_next_to_chinese_and_weekdays_by_number_are_typed(text, expected):
    assert values(text) == expected


def test_weekdays_said_by_number_are_rewritten_as_one_value():
    assert_rewrites("每周一三五晚上练瑜伽，在公司楼下。", "瑜伽现在改到二四了，周一老开会。", "每周二四晚上练瑜伽，在公司楼下。")


def test_a_change_said_with_its_old_value_is_stored_without_it(chat, l0, run_now):
    l0(chat, [
        msg("n1", "停车位月租从 400 块涨到 450 块了，物业刚通知的。", ts=T),
        msg("n2", "周会之前是周一，现在改到周三了。", ts=T + 1000),
    ])
    ok(run_now(chat, KIND_L1))
    text = "\n".join(texts(chat))
    assert "450" in text and "400" not in text
    assert "周三" in text and "周一" not in text


def test_a_correction_that_says_the_value_the_record_holds_changes_nothing(chat, l0, run_now):
    l0(chat, [
        msg("k1", "I need gift ideas for my nephew, he's turning 9 next month.", ts=T),
        msg("k2", "Anything with trains works, he has a huge wooden set.", ts=T + 1000),
        msg("k3", "Sorry, I meant he's turning 10, not 9 — I keep forgetting his party was in summer… no wait, his birthday is in October, he turns 10.",
            ts=T + 2000),
    ])
    ok(run_now(chat, KIND_L1))
    nephew = [t for t in texts(chat) if "nephew" in t]
    assert len(nephew) == 1 and "10" in nephew[0] and "turning 9" not in nephew[0], texts(chat)


@pytest.mark.parametrize(("said", "clause"), [
    ("午休是一个小时……不对，一个半小时，下午两点前回来就行。", "午休是一个半小时，下午两点前回来就行。"),
    ("The nightly export keeps 7 days… no wait, 14 days, not 7, legal asked for two weeks.",
     "The nightly export keeps 14 days, legal asked for two weeks."),
    ("用的是 Ubuntu 20.04…… 搞错了，是 Ubuntu 22.04，not Ubuntu 20.04，20.04 是旧机器的。", "用的是 Ubuntu 22.04。"),
])
def test_a_self_correction_after_an_ellipsis_is_the_sentence_as_corrected(said, clause):
    from apps.pipeline.rules.corrections import self_corrected

    assert self_corrected(said).clause == clause


@pytest.mark.parametrize("said", [
    "我想想……还是算了。",  # no correction after the ellipsis
    "Sorry, I meant 8, not 7 — it was in spring… no wait, in December, she turns 8.",  # the first part corrects already
])
def test_an_ellipsis_without_a_correction_of_what_came_before_changes_nothing(said):
    from apps.pipeline.rules.corrections import self_corrected

    assert self_corrected(said) is None


def test_a_self_corrected_statement_is_stored_corrected_and_rewrites_an_earlier_record(coder, l0, run_now):
    l0(coder, [msg("e1", "Invoices are archived after 90 days in cold storage.", cwd=PROJ, ts=T)])
    ok(run_now(coder, KIND_L1))
    l0(coder, [
        msg("e2", "The archive job keeps invoices 90 days… wait, 180 days, finance wants half a year.", session="s2", cwd=PROJ, ts=T + DAY),
        msg("e3", "对了，付款回调的重试间隔是 30 秒…… 不对，60 秒，第三方限流了。", session="s2", cwd=PROJ, ts=T + DAY + 1000),
    ])
    ok(run_now(coder, KIND_L1))
    text = "\n".join(texts(coder))
    assert "180 days" in text and "90 days" not in text, texts(coder)
    assert "60 秒" in text and "30 秒" not in text and "不对" not in text, texts(coder)


def test_a_long_chinese_correction_finds_its_record_by_the_word_it_shares(chat, l0, run_now):
    l0(chat, [msg("c1", "女儿的婚宴定在老家办，请了三十桌，想办得简单一点，预算十五万以内。", ts=T)])
    ok(run_now(chat, KIND_L1))
    l0(chat, [msg("c2", "ok，预算我跟亲家商量完压到十二万了，烟酒糖茶都得省着点。", session="s2", ts=T + DAY)])
    ok(run_now(chat, KIND_L1))
    text = "\n".join(texts(chat))
    assert "十二万" in text and "十五万" not in text, texts(chat)


@pytest.mark.parametrize(("record", "said", "expected"), [
    ("The deadband on the chiller is 1.5 °C either side of the target.", "We narrowed the deadband to 1.0 °C last night.",
     "The deadband on the chiller is 1.0 °C either side of the target."),
    ("The worker pool runs 4 processes per node.", "Ops doubled the worker pool to 8 processes per node.",
     "The worker pool runs 8 processes per node."),
])
def test_more_verbs_of_change_rewrite_the_old_value(record, said, expected):
    assert_rewrites(record, said, expected)


@pytest.mark.parametrize("sentence", [
    "Put this on the list: retry the webhook deliveries that failed during the outage.",
    "把导出 PDF 的字体问题加到待办里。",
])
def test_putting_something_on_the_list_is_a_task(sentence):
    from apps.pipeline.rules.extract import classify

    assert classify(sentence, role="user") == "task"


def test_a_change_to_a_new_name_with_a_value_beside_it_replaces_the_record_of_that_statement(coder, l0, run_now):
    l0(coder, [
        msg("g1", "推理现在跑在一张 T4 上，batch size 8。", session="s1", ts=T, cwd=PROJ),
        msg("g2", "The nightly settlement job runs with 8 workers.", session="s1", ts=T + 60_000, cwd=PROJ),
    ])
    ok(run_now(coder, KIND_L1))
    l0(coder, [msg("g3", "运维那边给我们换了卡，现在是 A10 了，batch size 16。", session="s2", ts=T + DAY, cwd=PROJ)])
    run = ok(run_now(coder, KIND_L1))
    live = texts(coder)
    # "A10" is no typed value; "16" beside it, next to the record's own words, says which record changed.
    assert "运维那边给我们换了卡，现在是 A10 了，batch size 16。" in live
    assert not any("T4" in t for t in live)
    assert "The nightly settlement job runs with 8 workers." in live  # another 8, no shared words
    assert run.counts["correctionsOfStored"] == 1


def test_a_value_beside_a_new_name_needs_words_the_record_shares():
    correction = parse_correction("Ops swapped the card, it's now an A10, batch size 16.")
    assert correction is not None and correction.new and not values(correction.new)
    assert supersedes("The Kafka topic has 12 partitions.", correction) == 0
    assert supersedes("Inference runs on a T4 with batch size 8.", correction) > 0


def test_a_changed_value_keeps_its_shape_so_the_record_written_alike_is_meant():
    correction = parse_correction("Go 版本上周升到 1.22 了，可以用 range over int 了。")
    assert correction is not None
    version = supersedes("后端是用 Go 1.21 写的。", correction)
    ttl = supersedes("我在 internal/code/store.go 里改成了 SET key value EX 300 NX。", correction)
    # Both share "go"; a dotted version replaces a dotted version, and "EX 300" is EX's own number
    # (a name's version is replaced only by a change that names it), so the TTL record is no candidate.
    assert version > 0 and ttl == 0


def test_a_version_upgrade_rewrites_the_version_and_not_a_number_of_a_file_record(coder, l0, run_now):
    l0(coder, [
        msg("v1", "这个仓库是短信验证码服务，后端是用 Go 1.21 写的。", session="s1", ts=T, cwd=PROJ),
        msg("v2", "验证码 TTL 没设。我在 internal/code/store.go 里改成了 SET key value EX 300 NX。", session="s1", ts=T + 60_000,
            role="assistant", cwd=PROJ),
    ])
    ok(run_now(coder, KIND_L1))
    assert any("store.go" in t and "EX 300" in t for t in texts(coder)), texts(coder)
    l0(coder, [msg("v3", "Go 版本上周升到 1.22 了，可以用 range over int 了。", session="s2", ts=T + 14 * DAY, cwd=PROJ)])
    ok(run_now(coder, KIND_L1))
    live = texts(coder)
    assert any("Go 1.22" in t for t in live) and not any("Go 1.21" in t for t in live), live
    assert any("store.go" in t and "EX 300" in t for t in live), live
