"""Language-aware ranking rules (apps/search/ranking.py) and the query pseudo-translation
(bilingual.translate): pure functions, no index."""

from __future__ import annotations

import pytest

from apps.search import bilingual, ranking, services
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
