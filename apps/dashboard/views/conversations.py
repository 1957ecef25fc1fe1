"""L0 conversations: read-only. Rows come from the shards through the conversations app."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse

from apps.conversations.services import l0_index_refresh
from apps.dashboard import selectors
from apps.dashboard.access import _get_profile_for_user
from apps.dashboard.views.common import page


@login_required
def conversation_list(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    l0_index_refresh(profile=pv.profile)
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
    l0_index_refresh(profile=pv.profile)
    paginator = Paginator(selectors.l0_session_entries(pv.profile, session_key), 100)
    if paginator.count == 0:
        raise Http404("no such conversation")
    page_obj = paginator.get_page(request.GET.get("page"))
    page_obj.object_list = selectors.l0_rows_for(pv.profile, list(page_obj.object_list))
    highlight = request.GET.get("ref", "")
    context = {"session_key": session_key, "page_obj": page_obj, "highlight": highlight}
    return page(request, pv, "conversations", "dashboard/conversations/detail.html", context)
