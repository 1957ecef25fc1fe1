import pytest


@pytest.fixture(autouse=True)
def _api_routes_only(settings):
    settings.ROOT_URLCONF = "tests.skills.api_urls"
