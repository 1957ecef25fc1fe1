"""The overview's Export button downloads the profile in the SPEC §7 layout as a zip."""

from __future__ import annotations

import io
import json
import zipfile

from apps.accounts.models import AuditEvent


def test_overview_links_to_the_export(login, alice):
    page = login("alice").get(f"/p/{alice.slug}/").content.decode()
    assert f'href="/p/{alice.slug}/export.zip"' in page and ">Export</a>" in page


def test_export_streams_a_zip_of_the_layout(login, alice, make_record, make_block):
    record = make_record(alice, "项目用 make test 跑全部测试")
    make_block(alice, filename="构建.md", content=f"# 构建\n\n用 make test ({record.record_id})", members=[record.record_id])
    response = login("alice").get(f"/p/{alice.slug}/export.zip")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"].startswith('attachment; filename="alice-memory-')
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    names = set(archive.namelist())
    assert "alice/memoryDB/l2/scenes/构建.md" in names and "alice/USER.md" in names
    rows = [json.loads(line) for name in names if name.startswith("alice/memoryDB/l1/records/")
            for line in archive.read(name).decode().splitlines()]
    assert [r["id"] for r in rows] == [record.record_id]
    assert f"members: {record.record_id}" in archive.read("alice/memoryDB/l2/scenes/构建.md").decode()
    assert AuditEvent.objects.filter(profile=alice, action="export", actor__contains="alice").exists()


def test_export_of_a_profile_one_may_not_open_is_404(login, bob):
    assert login("alice").get(f"/p/{bob.slug}/export.zip").status_code == 404
    assert login("charlie").get(f"/p/{bob.slug}/export.zip").status_code == 404
