"""The overview's Export button in a real Chromium: a click downloads the zip."""

from __future__ import annotations

import zipfile

import pytest

from tests import factories
from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser


def test_export_button_downloads_the_profile_zip(browser_page, live_server, staff):
    record = factories.make_record(staff["profile"], "发布前先跑 make test")
    page = browser_page
    log_in(page, live_server, staff)
    page.goto(f"{live_server.url}/p/demo/")
    with page.expect_download() as info:
        page.get_by_role("link", name="Export").click()
    download = info.value
    assert download.suggested_filename.startswith("demo-memory-") and download.suggested_filename.endswith(".zip")
    with zipfile.ZipFile(download.path()) as archive:
        rows = b"".join(archive.read(n) for n in archive.namelist() if n.startswith("demo/memoryDB/l1/records/"))
    assert record.record_id.encode() in rows
    assert page.js_errors == []
