"""The rules driver keeps up with what the user says (SPEC §5 [2026-12]): corrections in a
batch and against earlier batches, forget requests (also of high-value records), rules
that run across ';' and follow-ups, accepted and declined proposals, restatements, plain
personal and project statements, repository scope, speakers and relative dates, and L3
proposals that take only durable traits and name their sources."""

from __future__ import annotations

import pytest

from apps.pipeline.models import KIND_L1, KIND_L2, KIND_L3
from apps.records.models import L1Change, L1Record
from apps.records.selectors import record_lineage
from tests.pipeline.conftest import code_profile, msg, ok
from tests.pipeline.conftest import live_records as live

PROJ = "/home/dev/warehouse-etl"
T = 1764400000000  # 2025-11-29T07:06:40Z


def live_text(profile) -> str:
    return "\n".join(r.content for r in live(profile))


def pyramid(profile, run_now):
    """L0 → L1 → L2 → L3, each run succeeding."""
    for kind in (KIND_L1, KIND_L2, KIND_L3):
        ok(run_now(profile, kind))


@pytest.fixture
def coder(make_profile):
    return code_profile(make_profile, "etl", PROJ)


def code_msg(mid, content, i, role="user", session="s1"):
    return msg(mid, content, role=role, session=session, ts=T + i * 60_000, cwd=PROJ)


def test_a_correction_in_the_same_batch_stores_only_the_corrected_value(coder, l0, run_now):
    l0(coder, [
        code_msg("c1", "The staging database listens on port 5432.", 0),
        code_msg("c2", "Noted.", 1, role="assistant"),
        code_msg("c3", "Sorry, I was wrong — the port is 5433, not 5432.", 2),
    ])
    run = ok(run_now(coder, KIND_L1))
    text = live_text(coder)
    assert "5433" in text and "5432" not in text
    record = next(r for r in live(coder) if "5433" in r.content)
    assert record.content == "The staging database listens on port 5433."
    assert record.source_message_ids == ["c1", "c3"]
    assert run.counts["correctionsInBatch"] == 1


def test_a_correction_in_a_later_batch_replaces_the_live_record_with_a_version_chain(make_profile, l0, run_now):
    chat = make_profile("team", "chat")
    l0(chat, [msg("z1", "我们组每周二下午三点开周会。", session="w1", ts=T)])
    ok(run_now(chat, KIND_L1))
    old = next(r for r in live(chat) if "周二" in r.content)
    l0(chat, [msg("z2", "不是周二，是周四，上个月就改了。", session="w2", ts=T + 86_400_000)])
    run = ok(run_now(chat, KIND_L1))
    old.refresh_from_db()
    assert old.deleted and old.replaced_by
    new = L1Record.objects.get(profile=chat, record_id=old.replaced_by)
    assert new.content == "我们组每周四下午三点开周会。" and new.version == old.version + 1
    assert new.source_message_ids == ["z2"]
    assert record_lineage(profile=chat, record_id=new.record_id)["replaces"] == [old.record_id]
    assert "周二" not in live_text(chat)
    assert run.counts["correctionsOfStored"] == 1 and run.counts["tombstoned"] == 1


def test_an_english_correction_without_the_old_value_finds_the_record_by_its_words(coder, l0, run_now):
    l0(coder, [code_msg("n1", "The CI image runs on Node 20.", 0)])
    ok(run_now(coder, KIND_L1))
    l0(coder, [code_msg("n2", "My bad, we moved to Node 22 last sprint.", 5, session="s2")])
    ok(run_now(coder, KIND_L1))
    text = live_text(coder)
    assert "Node 22" in text and "Node 20" not in text


