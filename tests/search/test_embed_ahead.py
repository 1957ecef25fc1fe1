"""Embedding ahead (issue 15, `l1_commit` throughput): a commit starts the model on the
texts it is about to store before its checks and writes, and the drain after commit uses
those vectors instead of running the model a second time."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from apps.search import embedding, index
from tests.search.test_commit_integration import COMMIT_TEXTS


@pytest.fixture
def model_runs(monkeypatch):
    """Every text the model runs, in order (prefixed), and the thread that ran it."""
    runs: list[tuple[str, str]] = []
    real = embedding._run_texts

    def counting(model, texts):
        runs.extend((t, threading.current_thread().name) for t in texts)
        return real(model, texts)

    monkeypatch.setattr(embedding, "_run_texts", counting)
    embedding.cache_clear()
    yield runs
    _settle()
    embedding.cache_clear()


def _settle(timeout: float = 30.0) -> None:
    """Wait until nothing is being embedded ahead."""
    deadline = time.monotonic() + timeout
    while embedding._ahead and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not embedding._ahead


def test_a_commit_embeds_its_texts_before_the_drain_runs(alice, agent_api, model_runs,
                                                         django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        body = agent_api.ok("l1_commit", source="main-agent", session="s1",
                            records=[{"content": t, "type": "work_fact"} for t in COMMIT_TEXTS])
    assert len(body["stored"]) == 10
    _settle()
    # No drain has run (its callback is held back), yet every text is embedded already.
    assert all(embedding.cached(t, kind=embedding.PASSAGE) is not None for t in COMMIT_TEXTS)
    assert index.count_points(alice) == 0
    for callback in callbacks:
        callback()
    assert index.count_points(alice) == 10
    # The drain found the vectors: the model ran once per text, not twice.
    assert sorted(t for t, _ in model_runs) == sorted(f"passage: {t}" for t in COMMIT_TEXTS)


def test_embed_waits_for_the_text_in_the_model_ahead_and_takes_over_the_rest(monkeypatch, model_runs):
    texts = ["The release train leaves every second Tuesday.", "数据库备份保留三十天。"]
    expected = embedding.embed(texts, kind=embedding.PASSAGE)
    embedding.cache_clear()
    model_runs.clear()
    started = threading.Event()
    counting = embedding._run_texts

    def slow(model, batch):  # the ahead thread is still in the model when `embed` asks
        started.set()
        time.sleep(0.3)
        return counting(model, batch)

    monkeypatch.setattr(embedding, "_run_texts", slow)
    embedding.embed_ahead(texts)
    assert started.wait(10)
    got = embedding.embed(texts, kind=embedding.PASSAGE)
    assert np.array_equal(got, expected)
    # Each text ran once: the first in the ahead thread (waited for), the second, not yet
    # started there, taken over by the caller.
    assert sorted(t for t, _ in model_runs) == sorted(f"passage: {t}" for t in texts)
    threads = {t: name for t, name in model_runs}
    assert threads[f"passage: {texts[0]}"].startswith("embed-ahead")
    assert threads[f"passage: {texts[1]}"] == threading.current_thread().name


def test_a_failed_embedding_ahead_leaves_the_texts_to_embed(monkeypatch, model_runs, caplog):
    texts = ["The staging cluster runs on four nodes.", "前端构建使用 Node 22。"]
    expected = embedding.embed(texts, kind=embedding.PASSAGE)
    embedding.cache_clear()
    model_runs.clear()
    counting = embedding._run_texts

    def broken_ahead(model, batch):
        if threading.current_thread().name.startswith("embed-ahead"):
            raise RuntimeError("onnxruntime: out of memory")
        return counting(model, batch)

    monkeypatch.setattr(embedding, "_run_texts", broken_ahead)
    embedding.embed_ahead(texts)
    _settle()
    assert "embedding ahead failed" in caplog.text
    assert all(embedding.cached(t, kind=embedding.PASSAGE) is None for t in texts)  # nothing half-stored
    before = len(model_runs)
    assert np.array_equal(embedding.embed(texts, kind=embedding.PASSAGE), expected)
    assert sorted(t for t, _ in model_runs[before:]) == sorted(f"passage: {t}" for t in texts)


def test_embedding_ahead_never_raises_and_skips_what_is_known(monkeypatch, model_runs):
    text = "Backups of the search index are kept for fourteen days."
    embedding.embed([text], kind=embedding.PASSAGE)
    model_runs.clear()
    embedding.embed_ahead([text, text])  # cached already: nothing to do
    _settle()
    assert model_runs == []
    too_many = [f"note {i}" for i in range(embedding.AHEAD_MAX_TEXTS + 1)]
    embedding.embed_ahead(too_many)  # left to the drain: the LRU would not keep them all
    assert not embedding._ahead and model_runs == []

    def unavailable():
        raise embedding.EmbeddingUnavailable("the embedding model is not built")

    monkeypatch.setattr(embedding, "get_model", unavailable)
    embedding.embed_ahead(["The CI runner caches pip downloads between jobs."])  # no error
    assert model_runs == []


def test_a_forked_child_embeds_ahead_with_threads_and_locks_of_its_own(model_runs):
    import os
    import signal

    embedding.embed(["warm the pools up"], kind=embedding.PASSAGE)
    embedding.embed_ahead(["the parent's pools have threads now"])
    _settle()
    # Another thread of the parent holds the cache lock at the moment of the fork: the child
    # inherits it locked, with no thread to release it.
    held = embedding._cache_lock
    held.acquire()
    pid = os.fork()
    if pid:
        held.release()
    if pid == 0:  # the child: its inherited pools have no threads
        code = 1
        try:
            signal.alarm(30)
            texts = ["Releases are cut on Tuesdays.", "每周二发版。"]
            embedding.embed_ahead(texts)
            vectors = embedding.embed(texts, kind=embedding.PASSAGE)
            code = 0 if vectors.shape == (2, embedding.dimension()) and not embedding._ahead else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
