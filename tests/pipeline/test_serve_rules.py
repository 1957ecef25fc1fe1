"""`serve`'s rules without processes: web process shape and restart back-off."""

from __future__ import annotations

import pytest
from django.core.management import CommandError

from apps.pipeline.management.commands import serve


def test_embedded_qdrant_means_one_web_process_with_threads(settings, monkeypatch):
    settings.QDRANT_URL = ""
    monkeypatch.delenv("MEMORYWEB_WEB_THREADS", raising=False)
    assert serve._web_shape(None, None) == (1, 8)
    assert serve._web_shape(1, 4) == (1, 4)
    with pytest.raises(CommandError, match="embedded Qdrant has one owner"):
        serve._web_shape(3, None)


def test_a_qdrant_server_allows_configured_worker_processes(settings, monkeypatch):
    settings.QDRANT_URL = "http://qdrant.internal:6333"
    monkeypatch.delenv("MEMORYWEB_WEB_WORKERS", raising=False)
    assert serve._web_shape(None, None) == (2, 8)
    monkeypatch.setenv("MEMORYWEB_WEB_WORKERS", "5")
    monkeypatch.setenv("MEMORYWEB_WEB_THREADS", "3")
    assert serve._web_shape(None, None) == (5, 3)
    assert serve._web_shape(4, 2) == (4, 2)
    with pytest.raises(CommandError):
        serve._web_shape(0, None)
    with pytest.raises(CommandError):
        serve._web_shape(None, 0)


def test_restart_back_off_doubles_to_a_ceiling_and_resets_after_a_stable_run():
    child = serve.Child("beat", ["true"], {})
    now = 1000.0
    delays = []
    for _ in range(7):
        child.started_at = now  # died right after starting, every time
        delays.append(child.died(now))
        now += 1
    assert delays == [1, 2, 4, 8, 16, 30, 30]
    child.started_at = now
    now += serve.STABLE_AFTER_SECONDS + 1  # ran for over a minute: a fresh failure
    assert child.died(now) == 1
    assert child.restarts == 8