def test_a_forget_request_tombstones_even_a_high_value_record_and_stores_nothing_of_it(chat, l0, run_now):
    from apps.hitstats.models import RecordHits

    l0(chat, [
        msg("f1", "My ex Jordan moved to Porto last year.", session="a", ts=T),
        msg("f2", "I'm vegetarian, by the way.", session="a", ts=T + 1000),
    ])
    ok(run_now(chat, KIND_L1))
    ok(run_now(chat, KIND_L2))  # the record is now a scene-block member: high value
    ex = next(r for r in live(chat) if "Jordan" in r.content)
    RecordHits.objects.create(profile=chat, record_id=ex.record_id, hits=9)
    l0(chat, [msg("f3", "Please forget what I said about my ex. I'd rather not have that around.", session="b", ts=T + 86_400_000)])
    run = ok(run_now(chat, KIND_L1))
    ex.refresh_from_db()
    assert ex.deleted and ex.metadata["tombstoneReason"] == "user-forget"
    change = L1Change.objects.filter(record=ex).last()
    assert change.action == "tombstone" and change.note["reason"] == "user-forget"
    assert "Jordan" not in live_text(chat) and " ex" not in live_text(chat)
    assert not L1Record.objects.filter(profile=chat, source_message_ids__icontains="f3").exists()
    assert "vegetarian" in live_text(chat)  # other memories stay
    assert run.counts["forgotten"] == 1


def test_a_chinese_forget_of_what_was_just_said_in_the_same_batch(chat, l0, run_now):
    l0(chat, [
        msg("g1", "我最近体重涨到了七十五公斤。", session="c", ts=T),
        msg("g2", "嗯嗯，理解。", role="assistant", session="c", ts=T + 1000),
        msg("g3", "算了，这条别记了。", session="c", ts=T + 2000),
        msg("g4", "我对海鲜过敏。", session="c", ts=T + 3000),
    ])
    run = ok(run_now(chat, KIND_L1))
    text = live_text(chat)
    assert "体重" not in text and "海鲜" in text
    assert run.counts["forgottenInBatch"] == 1


def test_a_rule_across_semicolons_stays_one_record(coder, l0, run_now):
    l0(coder, [code_msg("r1", "Use tabs in the Go files; two spaces in the YAML; don't combine the two in one file.", 0)])
    ok(run_now(coder, KIND_L1))
    records = live(coder)
    assert len(records) == 1
    assert records[0].content == "Use tabs in the Go files; two spaces in the YAML; don't combine the two in one file."


def test_a_list_stays_with_the_line_that_introduces_it(coder, l0, run_now):
    l0(coder, [code_msg("l1", "Two rules for the loader:\n- never truncate a partition table\n- always write to a staging schema first", 0)])
    ok(run_now(coder, KIND_L1))
    records = live(coder)
    assert len(records) == 1 and "loader" in records[0].content and "staging schema" in records[0].content


def test_an_anaphoric_follow_up_joins_what_it_refers_to(coder, l0, run_now):
    l0(coder, [
        code_msg("a1", "请求超时设成 30 秒，重试 3 次，退避用指数。", 0),
        code_msg("a2", "好的，已经改好了。", 1, role="assistant"),
        code_msg("a3", "以后都照这个来。", 2),
    ])
    run = ok(run_now(coder, KIND_L1))
    records = live(coder)
    assert len(records) == 1
    record = records[0]
    assert "30 秒" in record.content and "以后都照这个来" in record.content
    assert record.source_message_ids == ["a1", "a3"] and record.type == "work_method"
    assert run.counts["followUpsMerged"] == 1


@pytest.mark.parametrize("content, said, pointer", [
    ("Also, I write in British English: 'organise', 'colour'. Please stick to that in anything you write for me.", "organise", "stick to that"),
    ("周报里的数字一律保留一位小数吧，看着整齐。", None, None),  # a rule of its own: no pointer, nothing joined
    ("周报里的数字保留一位小数。以后都照这个来。", "一位小数", "照这个来"),
])
def test_a_pointer_rule_takes_its_content_from_the_sentence_before_it_that_no_pattern_took(coder, l0, run_now, content, said, pointer):
    l0(coder, [code_msg("b1", content, 0)])
    ok(run_now(coder, KIND_L1))
    records = live(coder)
    assert len(records) == 1, [r.content for r in records]
    if pointer:
        # One record that says what the rule is, not a bare "stick to that".
        assert said in records[0].content and pointer in records[0].content
        assert records[0].type == "work_method"


