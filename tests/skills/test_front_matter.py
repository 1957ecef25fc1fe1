"""SPEC §1.7 front matter rules, checked through skill_manage create/edit/patch."""

from __future__ import annotations

import pytest

from apps.accounts.models import AuditEvent
from tests.skills.helpers import assert_error, skill_dir, skill_md, snapshot

BODY = "# Title\n\n## Steps\n1. do it\n"


def _create(api, content, name="deploy"):
    return api.call("skill_manage", action="create", name=name, category="devops", content=content)


@pytest.mark.parametrize(
    ("content", "field", "fragment"),
    [
        ("name: deploy\ndescription: x\n---\n" + BODY, "content", "must start with a '---' line"),
        ("---\nname: deploy\ndescription: x\n" + BODY, "content", "not closed"),
        ("---\nname: deploy\ndescription: [unclosed\n---\n" + BODY, "content.front_matter", "not valid YAML"),
        ("---\n- a list\n---\n" + BODY, "content.front_matter", "must be a YAML mapping"),
        ("---\nname: deploy\ndescription: x\nauthor: me\n---\n" + BODY, "content.front_matter.author", "unknown key"),
        ("---\nname: deploy\ndescription: x\nrelated-skills: [a]\n---\n" + BODY, "content.front_matter.related-skills", "allowed keys"),
        ("---\ndescription: x\n---\n" + BODY, "content.front_matter.name", "is required"),
        ("---\nname: deploy\n---\n" + BODY, "content.front_matter.description", "is required"),
        ("---\nname: deploy\ndescription:\n---\n" + BODY, "content.front_matter.description", "is required"),
        ("---\nname: deploy\ndescription: '   '\n---\n" + BODY, "content.front_matter.description", "must not be empty"),
        ("---\nname: deploy\ndescription: [a, b]\n---\n" + BODY, "content.front_matter.description", "must be a string"),
        ("---\nname: other\ndescription: x\n---\n" + BODY, "content.front_matter.name", "must equal the skill's folder name"),
        ("---\nname: 42\ndescription: x\n---\n" + BODY, "content.front_matter.name", "must be a string"),
        ("---\nname: deploy\ndescription: x\nversion: true\n---\n" + BODY, "content.front_matter.version", "string or a number"),
        ("---\nname: deploy\ndescription: x\nversion: [1]\n---\n" + BODY, "content.front_matter.version", "string or a number"),
        ("---\nname: deploy\ndescription: x\ntags: python\n---\n" + BODY, "content.front_matter.tags", "must be a list"),
        ("---\nname: deploy\ndescription: x\ntags: [ok, 3]\n---\n" + BODY, "content.front_matter.tags.1", "must be a string"),
        ("---\nname: deploy\ndescription: x\ntags: [a, a]\n---\n" + BODY, "content.front_matter.tags.1", "listed twice"),
        ("---\nname: deploy\ndescription: x\ntags: ['']\n---\n" + BODY, "content.front_matter.tags.0", "must not be empty"),
        ("---\nname: deploy\ndescription: x\ntags: [ok, \"two\\u2028lines\"]\n---\n" + BODY, "content.front_matter.tags.1", "one line"),
        ("---\nname: deploy\ndescription: x\nversion: \"1.0\\x85beta\"\n---\n" + BODY, "content.front_matter.version", "one non-empty line"),
        ("---\nname: deploy\ndescription: x\nrelated_skills: [Bad_Name]\n---\n" + BODY, "content.front_matter.related_skills.0", "must match"),
        ("---\nname: deploy\ndescription: x\nrelated_skills: other\n---\n" + BODY, "content.front_matter.related_skills", "must be a list"),
        ("---\nname: deploy\nname: deploy\ndescription: x\n---\n" + BODY, "content.front_matter", "duplicate key"),
        ("---\nname: deploy\ndescription: x\n---\n  \n", "content", "no body"),
    ],
)
def test_malformed_front_matter_is_invalid_params_naming_the_problem(agent_api, content, field, fragment):
    before = snapshot(agent_api.profile)
    error = assert_error(_create(agent_api, content), 400, "invalid_params")
    assert error["details"][0]["field"] == field
    assert fragment in error["message"]
    assert snapshot(agent_api.profile) == before
    assert not AuditEvent.objects.filter(target_type="skill").exists()


def test_description_of_1024_chars_is_accepted_and_1025_refused(agent_api):
    assert _create(agent_api, skill_md("deploy", description="d" * 1024))[0] == 200
    error = assert_error(_create(agent_api, skill_md("other", description="d" * 1025), name="other"), 400, "invalid_params")
    assert error["details"][0]["field"] == "content.front_matter.description"
    assert "1025" in error["message"]


def test_all_optional_keys_are_accepted_and_listed(agent_api):
    extra = "version: 1.2.0\ntags: [deploy, ops]\nrelated_skills: [rollback, record-memories]\n"
    assert _create(agent_api, skill_md("deploy", extra=extra))[0] == 200
    listed = agent_api.ok("skill_manage", action="list", category="devops")["skills"]
    assert listed == [
        {
            "name": "deploy", "category": "devops", "description": "Deploy the thing safely", "version": "1.2.0",
            "tags": ["deploy", "ops"], "related_skills": ["rollback", "record-memories"], "pinned": False,
            "bundled": False, "files": 0, "updatedAt": listed[0]["updatedAt"],
        }
    ]


def test_crlf_line_endings_are_understood(agent_api):
    content = "---\r\nname: deploy\r\ndescription: windows text\r\n---\r\n# Deploy\r\n"
    assert _create(agent_api, content)[0] == 200
    assert (skill_dir(agent_api.profile, "devops", "deploy") / "SKILL.md").read_bytes() == content.encode()


def test_edit_validates_front_matter_and_keeps_old_content_on_failure(agent_api, create_skill):
    create_skill(agent_api)
    before = snapshot(agent_api.profile)
    error = assert_error(
        agent_api.call("skill_manage", action="edit", name="deploy", content=skill_md("renamed")), 400, "invalid_params"
    )
    assert error["details"][0]["field"] == "content.front_matter.name"
    assert snapshot(agent_api.profile) == before


def test_patch_that_breaks_front_matter_is_refused(agent_api, create_skill):
    create_skill(agent_api)
    before = snapshot(agent_api.profile)
    error = assert_error(
        agent_api.call("skill_manage", action="patch", name="deploy", old_string="description: Deploy the thing safely\n", new_string=""),
        400, "invalid_params",
    )
    assert error["details"][0]["field"] == "new_string.front_matter.description"
    assert snapshot(agent_api.profile) == before
