"""Shared fixtures: isolated data dir per test, profiles (alice, bob), tokens and an API client."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from apps.accounts.models import Profile
from apps.accounts.services import profile_create, token_create


@pytest.fixture(autouse=True)
def _isolated_data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    settings.DATA_DIR.mkdir()
    yield


@pytest.fixture(autouse=True)
def _recall_hit_files_written_in_the_test(request, monkeypatch):
    """A recall leaves hit-stats.json to a background writer thread, which would read the
    database outside the test's transaction after the test: only tests marked
    `background_hit_stats` keep it; the others rewrite the file on commit, like any change."""
    from apps.hitstats import services

    monkeypatch.setattr(services, "RECALL_FILE_IN_BACKGROUND", request.node.get_closest_marker("background_hit_stats") is not None)
    # A writer left waiting by an earlier test would write this test's file whenever its own
    # wait ends: each test starts and ends with none (what a test left pending is dropped:
    # its database and data folder may already be gone).
    services.hit_stats_writer_stop(discard=True)
    yield
    services.hit_stats_writer_stop(discard=True)


@pytest.fixture
def private_index(settings, tmp_path):
    """An embedded Qdrant folder of this test's own: what it indexes no other test sees."""
    from apps.search import index

    settings.QDRANT_PATH = str(tmp_path / "qdrant")
    settings.QDRANT_EDGE_PATH = str(tmp_path / "index-edge")
    settings.QDRANT_URL = ""
    index.close_clients()
    yield
    index.close_clients()


@dataclass
class Api:
    """A JSON API client holding one token."""

    client: Client
    token: str
    profile: Profile
    role: str

    def headers(self, session: str = "", turn: str = "", cwd: str = "") -> dict[str, str]:
        headers = {"HTTP_AUTHORIZATION": f"Bearer {self.token}"}
        if session:
            headers["HTTP_X_MEMORY_SESSION"] = session
        if turn:
            headers["HTTP_X_MEMORY_TURN"] = turn
        if cwd:
            headers["HTTP_X_MEMORY_CWD"] = cwd
        return headers

    def post(self, path: str, body: Any, *, session: str = "", turn: str = "", cwd: str = "") -> tuple[int, Any]:
        raw = body if isinstance(body, (bytes, str)) else json.dumps(body)
        response = self.client.post(path, data=raw, content_type="application/json", **self.headers(session, turn, cwd))
        return response.status_code, response.json()

    def get(self, path: str) -> tuple[int, Any]:
        response = self.client.get(path, **self.headers())
        return response.status_code, response.json()

    def call(self, tool: str, *, session: str = "", turn: str = "", cwd: str = "", **params: Any) -> tuple[int, Any]:
        return self.post(f"/api/v1/tools/{tool}", params, session=session, turn=turn, cwd=cwd)

    def ok(self, tool: str, **kwargs: Any) -> Any:
        status, body = self.call(tool, **kwargs)
        assert status == 200, (status, body)
        return body


@pytest.fixture
def make_profile(db):
    def make(slug: str, mode: str = "code") -> Profile:
        return profile_create(slug=slug, mode=mode)

    return make


@pytest.fixture
def make_api(db):
    def make(profile: Profile, role: str = "worker") -> Api:
        _, plain = token_create(profile=profile, role=role)
        return Api(client=Client(), token=plain, profile=profile, role=role)

    return make


@pytest.fixture
def alice(make_profile) -> Profile:
    return make_profile("alice")


@pytest.fixture
def bob(make_profile) -> Profile:
    return make_profile("bob")


@pytest.fixture
def agent_api(alice, make_api) -> Api:
    return make_api(alice, "agent")


@pytest.fixture
def worker_api(alice, make_api) -> Api:
    return make_api(alice, "worker")


@pytest.fixture
def admin_api(alice, make_api) -> Api:
    return make_api(alice, "admin")