def test_an_accepted_proposal_is_stored_as_its_content_and_a_declined_one_is_not(coder, l0, run_now):
    l0(coder, [
        code_msg("p1", "The nightly load failed again because a migration could not be rolled back.", 0),
        code_msg("p2", "Shall I add a rule that every migration must ship with a tested down step?", 1, role="assistant"),
        code_msg("p3", "yes, add that rule — exactly what we want", 2),
        code_msg("p4", "I suggest we also cache the warehouse credentials in Redis.", 3, role="assistant"),
        code_msg("p5", "No, not now.", 4),
    ])
    ok(run_now(coder, KIND_L1))
    records = live(coder)
    rule = next(r for r in records if "down step" in r.content)
    assert rule.content == "Every migration must ship with a tested down step"
    assert rule.source_message_ids == ["p2", "p3"] and rule.type == "work_method"
    assert not any("exactly what we want" in r.content for r in records)
    assert "Redis" not in live_text(coder)


def test_zh_the_no_of_a_declined_proposal_is_no_rule_and_what_follows_it_stands_alone(coder, l0, run_now):
    l0(coder, [
        code_msg("n1", "提交信息统一用中文写。", 0),
        code_msg("n2", "收到。要不要顺便把 MyBatis 换成 JPA？", 1, role="assistant"),
        code_msg("n3", "不要，团队都熟 MyBatis。", 2),
        code_msg("n4", "要不要在后端把时间都转成北京时间？", 3, role="assistant"),
        code_msg("n5", "别在后端拼 +8，一律存 UTC。", 4),
        code_msg("n6", "要不要我把索引刷新间隔调大一点？", 5, role="assistant"),
        code_msg("n7", "不要，搜索那边要求 1 秒内可见。", 6),
    ])
    run = ok(run_now(coder, KIND_L1))
    contents = [r.content for r in live(coder)]
    # "不要，…" answers the proposal: no record opens with it or says it as a rule.
    assert not any(c.startswith(("不要", "不用")) for c in contents), contents
    assert not any("JPA" in c for c in contents)
    # A rule that opens with 别 and no separator is the rule itself, kept whole.
    assert "别在后端拼 +8，一律存 UTC。" in contents
    # The reason after the "no" is read on its own: a requirement with its figure is kept.
    requirement = next(r for r in live(coder) if "1 秒" in r.content)
    assert requirement.content == "搜索那边要求 1 秒内可见。" and requirement.type == "work_method"
    assert run.counts["proposalsDeclined"] == 3


def test_no_followed_by_a_rule_keeps_the_rule_without_the_no(coder, l0, run_now):
    l0(coder, [
        code_msg("m1", "Want me to switch the install step to npm ci?", 0, role="assistant"),
        code_msg("m2", "No, we always use pnpm in this repo.", 1),
        code_msg("m3", "Should I bump the Lambda timeout to 5 minutes?", 2, role="assistant"),
        code_msg("m4", "Nah, not now.", 3),
    ])
    ok(run_now(coder, KIND_L1))
    contents = [r.content for r in live(coder)]
    assert contents == ["We always use pnpm in this repo."], contents


def test_a_shortened_restatement_of_a_live_rule_is_not_stored_twice(coder, l0, run_now):
    l0(coder, [code_msg("d1", "Always run the full dbt test suite before tagging a release of the warehouse models.", 0)])
    ok(run_now(coder, KIND_L1))
    l0(coder, [code_msg("d2", "Always run the dbt test suite before tagging a release.", 3, session="s2")])
    run = ok(run_now(coder, KIND_L1))
    assert len([r for r in live(coder) if "dbt" in r.content]) == 1
    assert run.counts["recordsSkipped"] == 1


def test_an_exact_repeat_of_a_live_record_is_skipped_without_embedding(coder, l0, run_now):
    l0(coder, [code_msg("x1", "The staging database listens on port 5433.", 0)])
    ok(run_now(coder, KIND_L1))
    l0(coder, [code_msg("x2", "the staging database listens on port 5433", 3, session="s2")])
    run = ok(run_now(coder, KIND_L1))
    assert run.counts["dedupExactRepeats"] == 1 and run.counts["recordsSkipped"] == 1
    assert "toolCalls.embed_and_search" not in run.counts  # nothing was left to search for
    assert len([r for r in live(coder) if "5433" in r.content]) == 1


