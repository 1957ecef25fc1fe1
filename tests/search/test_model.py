"""The offline embedding model: built once (make embeddings), loaded through fastembed,
meaningful in English, Chinese and across the two."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.search import embedding, model_build
from apps.search.e5s1 import Q4_DTYPE, E5S1FormatError, dequant_blocks, read_e5s1


def _cos(a, b):
    return float(np.dot(a, b))


def _triple(anchor, similar, unrelated):
    a, s, u = embedding.embed([anchor, similar, unrelated], kind=embedding.PASSAGE)
    return _cos(a, s), _cos(a, u)


def test_model_loads_with_the_expected_dimension_and_unit_vectors():
    vecs = embedding.embed(["hello world", "你好，世界"], kind=embedding.PASSAGE)
    assert vecs.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)


def test_a_batch_of_mixed_lengths_comes_back_in_input_order_equal_to_one_by_one():
    texts = [
        "A much longer memory about how the deployment pipeline of the billing service is configured and run.",
        "短句",
        "The user prefers pytest.",
        "用户希望提交说明使用英文书写，并且每次提交只做一件事。",
        "Deploy with docker compose.",
    ]
    # Spread over the embedding threads (the texts outnumber them)...
    assert len(texts) > embedding.EMBED_WORKERS or embedding.EMBED_WORKERS == 1
    batch = embedding.embed(texts, kind=embedding.PASSAGE)
    embedding.cache_clear()
    one_by_one = np.vstack([embedding.embed([t], kind=embedding.PASSAGE) for t in texts])
    # ...each text is still a run of its own: the int8 dynamic quantisation of a shared
    # batch would scale every row by the batch's range and make the rows differ.
    assert np.array_equal(batch, one_by_one)
    assert np.array_equal(embedding.embed(list(reversed(texts)), kind=embedding.PASSAGE), one_by_one[::-1])


def test_query_vectors_come_from_the_lru_only_in_the_space_they_were_computed_in(monkeypatch):
    from dataclasses import replace

    text = "which port does the billing service listen on"
    embedding.cache_clear()
    first = embedding.embed([text], kind=embedding.QUERY)[0]
    runs: list[str] = []
    loaded = embedding.get_model()
    real_run = embedding._run_texts

    def counting(model, texts):
        runs.extend(texts)
        return real_run(model, texts)

    monkeypatch.setattr(embedding, "_run_texts", counting)
    assert np.array_equal(embedding.embed([text], kind=embedding.QUERY)[0], first)
    assert runs == []  # served by the query LRU
    # The same model text in another space (say, a new build of the model): not served.
    other = replace(loaded, space=loaded.space + "-other", model=_Shifted(loaded.model))
    monkeypatch.setattr(embedding, "_loaded", other)
    moved = embedding.embed([text], kind=embedding.QUERY)[0]
    assert runs == [f"query: {text}"]
    assert not np.allclose(moved, first)
    # Back in the first space, its own vector is still there.
    monkeypatch.setattr(embedding, "_loaded", loaded)
    assert np.array_equal(embedding.embed([text], kind=embedding.QUERY)[0], first)
    assert runs == [f"query: {text}"]


def test_the_query_lru_is_bounded_and_keeps_the_recently_used(monkeypatch):
    embedding.cache_clear()
    monkeypatch.setattr(embedding, "QUERY_CACHE_SIZE", 3)
    monkeypatch.setattr(embedding, "PASSAGE_CACHE_SIZE", 3)
    for text in ("alpha port", "beta port", "gamma port"):
        embedding.embed([text], kind=embedding.QUERY)
    embedding.embed(["alpha port"], kind=embedding.QUERY)  # used again: now the newest
    embedding.embed(["delta port"], kind=embedding.QUERY)  # evicts the least recently used
    cached = {t for t in ("alpha port", "beta port", "gamma port", "delta port") if embedding.cached(t, kind=embedding.QUERY) is not None}
    assert cached == {"alpha port", "gamma port", "delta port"}
    # Passages have an LRU of their own: a bulk of them never pushes the queries out.
    embedding.embed([f"passage {i}" for i in range(5)], kind=embedding.PASSAGE)
    assert embedding.cached("alpha port", kind=embedding.QUERY) is not None


class _Shifted:
    """A stand-in model of another space: the real model's vectors, rotated."""

    def __init__(self, model):
        self.model = model

    def embed(self, texts, batch_size=1):
        for vec in self.model.embed(texts, batch_size=batch_size):
            yield np.roll(np.asarray(vec), 1)


