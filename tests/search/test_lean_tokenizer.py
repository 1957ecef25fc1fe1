"""The lean tokenizer (apps/search/unigram.py) encodes exactly as the `tokenizers`
Tokenizer fastembed loads for the local model, and the model loads it by default, with
the `tokenizers` one as the fallback. The whole corpus: bench/tokenizer_parity.py."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
from fastembed.common.preprocessor_utils import load_tokenizer
from tokenizers import Tokenizer

from apps.search import embedding, model_build, unigram

SAMPLE = Path(__file__).parent / "data" / "tokenizer_sample.json"


@pytest.fixture(scope="module")
def folder() -> Path:
    embedding.get_model()  # a build from before the lean tokenizer gets it on this first load
    return embedding.local_model_dir()


@pytest.fixture(scope="module")
def reference(folder):
    tok, _ = load_tokenizer(folder)
    return tok


@pytest.fixture(scope="module")
def lean(folder):
    return unigram.load(folder / model_build.LEAN_TOKENIZER)


def _sample() -> list[dict[str, str]]:
    return json.loads(SAMPLE.read_text())


def test_the_committed_sample_covers_the_corpus_categories():
    kinds = {item["kind"] for item in _sample()}
    assert {"records", "queries", "yaml", "calibration", "edge", "code-line", "code-file", "markdown-paragraph",
            "repeats", "random-unicode"} <= kinds
    assert len(_sample()) >= 700


def test_same_ids_and_masks_as_tokenizers_on_the_committed_sample(reference, lean):
    texts = [item["text"] for item in _sample()]
    assert unigram.compare(reference, lean, texts) == []
    # ... and in padded batches, as fastembed sends several texts at once.
    batches = [texts[i:i + 64] for i in range(0, len(texts), 64)]
    assert unigram.compare(reference, lean, batches, batched=True) == []


def test_long_texts_truncate_at_512_with_the_end_token(reference, lean):
    for text in ("word " * 2000, "汉" * 3000, "<s>" * 600, "x" * 3000):
        ids = lean.encode(text).ids
        assert len(ids) == 512 and ids[0] == lean.bos_id and ids[-1] == lean.eos_id
        assert ids == reference.encode(text).ids


def test_a_padded_batch_pads_on_the_right_with_a_zero_mask(lean):
    short, long_ = lean.encode_batch(["hi", "a much longer text than the first"])
    assert len(short) == len(long_)
    n = short.attention_mask.count(1)
    assert short.ids[n:] == [lean.pad_id] * (len(short) - n) and set(short.attention_mask[n:]) == {0}
    assert set(long_.attention_mask) == {1}


def test_exact_ties_are_broken_as_tokenizers_breaks_them(reference, lean):
    """Two segmentations of the same pieces in another order score the same up to the
    last bits of the scores: those must be the ones `tokenizers` holds."""
    text = "haha9999999999999999999999999!!!"
    assert lean.encode(text).ids == reference.encode(text).ids
    # The scores as tokenizer.json spells them (a quarter of them one ulp away from what
    # `tokenizers` reads) break this tie the other way.
    spelled = json.loads((embedding.local_model_dir() / "tokenizer.json").read_text())["model"]["vocab"]
    from array import array

    naive = unigram.LeanTokenizer([p for p, _ in spelled], array("d", [s for _, s in spelled]), lean.meta)
    assert naive.encode(text).ids != reference.encode(text).ids


def test_characters_of_newer_unicode_stay_outside_nfkc_as_tokenizers_leaves_them(reference, lean):
    # U+1FBF0 (SEGMENTED DIGIT ZERO, Unicode 13) is NFKC "0" for Python, unknown to tokenizers.
    assert 0x1FBF0 in lean.meta["protected"]
    text = "\U0001fbf0 \U0001fbf1 ㋿"
    assert lean.encode(text).ids == reference.encode(text).ids
    unprotected = unigram.LeanTokenizer(list(lean._ids), lean._scores, {**lean.meta, "protected": []})
    assert unprotected.encode(text).ids != reference.encode(text).ids


@pytest.mark.slow
def test_the_model_loads_the_lean_tokenizer_and_embeds_exactly_as_with_tokenizers(reference):
    loaded = embedding.get_model()
    inner = loaded.model.model
    assert isinstance(inner.tokenizer, unigram.LeanTokenizer)
    lean = inner.tokenizer
    sample = _sample()
    texts = [item["text"] for item in sample if item["kind"] in ("records", "queries")][::3]
    texts += [item["text"] for item in sample if item["kind"] == "edge" and len(item["text"]) < 300][:20]
    texts.append("word " * 2000)  # truncated at 512
    embedding.cache_clear()
    with_lean = embedding.embed(texts, kind=embedding.PASSAGE)
    batched_lean = np.asarray(list(loaded.model.embed(texts, batch_size=32)))
    try:
        inner.tokenizer = reference
        embedding.cache_clear()
        with_tokenizers = embedding.embed(texts, kind=embedding.PASSAGE)
        batched_tokenizers = np.asarray(list(loaded.model.embed(texts, batch_size=32)))
    finally:
        inner.tokenizer = lean
        embedding.cache_clear()
    np.testing.assert_allclose(with_lean, with_tokenizers, atol=1e-6)
    np.testing.assert_allclose(batched_lean, batched_tokenizers, atol=1e-6)


def _copy_folder(src: Path, dst: Path, *, tokenizer_json: str | None = None) -> Path:
    """A model folder of links to the built files (tokenizer.json rewritten if given)."""
    dst.mkdir()
    for path in src.iterdir():
        if path.name not in ("tokenizer.json", model_build.LEAN_TOKENIZER):
            (dst / path.name).symlink_to(path)
    (dst / "tokenizer.json").write_text(tokenizer_json if tokenizer_json is not None
                                        else (src / "tokenizer.json").read_text())
    return dst


@pytest.mark.slow
def test_a_missing_or_damaged_lean_file_is_derived_again_identically(folder, tmp_path):
    copy = _copy_folder(folder, tmp_path / "m")
    lean = model_build.lean_tokenizer(copy)  # missing: derived and written
    assert isinstance(lean, unigram.LeanTokenizer)
    written = (copy / model_build.LEAN_TOKENIZER).read_bytes()
    assert written == (folder / model_build.LEAN_TOKENIZER).read_bytes()  # deterministic
    damaged = bytearray(written)
    damaged[-100] ^= 0xFF
    (copy / model_build.LEAN_TOKENIZER).write_bytes(bytes(damaged))
    with pytest.raises(unigram.LeanFileError, match="damaged"):
        unigram.load(copy / model_build.LEAN_TOKENIZER)
    assert isinstance(model_build.lean_tokenizer(copy), unigram.LeanTokenizer)
    assert (copy / model_build.LEAN_TOKENIZER).read_bytes() == written


@pytest.mark.slow
def test_a_folder_that_cannot_be_written_still_gets_the_lean_tokenizer_in_memory(folder, tmp_path, caplog):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    with caplog.at_level(logging.WARNING, logger="apps.search.unigram"):
        lean = unigram.convert(folder, blocked / model_build.LEAN_TOKENIZER, must_write=False)
    assert lean.encode("hello world").ids == unigram.load(folder / model_build.LEAN_TOKENIZER).encode("hello world").ids
    assert any("this process only" in r.getMessage() for r in caplog.records)


def test_a_lean_file_of_another_tokenizer_json_or_tokenizers_version_is_not_used(folder):
    path = folder / model_build.LEAN_TOKENIZER
    with pytest.raises(unigram.LeanFileError, match=r"another tokenizer\.json"):
        unigram.load(path, source_sha256="0" * 64)
    with pytest.raises(unigram.LeanFileError, match="checked against tokenizers"):
        unigram.load(path, tokenizers="0.0.1")
    assert unigram.load(path, source_sha256=model_build._sha256(folder / "tokenizer.json"),
                        tokenizers=unigram.tokenizers_version()).meta["unicodeVersion"]


@pytest.mark.slow
def test_an_unsupported_tokenizer_falls_back_to_tokenizers_with_one_warning(folder, tmp_path, monkeypatch, caplog):
    spec = json.loads((folder / "tokenizer.json").read_text())
    spec["normalizer"]["normalizers"].append({"type": "Lowercase"})
    copy = _copy_folder(folder, tmp_path / "m", tokenizer_json=json.dumps(spec))
    monkeypatch.setattr(model_build, "_fallback_warned", False)
    with caplog.at_level(logging.WARNING, logger="apps.search.model_build"):
        first = model_build.load_fastembed(copy, threads=1)
        second = model_build.load_fastembed(copy, threads=1)
    warnings = [r for r in caplog.records if "lean tokenizer is unavailable" in r.getMessage()]
    assert len(warnings) == 1 and "Lowercase" in warnings[0].getMessage()
    for embedder in (first, second):
        assert isinstance(embedder.model.tokenizer, Tokenizer)
    vec = next(iter(first.embed(["Hello World"])))
    assert vec.shape == (384,)
    assert not (copy / model_build.LEAN_TOKENIZER).exists()


def test_the_tokenizers_setting_loads_the_tokenizers_tokenizer(folder):
    embedder = model_build.load_fastembed(folder, threads=1, tokenizer=model_build.TOKENIZER_TOKENIZERS)
    assert isinstance(embedder.model.tokenizer, Tokenizer)


def test_a_missing_derived_file_does_not_invalidate_the_build_but_a_missing_model_file_does(tmp_path):
    (tmp_path / "model.onnx").write_bytes(b"x")
    manifest = {"files": {"model.onnx": model_build._sha256(tmp_path / "model.onnx"), model_build.LEAN_TOKENIZER: "0" * 64}}
    assert model_build.manifest_files_ok(tmp_path, manifest, hashes=True)
    (tmp_path / model_build.LEAN_TOKENIZER).write_bytes(b"other")
    assert not model_build.manifest_files_ok(tmp_path, manifest, hashes=True)  # present: checked like the others
    (tmp_path / model_build.LEAN_TOKENIZER).unlink()
    (tmp_path / "model.onnx").unlink()
    assert not model_build.manifest_files_ok(tmp_path, manifest)


def test_the_build_lists_the_lean_tokenizer_in_its_manifest(settings):
    model_build.build(settings.EMBED_MODEL_DIR, say=lambda _: None)
    manifest = model_build.read_manifest(embedding.local_model_dir())
    assert manifest is not None
    assert model_build.LEAN_TOKENIZER in manifest["files"]
    assert model_build.manifest_files_ok(embedding.local_model_dir(), manifest, hashes=True)