def test_a_restatement_and_a_changed_value_in_one_batch_are_one_record(coder, l0, run_now):
    l0(coder, [
        code_msg("y1", "In this repo, never commit the generated protobuf stubs.", 0),
        code_msg("y2", "Noted.", 1, role="assistant"),
        code_msg("y3", "Never commit the protobuf stubs.", 2),
        code_msg("y4", "The billing service listens on port 8000.", 3),
        code_msg("y5", "The billing service listens on port 9000.", 4),
    ])
    run = ok(run_now(coder, KIND_L1))
    stubs = [r for r in live(coder) if "protobuf" in r.content]
    assert len(stubs) == 1 and stubs[0].source_message_ids == ["y1", "y3"]
    ports = [r.content for r in live(coder) if "billing" in r.content]
    assert ports == ["The billing service listens on port 9000."]
    assert run.counts["dedup.replacedInBatch"] == 1


def test_zh_a_restatement_in_the_same_batch_cites_both_messages(coder, l0, run_now):
    l0(coder, [
        code_msg("z1", "本项目的提交信息统一用英文写，不要用中文。", 0),
        code_msg("z2", "好的。", 1, role="assistant"),
        code_msg("z3", "提交信息统一用英文写。", 2),
    ])
    ok(run_now(coder, KIND_L1))
    rules = [r for r in live(coder) if "提交信息" in r.content]
    assert len(rules) == 1 and rules[0].source_message_ids == ["z1", "z3"]


def test_a_repo_rule_is_scoped_to_the_project_and_a_personal_habit_is_global(coder, l0, run_now):
    l0(coder, [
        code_msg("s1", "This repo is our nightly ETL into the warehouse.", 0),
        code_msg("s2", "In this repo, never commit the generated protobuf stubs.", 1),
        code_msg("s3", "I always write commit messages in English, in every project.", 2),
    ])
    ok(run_now(coder, KIND_L1))
    by = {r.source_message_ids[0]: r for r in live(coder)}
    assert by["s1"].type == "work_fact" and by["s1"].metadata["scope"] == "self" and by["s1"].metadata["project"] == PROJ
    assert by["s2"].type == "work_method" and by["s2"].metadata["scope"] == "self" and by["s2"].metadata["project"] == PROJ
    assert by["s3"].metadata["scope"] == "global" and by["s3"].metadata["project"] == ""


@pytest.mark.parametrize("sentence", [
    "I don't eat mushrooms.",
    "我对海鲜过敏。",
    "Our cat is called Mochi.",
    "我女儿今年上二年级。",
    "My brother lives in Lisbon.",
])
def test_plain_personal_statements_in_chat_become_persona_records(chat, l0, run_now, sentence):
    l0(chat, [msg("q1", sentence, session="p", ts=T)])
    ok(run_now(chat, KIND_L1))
    records = live(chat)
    assert [(r.content, r.type) for r in records] == [(sentence, "persona")]


def test_a_named_speaker_and_relative_dates_are_kept_in_every_record_of_the_turn(chat, l0, run_now):
    l0(chat, [
        msg("t1", "Mara: I adopted a puppy yesterday. She is called Pixel and I'm taking her to puppy class next week.", session="m", ts=T),
        msg("t2", "Jon: Oh nice, I have a cat myself. Her name is Soot.", role="assistant", session="m", ts=T + 1000),
        msg("t3", "Mara: Ha. Retries: that's how many times Pixel tried to climb the stairs.", session="m", ts=T + 2000),
        msg("t4", "Jon: Cute. See you at the park tomorrow then.", role="assistant", session="m", ts=T + 3000),
    ])
    ok(run_now(chat, KIND_L1))
    records = live(chat)
    mara = [r for r in records if "t1" in r.source_message_ids]
    assert mara and all(r.content.startswith("Mara: ") for r in mara)
    assert any(r.content.startswith("Jon: ") and "Soot" in r.content for r in records)  # the other person's turns are evidence too
    text = live_text(chat)
    assert "yesterday (2025-11-28)" in text and "next week (week of 2025-12-06)" in text


def test_a_label_that_opens_one_message_only_is_not_a_speaker(coder, l0, run_now):
    l0(coder, [code_msg("w1", "Retries: max 5 attempts with exponential backoff; never retry on a 4xx from the mail API.", 0)])
    ok(run_now(coder, KIND_L1))
    assert [r.content for r in live(coder)] == ["Retries: max 5 attempts with exponential backoff; never retry on a 4xx from the mail API."]