@pytest.mark.parametrize(
    ("anchor", "similar", "unrelated"),
    [
        ("The user prefers tea over coffee.", "They would rather drink tea than coffee.", "The CI pipeline failed on the lint step."),
        ("Restart the web server after changing the config file.", "After editing the configuration, the server must be restarted.",
         "My grandmother grows tomatoes in her garden."),
    ],
)
def test_english_similar_pair_beats_unrelated(anchor, similar, unrelated):
    sim, unrel = _triple(anchor, similar, unrelated)
    assert sim > unrel


@pytest.mark.parametrize(
    ("anchor", "similar", "unrelated"),
    [
        ("用户喜欢喝茶，不喝咖啡。", "他更爱喝茶而不是咖啡。", "持续集成在代码检查这一步失败了。"),
        ("修改配置文件后需要重启服务。", "改完配置以后要把服务重新启动。", "奶奶在院子里种了西红柿。"),
    ],
)
def test_chinese_similar_pair_beats_unrelated(anchor, similar, unrelated):
    sim, unrel = _triple(anchor, similar, unrelated)
    assert sim > unrel


@pytest.mark.parametrize(
    ("anchor", "similar", "unrelated"),
    [
        ("The user prefers tea over coffee.", "用户喜欢喝茶，不喝咖啡。", "持续集成在代码检查这一步失败了。"),
        ("修改配置文件后需要重启服务。", "Restart the service after changing the config file.", "My grandmother grows tomatoes in her garden."),
    ],
)
def test_cross_language_similar_pair_beats_unrelated_in_the_same_language(anchor, similar, unrelated):
    sim, unrel = _triple(anchor, similar, unrelated)
    assert sim > unrel


def test_query_and_passage_prefixes_change_the_embedding():
    q = embedding.embed(["database password rotation"], kind=embedding.QUERY, raw=True)[0]
    p = embedding.embed(["database password rotation"], kind=embedding.PASSAGE, raw=True)[0]
    assert 0.8 < _cos(q, p) < 0.9999


def test_build_verified_the_quantised_model_against_the_float_reference():
    manifest = model_build.read_manifest(embedding.local_model_dir())
    assert manifest is not None
    assert manifest["verification"]["floatGraphMinCosine"] >= 0.9999
    assert manifest["verification"]["minCosine"] >= model_build.MIN_COSINE
    assert model_build.manifest_files_ok(embedding.local_model_dir(), manifest, hashes=True)


def test_build_is_idempotent_when_a_valid_build_exists(settings):
    messages = []
    manifest = model_build.build(settings.EMBED_MODEL_DIR, say=messages.append)
    assert messages == [f"embedding model already built in {embedding.local_model_dir()}"]
    assert manifest["model"] == model_build.MODEL_NAME


def test_embeddings_check_command_passes(capsys):
    call_command("embeddings", "check")
    assert "ok:" in capsys.readouterr().out


def test_embeddings_check_names_the_fix_when_no_model_is_built(tmp_path):
    with pytest.raises(CommandError, match="embeddings build"):
        call_command("embeddings", "check", "--dir", str(tmp_path))


def test_missing_model_is_reported_as_unavailable(settings, tmp_path):
    settings.EMBED_MODEL_DIR = tmp_path / "nowhere"
    with pytest.raises(embedding.EmbeddingUnavailable, match="embeddings build"):
        embedding.get_model()
    assert embedding.health()["ok"] is False


def test_reader_rejects_a_file_that_is_not_e5s1(tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(E5S1FormatError, match="bad magic"):
        read_e5s1(bad)


def test_reader_rejects_a_truncated_file(tmp_path):
    bad = tmp_path / "short.bin"
    bad.write_bytes(b"E5S1" + struct.pack("<I", 1) + struct.pack("<7i", 384, 12, 12, 1536, 10, 512, 2))
    with pytest.raises(E5S1FormatError, match="truncated"):
        read_e5s1(bad)


def test_q4_blocks_dequantise_low_then_high_nibbles_minus_eight():
    block = np.zeros(1, dtype=Q4_DTYPE)
    block["d"] = 0.5
    block["qs"][0, 0] = 0x9A  # weight 0 = (0xA - 8) * 0.5 = 1.0; weight 16 = (0x9 - 8) * 0.5 = 0.5
    out = dequant_blocks(block)
    assert out.shape == (32,)
    assert out[0] == 1.0 and out[16] == 0.5 and out[1] == -4.0


def test_startup_check_warns_when_the_model_is_not_built(settings, tmp_path):
    from apps.search.apps import embedding_model_check

    assert embedding_model_check() == []
    settings.EMBED_MODEL_DIR = tmp_path / "empty"
    warnings = embedding_model_check()
    assert [w.id for w in warnings] == ["memoryweb.W001"]
    assert "embeddings build" in warnings[0].hint
