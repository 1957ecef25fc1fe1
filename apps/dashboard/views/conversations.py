"""L0 conversations: read-only. Rows come from the shards through the conversations app;
each message shows the L1 records drawn from it, and the L1 extraction cursor is marked."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse

from apps.conversations import selectors
from apps.conversations.services import l0_index_refresh
from apps.dashboard.access import _get_profile_for_user
from apps.dashboard.views.common import page
from apps.records.selectors import parse_day, project_choices, records_from_messages


@login_required
def conversation_list(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    l0_index_refresh(profile=pv.profile)
    errors: list[str] = []
    q = request.GET.get("q", "").strip()[:200]
    project = request.GET.get("project", "").strip()[:4096]
    date_from, date_to = parse_day(request.GET.get("from", ""), "from", errors), parse_day(request.GET.get("to", ""), "to", errors)
    search = None
    keys = None
    if q or project:
        search = selectors.l0_search_sessions(pv.profile, text=q, project=project, date_from=date_from, date_to=date_to)
        keys = search.session_keys
    paginator = Paginator(selectors.l0_sessions(pv.profile, date_from=date_from, date_to=date_to, session_keys=keys), 50)
    page_obj = paginator.get_page(request.GET.get("page"))
    context = {"page_obj": page_obj, "shards": selectors.l0_shards(pv.profile)[:30], "q": q, "project": project,
               "date_from": date_from, "date_to": date_to, "errors": errors, "search": search,
               "project_choices": project_choices(pv.profile)}
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
    entries = list(page_obj.object_list)
    rows = selectors.l0_rows_for(pv.profile, entries)
    produced = records_from_messages(pv.profile, session_key, [r["messageRef"] for r in rows])
    offsets = selectors.l1_cursor_offsets(pv.profile)
    marked = False
    for entry, row in zip(entries, rows, strict=True):
        row["records"] = produced.get(row["messageRef"], [])
        if offsets is not None:
            row["extracted"] = entry.shard in offsets and entry.offset < offsets[entry.shard]
            # The marker sits above the first message the L1 cursor has not passed yet.
            row["cursor_here"] = not row["extracted"] and not marked
            marked = marked or row["cursor_here"]
    page_obj.object_list = rows
    context = {"session_key": session_key, "page_obj": page_obj, "highlight": request.GET.get("ref", ""),
               "has_cursor": offsets is not None, "cursor_marked": marked}
    return page(request, pv, "conversations", "dashboard/conversations/detail.html", context)
