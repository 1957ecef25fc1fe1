"""The profile's Export button: the SPEC §7 layout of this profile as a zip download.

Anyone who may open the profile may export it (they can read every part of it already);
the zip is built in a temporary file and streamed from there, so a large profile is not
held in the response's memory twice."""

from __future__ import annotations

import tempfile

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from apps.accounts.services import audit_record
from apps.dashboard.access import _get_profile_for_user, actor_for
from apps.tools.errors import ToolError
from apps.transfer.exporter import profile_export_zip


@login_required
@require_GET
def profile_export(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    handle = tempfile.TemporaryFile()  # noqa: SIM115 -- handed to the streaming response, which closes it
    try:
        counts = profile_export_zip(profile=pv.profile, handle=handle)
    except ToolError as exc:  # e.g. a profile folder that is a link: never followed
        handle.close()
        return HttpResponse(exc.message, status=exc.status, content_type="text/plain; charset=utf-8")
    audit_record(profile=pv.profile, actor=actor_for(request), tool="dashboard", action="export", target_type="profile",
                 target_id=pv.slug, before=None, after=None, note=counts)
    handle.seek(0)
    name = f"{pv.slug}-memory-{timezone.now():%Y%m%d-%H%M%S}.zip"
    return FileResponse(handle, as_attachment=True, filename=name, content_type="application/zip")
