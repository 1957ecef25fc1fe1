"""Fixtures of the skill tests."""

from __future__ import annotations

import pytest

from tests.skills.helpers import skill_md


@pytest.fixture
def create_skill():
    def create(api, name: str = "deploy", category: str = "devops", content: str | None = None):
        return api.ok("skill_manage", action="create", name=name, category=category, content=content or skill_md(name))

    return create
