"""The services the dashboard calls: same rules, same guards, audited as the dashboard."""

from __future__ import annotations

import pytest

from apps.accounts.models import AuditEvent
from apps.skills import services
from apps.tools.errors import Conflict, Forbidden, InvalidParams, NotFound, ToolError
from tests.skills.helpers import skill_md, snapshot

ACTOR = "user:admin@example.org"


def test_dashboard_lists_by_category_views_and_pins(alice):
    services.skill_create(profile=alice, actor=ACTOR, name="deploy", category="devops", content=skill_md("deploy"), tool="dashboard")
    listed = services.skill_list(profile=alice, category="devops")
    assert [s["name"] for s in listed["skills"]] == ["deploy"]
    assert services.skill_pin(profile=alice, actor=ACTOR, name="deploy", tool="dashboard")["pinned"] is True
    view = services.skill_view(profile=alice, name="deploy")
    assert view["pinned"] is True and view["content"] == skill_md("deploy")
    with pytest.raises(Conflict):
        services.skill_delete(profile=alice, actor=ACTOR, name="deploy", tool="dashboard")
    services.skill_unpin(profile=alice, actor=ACTOR, name="deploy", tool="dashboard")
    events = AuditEvent.objects.filter(profile=alice, target_type="skill")
    assert {(e.tool, e.actor) for e in events} == {("dashboard", ACTOR)}
    assert sorted(e.action for e in events) == ["create", "pin", "unpin"]


def test_dashboard_guards_match_the_tool(alice, bob):
    services.skill_create(profile=bob, actor=ACTOR, name="bobs", category="b", content=skill_md("bobs"))
    before = snapshot(bob)
    with pytest.raises(Forbidden):
        services.skill_pin(profile=alice, actor=ACTOR, name="record-memories")
    with pytest.raises(NotFound):
        services.skill_pin(profile=alice, actor=ACTOR, name="bobs")
    with pytest.raises(NotFound):
        services.skill_view(profile=alice, name="bobs")
    with pytest.raises(Forbidden):
        services.skill_view(profile=alice, name="../bob")
    with pytest.raises(InvalidParams):
        services.skill_list(profile=alice, category="Not Valid")
    assert snapshot(bob) == before


def test_service_errors_carry_the_api_code(alice):
    with pytest.raises(ToolError) as caught:
        services.skill_view(profile=alice, name="ghost")
    assert (caught.value.code, caught.value.status) == ("not_found", 404)


def test_worker_and_admin_tokens_may_manage_skills_too(worker_api, admin_api):
    worker_api.ok("skill_manage", action="create", name="from-worker", category="review", content=skill_md("from-worker"))
    assert admin_api.ok("skill_view", name="from-worker")["category"] == "review"
    admin_api.ok("skill_manage", action="delete", name="from-worker")
