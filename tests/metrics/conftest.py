"""Metrics tests write records and recall them: each test gets its own embedded index, so
nothing it indexes is seen by another test (as in tests/search)."""

from __future__ import annotations

import pytest

from apps.search import index


@pytest.fixture(autouse=True)
def _private_index(settings, tmp_path):
    settings.QDRANT_PATH = str(tmp_path / "qdrant")
    settings.QDRANT_URL = ""
    index.close_clients()
    yield
    index.close_clients()
