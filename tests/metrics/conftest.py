"""Metrics tests write records and recall them: each test gets its own embedded index, so
nothing it indexes is seen by another test (as in tests/search)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _private_index(private_index):
    yield
