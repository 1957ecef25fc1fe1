"""L0 conversations: read-only. Rows come from the shards through the conversations app."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse

from apps.conversations.services import l0_session_rows
from apps.dashboard import selectors
from apps.dashboard.access import _get_profile_for_user
from apps.dashboard.views.common import page


@login_required
def conversation_list(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    paginator = Paginator(selectors.l0_sessions(pv.profile), 50)
    page_obj = paginator.get_page(request.GET.get("page"))
    context = {"page_obj": page_obj, "shards": selectors.l0_shards(pv.profile)[:30]}
    return page(request, pv, "conversations", "dashboard/conversations/list.html", context)


@login_required
def conversation_detail(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    session_key = request.GET.get("session", "")
    if not session_key:
        raise Http404("no session given")
    rows = l0_session_rows(profile=pv.profile, session_key=session_key)
    if not rows:
        raise Http404("no such conversation")
    paginator = Paginator(rows, 100)
    page_obj = paginator.get_page(request.GET.get("page"))
    highlight = request.GET.get("ref", "")
    context = {"session_key": session_key, "page_obj": page_obj, "highlight": highlight}
    return page(request, pv, "conversations", "dashboard/conversations/detail.html", context)
