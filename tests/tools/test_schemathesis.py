"""Property-based run over every operation the published OpenAPI document lists
(Schemathesis, in process through the WSGI app, admin token).

Fails on any 5xx, any answer that breaks its documented schema (the error shape
included), a 405 without `Allow`, a schema-violating request that is accepted, and a
schema-valid request that is refused — except for the rules listed in SEMANTIC_RULES,
which JSON Schema cannot state (each is a 400 `invalid_params` naming the field, and the
field's description says the rule). The operations come from the document, so tools
added later are covered without touching this file. Bounded: 25 examples per operation
and phase, derandomized so that CI runs the same cases every time.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from apps.accounts.services import profile_create, token_create
from apps.pipeline import services as pipeline_services

EXAMPLES = 25

# operation -> the rule a schema-valid value can still break (docs/api.md lists them).
SEMANTIC_RULES = {
    "POST /api/v1/tools/l1_commit": "a subagent cursor is the JSON text of a read_l0_increment nextCursor; record content passes the value check",
    "POST /api/v1/tools/l1_fix": "newContent is required for rewrite only and must pass the value check; evidence length is a profile setting",
    "POST /api/v1/tools/l2_commit": "the cursor is a change id, its digits, or {lastRecordId} as an object or JSON text; write actions need their own fields",
    "POST /api/v1/tools/read_l1_increment": "the cursor is a change id, its digits, or {lastRecordId} as an object or JSON text",
    "POST /api/v1/tools/l2_archive_guide": "a block filename is letters/digits of any script, '_', '.', '-', ending in .md (no Unicode classes in Python's regex)",
    "POST /api/v1/tools/l3_commit": "the cursor is an ISO 8601 time",
    "POST /api/v1/tools/l3_edit": "content / target are required by action",
    "POST /api/v1/tools/read_l0_increment": "the cursor is the JSON text (or object) of a v2 or legacy L0 cursor",
    "POST /api/v1/tools/read_skill_feed_increment": "the cursor is an ISO 8601 time or {recordedAt, seen}",
    "POST /api/v1/tools/skill_view": "a skill name is [a-z0-9][a-z0-9-]{0,63}, while a path-like name is forbidden (403), not invalid",
    "POST /api/v1/tools/skill_manage": "the fields each action takes and requires; SKILL.md front matter",
}
ACCEPTED = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"]  # 5xx is failed by not_a_server_error

CONFIG = SchemathesisConfig.from_dict({
    "generation": {"mode": "all", "max-examples": EXAMPLES},
    "checks": {"enabled": True},
    "operations": [
        {"include-name": name, "checks": {"positive_data_acceptance": {"expected-statuses": [*ACCEPTED, "400"]}}}
        for name in SEMANTIC_RULES
    ],
})

schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application(), config=CONFIG)

pytestmark = pytest.mark.slow


@pytest.fixture
def _keep_test_connection():
    # The WSGI handler closes the database connection at the end of each request; under
    # the test transaction that would close it for good (PostgreSQL). Django's own test
    # client disconnects the same signal handlers.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def admin_token(db, _keep_test_connection, monkeypatch):
    profile = profile_create(slug="alice", mode="code")
    # memory_ingest runs its extraction in a thread of the web process and waits for it;
    # under the test transaction that thread cannot see the run, so every example would
    # wait the full minute and the thread would outlive the test. The contract run checks
    # answers, not extraction (tests/mcp does that): answer `pending` at once, run nothing.
    profile.settings = {"mcp.ingestWaitSeconds": 0}
    profile.save(update_fields=["settings"])
    monkeypatch.setattr(pipeline_services, "_execute_here", lambda run_id: None)
    _, plain = token_create(profile=profile, role="admin")
    return plain


def test_the_semantic_exceptions_name_operations_that_exist():
    names = {f"{op.method.upper()} {op.path}" for op in (r.ok() for r in schema.get_all_operations())}
    assert set(SEMANTIC_RULES) <= names, set(SEMANTIC_RULES) - names


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
def test_every_operation_keeps_the_contract(case, admin_token):
    case.call_and_validate(headers={"Authorization": f"Bearer {admin_token}"})
