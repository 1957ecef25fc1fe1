"""Memory text is untrusted everywhere: scripts and javascript: links in records, scene
blocks, persona entries, skills and L0 rows never reach the page as active HTML."""

from __future__ import annotations

from django.utils import timezone

from apps.dashboard.templatetags.dashboard import render_markdown
from apps.persona.models import PersonaProposal, PersonaVersion

PAYLOAD = '<script>alert("x")</script><img src=x onerror=alert(1)><a href="javascript:alert(2)">click</a>'


def _assert_inert(body: str) -> None:
    assert '<script>alert("x")' not in body
    assert "<img src=x onerror" not in body and "onerror=alert" not in body.replace("onerror=alert(1)&gt;", "")
    assert 'href="javascript:' not in body


def test_record_content_is_escaped_in_list_and_page(login, alice, make_record):
    record = make_record(alice, PAYLOAD)
    client = login("alice")
    for url in ("/p/alice/records/", f"/p/alice/records/{record.record_id}/", "/p/alice/hits/"):
        body = client.get(url).content.decode()
        _assert_inert(body)
    assert "&lt;script&gt;" in client.get(f"/p/alice/records/{record.record_id}/").content.decode()


def test_record_metadata_and_scene_name_are_escaped(login, alice, make_record):
    record = make_record(alice, "harmless content here", metadata={"scope": "self", "project": "<script>alert(3)</script>"},
                         scene_name='<img src=x onerror=alert(1)>')
    body = login("alice").get(f"/p/alice/records/{record.record_id}/").content.decode()
    assert "<script>alert(3)</script>" not in body
    assert '<img src=x onerror' not in body


def test_scene_markdown_is_sanitized(login, alice, make_block):
    block = make_block(alice, "xss.md", "# Title\n\n" + PAYLOAD + "\n\n[link](javascript:alert(4)) and [ok](https://example.org)")
    body = login("alice").get(f"/p/alice/scenes/{block.pk}/").content.decode()
    _assert_inert(body)
    rendered = body.split('<div class="markdown">')[1].split("</section>")[0]
    assert "<h1>Title</h1>" in rendered
    assert 'href="https://example.org"' in rendered
    assert "javascript:" not in rendered


def test_markdown_filter_drops_active_content():
    html = render_markdown("**bold** <script>alert(1)</script> <iframe src=x></iframe> [a](javascript:alert(1)) <a href='data:text/html,x'>d</a> <span onclick=alert(1)>s</span>")
    assert "<strong>bold</strong>" in html
    for bad in ("<script", "<iframe", "javascript:", "data:text", "onclick"):
        assert bad not in html


def test_persona_entries_are_escaped(login, alice):
    PersonaVersion.objects.create(profile=alice, number=1, entries=[PAYLOAD], action="import")
    PersonaProposal.objects.create(profile=alice, entries=[{"text": PAYLOAD + " new", "origin": PAYLOAD}], base=[PAYLOAD], base_version=1)
    body = login("alice").get("/p/alice/persona/").content.decode()
    _assert_inert(body)


def test_l0_rows_are_escaped(login, alice):
    from apps.conversations.services import l0_append

    l0_append(profile=alice, rows=[{"id": "m1", "role": "user", "content": PAYLOAD, "timestamp": 1, "sessionKey": "<script>s</script>", "cwd": "/tmp"}])
    client = login("alice")
    body = client.get("/p/alice/conversations/").content.decode()
    assert "<script>s</script>" not in body
    body = client.get("/p/alice/conversations/session/?session=%3Cscript%3Es%3C/script%3E").content.decode()
    _assert_inert(body)
    assert "&lt;script&gt;alert" in body


def test_job_error_and_transcript_are_escaped(login, alice):
    from apps.pipeline.models import JobRun

    run = JobRun.objects.create(profile=alice, kind="l1_extract", driver="llm", status="failed", trigger_reason=PAYLOAD,
                                error=PAYLOAD, transcript=[{"role": "assistant", "content": PAYLOAD}], finished_at=timezone.now())
    body = login("alice").get(f"/p/alice/jobs/{run.pk}/").content.decode()
    _assert_inert(body)
