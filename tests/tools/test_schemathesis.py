"""Property-based run of the whole published API (Schemathesis over `/api/v1/openapi.json`)."""

from __future__ import annotations

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from apps.accounts.services import profile_create, token_create

CONFIG = SchemathesisConfig.from_dict({
    "generation": {"mode": "all", "max-examples": 25},
    "checks": {
        "enabled": True,
    },
})



@pytest.fixture
def admin_token(db):
    profile = profile_create(slug="alice", mode="code")
    _, plain = token_create(profile=profile, role="admin")
    return plain


schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application(), config=CONFIG)


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
def test_every_operation_keeps_the_contract(case, admin_token):
    case.call_and_validate(headers={"Authorization": f"Bearer {admin_token}"})