def test_l3_takes_only_durable_traits_and_names_their_sources(chat, l0, run_now):
    from apps.persona.models import PersonaProposal

    l0(chat, [
        msg("h1", "I'm a night-shift nurse, so I sleep until about two in the afternoon.", session="h", ts=T),
        msg("h2", "Please always answer me in short bullet points.", session="h", ts=T + 1000),
        msg("h3", "Don't forget to remind me to add the e2e tests for the booking flow.", session="h", ts=T + 2000),
        msg("h4", "Yesterday I went to the dentist.", session="h", ts=T + 3000),
    ])
    pyramid(chat, run_now)
    entries = PersonaProposal.objects.get(profile=chat).entries
    texts = [e["text"] for e in entries]
    assert any("nurse" in t for t in texts) and any("bullet points" in t for t in texts)
    assert not any("e2e" in t or "dentist" in t for t in texts)
    by_id = {r.record_id: r for r in L1Record.objects.filter(profile=chat)}
    for entry in entries:
        assert entry["sources"], entry
        assert all(by_id[s].content.startswith(entry["text"][:20]) for s in entry["sources"])


def test_l3_in_code_mode_refuses_project_rules_and_tasks(coder, l0, run_now):
    from apps.persona.models import PersonaProposal

    l0(coder, [
        code_msg("k1", "In this repo, never commit the generated protobuf stubs.", 0),
        code_msg("k2", "I always squash my commits before opening a pull request, in every project.", 1),
        code_msg("k3", "We still need to add the e2e tests for the loader.", 2),
    ])
    pyramid(coder, run_now)
    texts = [e["text"] for e in PersonaProposal.objects.get(profile=coder).entries]
    assert any("squash" in t for t in texts)
    assert not any("protobuf" in t or "e2e" in t for t in texts)


def test_l2_keeps_one_topic_in_one_block_across_languages_and_opens_with_a_summary(coder, l0, run_now):
    from apps.pipeline.rules.l2 import block_filename
    from apps.scenes.models import SceneBlock

    l0(coder, [
        code_msg("b1", "In this repo, never commit the generated protobuf stubs.", 0),
        code_msg("b2", "本项目的提交信息统一用英文写。", 1),
        code_msg("b3", "We still need to add the e2e tests for the loader.", 2),
    ])
    ok(run_now(coder, KIND_L1))
    conventions = [r for r in live(coder) if r.type == "work_method"]
    assert len(conventions) == 2 and len({r.scene_name for r in conventions}) == 1
    l0(coder, [code_msg("b4", "本仓库禁止直接往 main 分支推代码。", 3, session="s2")])
    ok(run_now(coder, KIND_L1))
    assert len({r.scene_name for r in live(coder) if r.type == "work_method"}) == 1
    ok(run_now(coder, KIND_L2))
    block = SceneBlock.objects.get(profile=coder, removed=False, filename=block_filename(conventions[0].scene_name))
    body = block.content.splitlines()
    assert body[0].startswith("# ")
    assert body[2].startswith(("3 memories: 3 conventions.", "共 3 条记忆：3 条工作约定。")), body[2]
    assert "protobuf" in body[2] and body[4].startswith("## ")


def test_between_people_every_turn_that_says_something_is_cited_but_small_talk_is_not(chat, l0, run_now):
    l0(chat, [
        msg("v1", "Ana: I'm going to Porto in March with my cousin.", session="v", ts=T),
        msg("v2", "Ben: Take the 28 tram early in the morning, before the crowds.", role="assistant", session="v", ts=T + 1000),
        msg("v3", "Ana: Ha, thanks!", session="v", ts=T + 2000),
        msg("v4", "Ben: Taking care of ourselves is so important, don't overdo it with work.", role="assistant", session="v", ts=T + 3000),
    ])
    ok(run_now(chat, KIND_L1))
    cited = {ref for r in live(chat) for ref in r.source_message_ids}
    assert {"v1", "v2"} <= cited and not cited & {"v3", "v4"}
    assert any(r.content == "Ben: Take the 28 tram early in the morning, before the crowds." for r in live(chat))


