"""Language-aware ranking rules (apps/search/ranking.py) and the query pseudo-translation
(bilingual.translate): pure functions, no index."""

from __future__ import annotations

import pytest

from apps.search import bilingual, ranking, services, sparse
from apps.search.ranking import Scored


def _pool(*items: tuple[str, float]) -> list[Scored]:
    return [Scored(rid, score) for rid, score in items]


# ------------------------------------------------------- language references
def test_each_language_is_measured_against_its_own_background():
    # Chinese records sit higher for every query: the English answer is below three
    # unrelated Chinese records by cosine, but stands out further from its own language.
    pool = _pool(("zh1", 0.50), ("zh2", 0.49), ("zh3", 0.48), ("en_answer", 0.45), ("zh4", 0.30), ("en1", 0.20),
                 ("en2", 0.19))
    langs = {rid: ("en" if rid.startswith("en") else "zh") for rid, _ in [(c.record_id, 0) for c in pool]}
    margins = ranking.language_margins(pool, langs, rank=3, floor=0.0)
    assert margins["en_answer"] == pytest.approx(0.45 - 0.19)
    assert margins["zh1"] == pytest.approx(0.50 - 0.48)
    assert next(c.record_id for c in ranking.by_margin(pool, margins)) == "en_answer"


def test_a_language_with_few_records_counts_the_missing_ones_at_the_floor():
    pool = _pool(("zh1", 0.6), ("zh2", 0.5), ("en1", 0.4))
    refs = ranking.language_references(pool, {"zh1": "zh", "zh2": "zh", "en1": "en"}, rank=2, floor=0.1)
    assert refs["zh"] == pytest.approx(0.5)  # enough Chinese records: the 2nd best
    assert refs["en"] == pytest.approx(0.1)  # one English record: the missing one counts at the floor
    refs = ranking.language_references(pool, {"zh1": "zh", "zh2": "zh", "en1": "en"}, rank=2, floor=0.55)
    assert refs["zh"] == pytest.approx(0.55)  # never below the floor


def test_a_single_record_store_still_lets_a_matching_record_stand_out():
    pool = _pool(("only", 0.7))
    margins = ranking.language_margins(pool, {"only": "en"})
    assert margins["only"] == pytest.approx(0.7 - ranking.REF_FLOOR)


def test_records_without_a_language_are_not_live_and_drop_out():
    pool = _pool(("ghost", 0.9), ("live", 0.5))
    margins = ranking.language_margins(pool, {"live": "en"})
    assert set(margins) == {"live"}
    assert [c.record_id for c in ranking.by_margin(pool, margins)] == ["live"]


# ------------------------------------------------------------ merged sparse side
def test_a_record_takes_its_better_rank_of_the_two_sparse_lists():
    original = _pool(("zh_a", 9.0), ("zh_b", 8.0), ("en_x", 1.0))
    translated = _pool(("en_x", 7.0), ("en_y", 5.0))
    merged = [c.record_id for c in ranking.merge_by_rank(original, translated)]
    # en_x is first of the translated list: it ties with zh_a (first of the original),
    # and ties go to the original query's list.
    assert merged == ["zh_a", "en_x", "zh_b", "en_y"]


def test_the_translated_list_gives_the_other_language_a_seat_in_the_fusion():
    cands = services.Candidates(
        [], limit=5,
        dense=[],
        sparse=[services.index.Candidate("zh_a", 9.0), services.index.Candidate("zh_b", 8.5)],
        sparse_translated=[services.index.Candidate("en_x", 4.0)],
    )
    ranked = services.rank_candidates(cands, {"zh_a": "zh", "zh_b": "zh", "en_x": "en"})
    ranks = {r.record_id: r.sparse_rank for r in ranked}
    assert ranks["en_x"] == 2 and ranks["zh_b"] == 3


