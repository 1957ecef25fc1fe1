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


def test_a_batch_of_mixed_lengths_comes_back_in_input_order():
    texts = [
        "A much longer memory about how the deployment pipeline of the billing service is configured and run.",
        "短句",
        "The user prefers pytest.",
        "用户希望提交说明使用英文书写，并且每次提交只做一件事。",
    ]
    # raw model vectors: the debiasing subtraction would magnify the quantisation noise
    batch = embedding.embed(texts, kind=embedding.PASSAGE, raw=True)
    embedding._cache.clear()
    one_by_one = np.vstack([embedding.embed([t], kind=embedding.PASSAGE, raw=True) for t in texts])
    # int8 dynamic quantisation scales activations per batch, so rows differ slightly
    # from single-text embeddings; each row must still be its own text's vector.
    cosines = batch @ one_by_one.T
    assert list(cosines.argmax(axis=1)) == [0, 1, 2, 3]
    assert min(cosines[i, i] for i in range(4)) > 0.98


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