def test_another_ticket_is_another_statement_not_a_correction(coder, l0, run_now):
    # One dropped word ("billing" or "0") and one changed number read as a refinement; the
    # ticket number says they are two things.
    l0(coder, [
        code_msg("t1", "We decided that ticket 0 for the billing module belongs to sprint 0.", 0),
        code_msg("t2", "We decided that ticket 10 for the billing module belongs to sprint 1.", 1),
        code_msg("t4", "We decided that ticket 1 for the search module belongs to sprint 0.", 2),
        code_msg("t5", "We decided that ticket 100 for the billing module belongs to sprint 10.", 3),
    ])
    run = ok(run_now(coder, KIND_L1))
    tickets = sorted(r.source_message_ids[0] for r in live(coder) if "ticket" in r.content)
    assert tickets == ["t1", "t2", "t4", "t5"]
    assert not run.counts.get("dedup.replacedInBatch")
    l0(coder, [code_msg("t3", "We decided that ticket 10 for the billing module belongs to sprint 2.", 2, session="s2")])
    ok(run_now(coder, KIND_L1))
    # One changed value of the same ticket is still an update.
    by = {r.source_message_ids[0]: r.content for r in live(coder) if "ticket" in r.content}
    assert sorted(by) == ["t1", "t3", "t4", "t5"]
    assert by["t3"] == "We decided that ticket 10 for the billing module belongs to sprint 2."


def test_two_changed_values_are_another_statement(coder, l0, run_now):
    l0(coder, [
        code_msg("c1", "We decided that the retries wait 2 s and time out after 2 s.", 0),
        code_msg("c2", "We decided that the retries wait 5 s and time out after 30 s.", 1),
    ])
    ok(run_now(coder, KIND_L1))
    assert sorted(r.source_message_ids[0] for r in live(coder) if "retries" in r.content) == ["c1", "c2"]


def test_a_durable_state_restated_in_other_words_is_one_record(chat, l0, run_now):
    # "吃素" and "不吃肉" share no word and score far apart: the state is what they share.
    l0(chat, [code_msg("d1", "我吃素，蛋白质主要靠豆腐。", 0)])
    ok(run_now(chat, KIND_L1))
    l0(chat, [code_msg("d2", "提醒一下我不吃肉，推荐食谱的时候别忘了。", 1, session="s2"),
              code_msg("d3", "I don't drink alcohol at all.", 2, session="s2"),
              code_msg("d4", "Just so you know, I'm teetotal, so skip the wine pairings.", 3, session="s2")])
    run = ok(run_now(chat, KIND_L1))
    diet = [r for r in live(chat) if "吃素" in r.content or "不吃肉" in r.content]
    assert len(diet) == 1 and "吃素" in diet[0].content and "不吃肉" in diet[0].content
    drink = [r for r in live(chat) if "alcohol" in r.content or "teetotal" in r.content]
    assert len(drink) == 1, ([(r.content, r.type) for r in drink], run.counts)
    assert "teetotal" in drink[0].content and drink[0].source_message_ids == ["d3", "d4"]
    # One against the live record of the first session, one within the second session's batch.
    assert run.counts.get("dedup.sameState") == 1 and run.counts.get("dedup.mergedInBatch") == 1


def test_someone_elses_state_is_not_a_restatement(chat, l0, run_now):
    l0(chat, [code_msg("e1", "I'm vegetarian, have been for years.", 0)])
    ok(run_now(chat, KIND_L1))
    l0(chat, [code_msg("e2", "My wife is vegetarian too, she never eats meat.", 1, session="s2")])
    run = ok(run_now(chat, KIND_L1))
    assert not run.counts.get("dedup.sameState")
    assert sorted(r.source_message_ids[0] for r in live(chat) if "vegetarian" in r.content) == ["e1", "e2"]


def test_an_acceptance_that_repeats_the_proposal_adds_nothing_to_it(coder, l0, run_now):
    l0(coder, [
        code_msg("r1", "Checkout calls to the fraud service time out under load.", 0),
        code_msg("r2", "建议把 fraud client 的超时调到 60 秒，同时加上一次重试。", 1, role="assistant"),
        code_msg("r3", "好，调到 60 秒。", 2),
    ])
    ok(run_now(coder, KIND_L1))
    rule = [r for r in live(coder) if "重试" in r.content]
    assert len(rule) == 1 and rule[0].content.count("60") == 1, [r.content for r in live(coder)]
    assert rule[0].source_message_ids == ["r2", "r3"]