def test_a_dead_candidate_takes_no_rank():
    cands = services.Candidates(
        [], limit=5,
        dense=[services.index.Candidate("gone", 0.9), services.index.Candidate("live", 0.5)],
        sparse=[services.index.Candidate("gone", 5.0), services.index.Candidate("live", 4.0)],
    )
    ranked = services.rank_candidates(cands, {"live": "en"})
    assert [(r.record_id, r.dense_rank, r.sparse_rank) for r in ranked] == [("live", 1, 1)]
    assert ranked[0].dense_score == pytest.approx(0.5)  # the cosine, not the margin
    assert ranked[0].margin == pytest.approx(0.5 - ranking.REF_FLOOR)


# ------------------------------------------------- a stand-in vote across languages
def _cross_language_case(query_language: str = "zh", worded: bool = True) -> services.Candidates:
    # The English answer is the dense side's first; no BM25 list holds it (no word in common);
    # two Chinese records both sides list in the middle would outrank it in plain RRF.
    return services.Candidates(
        [], limit=15,
        dense=[services.index.Candidate(rid, score) for rid, score in
               [("en_answer", 0.80), ("zh_x", 0.78), ("zh_y", 0.77), ("zh_a", 0.76), ("zh_b", 0.75)]],
        sparse=[services.index.Candidate("zh_a", 9.0), services.index.Candidate("zh_b", 8.5)],
        language=query_language, worded=worded,
    )


LANGS = {"en_answer": "en", "zh_x": "zh", "zh_y": "zh", "zh_a": "zh", "zh_b": "zh"}


def test_a_record_in_the_other_language_gets_a_stand_in_for_the_sparse_vote_it_cannot_get():
    plain = services._rrf([Scored(c.record_id, c.score) for c in _cross_language_case().dense],
                          [Scored("zh_a", 9.0), Scored("zh_b", 8.5)])
    assert plain[0].record_id == "zh_a"  # without the stand-in, the pair both sides list wins
    ranked = services.rank_candidates(_cross_language_case(), LANGS)
    first = ranked[0]
    assert (first.record_id, first.dense_rank, first.sparse_rank, first.stand_in_rank) == ("en_answer", 1, None, 1 + ranking.STAND_IN_OFFSET)
    assert services._trace_entry(first)["standInRank"] == 1 + ranking.STAND_IN_OFFSET
    assert all(r.stand_in_rank is None for r in ranked if r.record_id != "en_answer")  # same language: no stand-in


def test_no_stand_in_for_a_record_in_the_querys_language_or_for_a_query_of_identifiers():
    ranked = services.rank_candidates(_cross_language_case(query_language="en"), LANGS)
    assert all(r.stand_in_rank is None for r in ranked if r.record_id == "en_answer")
    ranked = services.rank_candidates(_cross_language_case(worded=False), LANGS)
    assert ranked[0].record_id == "zh_a" and all(r.stand_in_rank is None for r in ranked)


@pytest.mark.parametrize(("query", "worded"), [
    ("15672", False), ("PSP-77120", False), ("ADR-007", False),
    ("what does ADR-007 say", True), ("前端要兼容哪些浏览器版本", True),
])
def test_a_query_of_identifiers_has_no_language(query, worded):
    assert ranking.worded(query) is worded


# ------------------------------------------------------------ pseudo-translation
def test_a_chinese_question_is_glossed_in_english_without_its_question_words():
    text = bilingual.translate("用户对海鲜过敏吗", to="en")
    words = text.split()
    assert "seafood" in words and "user" in words
    assert not any(w in text for w in ("吗", "?"))


def test_an_english_question_gets_chinese_words_and_keeps_identifiers_whole():
    text = bilingual.translate("which database does ledger-api use, see scripts/check.sh", to="zh")
    assert "数据库" in text.split()
    assert "ledger-api" in text.split() and "scripts/check.sh" in text.split()
    assert "which" not in text


def test_a_word_the_dictionary_lacks_is_not_glossed_character_by_character():
    assert bilingual.translate("波尔图", to="en") == ""  # a name: no gloss rather than "wave thus diagram"


# ------------------------------------------------------- dictionary compounds
def test_a_dictionary_compound_across_jiebas_cut_is_found_with_its_span():
    # jieba cuts 结婚 | 纪念日 and 阿尔坎 | 塔拉; CC-CEDICT lists both compounds
    assert (5, 10, "结婚纪念日") in bilingual.compounds("用户和伴侣结婚纪念日是怎么过的")
    assert "阿尔坎塔拉" in [w for _, _, w in bilingual.compounds("去看阿尔坎塔拉的一套两居室")]


def test_compounds_leave_out_question_words_short_words_and_words_jieba_already_gives():
    assert not [w for _, _, w in bilingual.compounds("周报要什么时候交")]  # 什么时候 asks
    assert all(len(w) >= bilingual.COMPOUND_MIN for _, _, w in bilingual.compounds("图层面板很卡，数据库表和字段"))
    assert bilingual.compounds("数据库") == ()  # one piece of jieba's cut: its own words come from cut_for_search


def test_a_compound_is_an_index_token_and_carries_its_translation():
    tokens = sparse.tokenize("用户和伴侣结婚纪念日是怎么过的")
    assert "结婚纪念日" in tokens
    assert "anniversari" in sparse.expansions(tokens)  # neither 结婚 nor 纪念日 translates to it
    assert "anniversari" not in sparse.expansions([t for t in tokens if t != "结婚纪念日"])
    assert "anniversary" in bilingual.translate("用户和伴侣结婚纪念日是怎么过的", to="en").split()


def test_a_compound_counts_for_each_of_its_words_in_the_coverage():
    words = ranking.query_words("结婚纪念日怎么过的")
    record = ranking.record_terms("The user and Ana celebrated their tenth wedding anniversary in Cascais.")
    assert ranking.coverage(words, record) == pytest.approx(1.0)


# --------------------------------------------------------------- query words
def test_query_words_drop_question_words_and_carry_translations():
    words = ranking.query_words("用户对海鲜过敏吗")
    assert any("海鲜" in w and "seafood" in w for w in words)
    assert not any("吗" in w for w in words)
    assert not ranking.query_words("哪个是什么")  # only question words


def test_coverage_counts_a_word_met_through_its_translation():
    words = ranking.query_words("用户对海鲜过敏吗")
    full = ranking.coverage(words, ranking.record_terms("The user is allergic to seafood."))
    part = ranking.coverage(words, ranking.record_terms("The user is allergic to peanuts."))
    assert full == pytest.approx(1.0)
    assert 0.0 < part < full
    assert ranking.coverage([], ranking.record_terms("anything")) == 0.0


# ---------------------------------------------------------- language cache
def test_languages_are_remembered_per_profile_and_bounded(monkeypatch):
    monkeypatch.setattr(ranking, "LANGUAGE_CACHE_SIZE", 2)
    assert ranking.remember_languages(1, {"a": "用户喜欢喝茶", "b": "The user drinks tea."}) == {"a": "zh", "b": "en"}
    assert ranking.known_languages(1, ["a", "b", "c"]) == ({"a": "zh", "b": "en"}, ["c"])
    assert ranking.known_languages(2, ["a"]) == ({}, ["a"])  # another profile's record
    ranking.remember_languages(1, {"c": "tea"})
    assert ranking.known_languages(1, ["a", "b", "c"]) == ({"b": "en", "c": "en"}, ["a"])  # the oldest went
    ranking.remember_languages(1, {"b": "用户的茶杯"})  # the row was read again after an edit
    assert ranking.known_languages(1, ["b"])[0] == {"b": "zh"}


def test_a_nearby_form_stands_in_only_for_long_words_the_dictionary_lacks():
    assert "胃镜" in bilingual.en_heads("gastroscopi")  # stem of "gastroscopy"; the entry has "gastroscope"
    assert "前端" in bilingual.en_heads("frontend")  # "front end" written as one word
    assert "前端" in bilingual.en_heads("front-end")
    assert bilingual.en_heads("databas") == bilingual.maps()[1]["databas"]  # its own entry first
    assert bilingual.en_heads("lagg") == []  # short: "lag" is another word
    assert bilingual.en_heads("qx-5521") == []


def test_coverage_meets_a_chinese_record_through_a_nearby_english_form():
    words = ranking.query_words("what did the gastroscopy show")
    assert ranking.coverage(words, ranking.record_terms("用户去医院做了胃镜，结果是轻度胃炎。")) > 0
